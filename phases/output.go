package phases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-sim/arbiter/schemas"
)

// The model answers of the narrative phases. Field order is the order in which
// a strict-mode server makes the model write the fields, so it follows the
// order of thought: what happened before where it leads.
//
// Every string is bounded with maxLength so that a rambling model cannot run
// into max_tokens and cut its JSON short. The bounds are in characters (about
// 4 per token in English, fewer elsewhere): an intention is at most 400
// characters (~100 tokens); a character update at most 300 × 3 characters
// plus its location (~250 tokens with keys); a location update at most
// 300 + 600 characters (~230 tokens). An arbiter answer for n characters thus
// stays under about 300 + 250·n tokens: 1,800 for six characters, so
// resolution max_tokens of 2,048 or more never truncates a compliant answer
// in a town of six, and 4,096 covers a crowd of fifteen.

// IntentionResponse is a character's answer in phase 1: what they try to do
// this tick, in their own voice.
type IntentionResponse struct {
	Intention string `json:"intention" jsonschema:"minLength=1,maxLength=400" jsonschema_description:"What you try to do this tick, in the first person: one concrete action, 1-3 sentences."`
}

// CharacterUpdate is the arbiter's decision for one character present at its
// location (seed 004). MemoryEntry comes first: the model narrates what the
// character lived through, then derives where they are and how they feel.
type CharacterUpdate struct {
	MemoryEntry    string `json:"memory_entry" jsonschema:"minLength=1,maxLength=300" jsonschema_description:"What this character lived through this tick, as they will remember it. Never empty."`
	Location       string `json:"location" jsonschema_description:"Id of the location the character is in at the end of the tick: the current one or one connected to it."`
	InternalState  string `json:"internal_state" jsonschema:"maxLength=300" jsonschema_description:"How the character feels and what they think now, hidden from others."`
	ExternalIntent string `json:"external_intent" jsonschema:"maxLength=300" jsonschema_description:"What others can see the character doing or about to do."`
}

// LocationUpdate is the arbiter's change to its location; a nil field keeps
// the current value.
type LocationUpdate struct {
	Moment      *string `json:"moment" jsonschema:"maxLength=300" jsonschema_description:"What is happening here now, at the end of the tick; null keeps the current moment."`
	Description *string `json:"description" jsonschema:"maxLength=600" jsonschema_description:"The lasting state of the place if this tick changed it; null keeps it."`
}

// CharacterUpdates maps the id of each character present to its update.
type CharacterUpdates map[string]CharacterUpdate

// JSONSchema is the generic schema of the map: strict mode has no maps, so it
// is an object with no properties; ResolutionSchema lists the characters
// present per request, and the schema files document CharacterUpdate under
// $defs.
func (CharacterUpdates) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties()}
}

// MasterOutput is the arbiter's whole decision for one location and one tick
// (seed 004).
type MasterOutput struct {
	Tick       int              `json:"tick" jsonschema:"minimum=1" jsonschema_description:"The tick being resolved."`
	LocationID string           `json:"location_id" jsonschema_description:"Id of the location resolved."`
	Characters CharacterUpdates `json:"characters" jsonschema_description:"One entry per character present, keyed by character id, each a CharacterUpdate ($defs/CharacterUpdate); each request's schema lists exactly the ids present. Empty when no one is here."`
	Location   LocationUpdate   `json:"location"`
}

// Schemas lists the generated schema files of the phases' answers, by the
// json_schema name sent with each call.
func Schemas() []schemas.Named {
	return []schemas.Named{
		{Name: "IntentionResponse", Value: IntentionResponse{}},
		{Name: "MasterOutput", Value: MasterOutput{}, Defs: []any{CharacterUpdate{}}},
	}
}

var intentionSchema = sync.OnceValue(func() json.RawMessage {
	b, err := schemas.Generate(IntentionResponse{})
	if err != nil {
		panic(err) // a fixed type: TestSchemasStrict catches it
	}
	return b
})

// IntentionSchema is the strict schema of IntentionResponse, sent with every
// phase-1 call.
func IntentionSchema() json.RawMessage { return slices.Clone(intentionSchema()) }

// ResolutionSchema is the strict MasterOutput schema of one arbiter call,
// specialised to what the world allows: tick and location_id are single-value
// enums; characters has exactly the ids present as properties, all required,
// no others (none: it must be {}); each character's location is an enum of
// reachable (the location and its connections).
func ResolutionSchema(tick int, locationID string, present, reachable []string) (json.RawMessage, error) {
	if len(present) > 0 && len(reachable) == 0 {
		return nil, errors.New("no reachable location")
	}
	root, err := schemas.Reflect(MasterOutput{})
	if err != nil {
		return nil, err
	}
	character, err := schemas.Reflect(CharacterUpdate{})
	if err != nil {
		return nil, err
	}
	loc := prop(character, "location")
	loc.Enum = dedupe(reachable)

	t := prop(root, "tick")
	t.Enum, t.Minimum = []any{tick}, ""
	prop(root, "location_id").Enum = []any{locationID}

	chars := prop(root, "characters")
	chars.Properties = jsonschema.NewProperties()
	for _, id := range present {
		if _, dup := chars.Properties.Get(id); dup {
			return nil, fmt.Errorf("character %q listed twice", id)
		}
		chars.Properties.Set(id, character)
	}
	chars.Required, chars.Extras = slices.Clone(present), nil
	if len(present) == 0 {
		chars.Extras = map[string]any{"required": []string{}}
	}
	chars.Description = "One entry per character present, keyed by character id: exactly these ids, no others."
	b, err := schemas.Marshal(root)
	if err != nil {
		return nil, err
	}
	return b, nil
}

// ResolutionEnvelope is the schema an arbiter answer must match for the
// client to return it (llm.Request.Accept): ResolutionSchema's tick and
// location_id, but any characters object, each update then read on its own
// by ParseMasterOutput, and moment and description optional. One bad update
// thus costs the location that update, not its whole resolution.
func ResolutionEnvelope(tick int, locationID string) (json.RawMessage, error) {
	root, err := envelope(MasterOutput{})
	if err != nil {
		return nil, err
	}
	t := prop(root, "tick")
	t.Enum, t.Minimum = []any{tick}, ""
	prop(root, "location_id").Enum = []any{locationID}
	b, err := json.Marshal(root)
	if err != nil {
		return nil, fmt.Errorf("resolution envelope for %s: %w", locationID, err)
	}
	return b, nil
}

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties.Get(name)
	if !ok {
		panic("phases: schema has no property " + name) // the Go types above
	}
	return p
}

func dedupe(ids []string) []any {
	out := make([]any, 0, len(ids))
	for _, id := range ids {
		if !slices.Contains(out, any(id)) {
			out = append(out, id)
		}
	}
	return out
}

// ErrOutput is wrapped by every ParseIntention and ParseMasterOutput error.
var ErrOutput = errors.New("invalid model output")

// ParseIntention decodes a phase-1 answer: one JSON object, no unknown or
// missing field, no trailing data, valid against the IntentionResponse schema.
func ParseIntention(data []byte) (IntentionResponse, error) {
	var out IntentionResponse
	err := parse(data, intentionValidator, &out)
	return out, err
}

// ParseMasterOutput reads an arbiter answer as seed 004 allows it, in two
// steps. The envelope first: one JSON object with tick, location_id,
// characters (an object) and location, no unknown field, no trailing data;
// location's moment and description may be left out, which keeps them. An
// envelope that fails is an error wrapping ErrOutput. Then each character's
// update on its own against the CharacterUpdate schema: the valid ones are
// in Characters (never nil), the others in skipped, by character id, each
// with its reason. Who is present and where they may go are the world's to
// check (Apply).
func ParseMasterOutput(data []byte) (out MasterOutput, skipped map[string]error, err error) {
	var env struct {
		Tick       int                        `json:"tick"`
		LocationID string                     `json:"location_id"`
		Characters map[string]json.RawMessage `json:"characters"`
		Location   LocationUpdate             `json:"location"`
	}
	if err := parse(data, envelopeValidator, &env); err != nil {
		return MasterOutput{}, nil, err
	}
	out = MasterOutput{Tick: env.Tick, LocationID: env.LocationID, Characters: CharacterUpdates{}, Location: env.Location}
	for _, id := range sortedKeys(env.Characters) {
		var u CharacterUpdate
		if err := parse(env.Characters[id], characterValidator, &u); err != nil {
			if skipped == nil {
				skipped = map[string]error{}
			}
			skipped[id] = err
			continue
		}
		out.Characters[id] = u
	}
	return out, skipped, nil
}

func parse(data []byte, validator func() (*sjs.Schema, error), out any) error {
	sch, err := validator()
	if err != nil {
		return err
	}
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %w", ErrOutput, err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return fmt.Errorf("%w: trailing data after the JSON object", ErrOutput)
	}
	return nil
}

var (
	intentionValidator = sync.OnceValues(func() (*sjs.Schema, error) {
		s, err := schemas.Reflect(IntentionResponse{})
		if err != nil {
			return nil, err
		}
		return compile(s)
	})
	// envelopeValidator checks an arbiter answer but for its characters'
	// updates: characters is any object (characterValidator checks each
	// value), and location's fields may be left out.
	envelopeValidator = sync.OnceValues(func() (*sjs.Schema, error) {
		s, err := envelope(MasterOutput{})
		if err != nil {
			return nil, err
		}
		return compile(s)
	})
	characterValidator = sync.OnceValues(func() (*sjs.Schema, error) {
		s, err := schemas.Reflect(CharacterUpdate{})
		if err != nil {
			return nil, err
		}
		return compile(s)
	})
)

// envelope is the schema of an arbiter answer that leaves each character's
// update to be checked on its own and location's fields optional.
func envelope(mo MasterOutput) (*jsonschema.Schema, error) {
	s, err := schemas.Reflect(mo)
	if err != nil {
		return nil, err
	}
	chars := prop(s, "characters")
	chars.Properties, chars.Required, chars.Extras, chars.AdditionalProperties = nil, nil, nil, nil
	loc := prop(s, "location")
	loc.Required, loc.Extras = nil, nil
	return s, nil
}

func compile(s *jsonschema.Schema) (*sjs.Schema, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	return schemas.Compile("mem://schema.json", b)
}
