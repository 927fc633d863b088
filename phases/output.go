package phases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-sim/arbiter/schemas"
)

// The model answers of the narrative phases. Field order is the order in which
// a strict-mode server makes the model write the fields, so it follows the
// order of thought: what happened before where it leads.
//
// Every text field is bounded with maxLength so that a rambling model cannot
// run into max_tokens and cut its JSON short. The bounds, and the
// descriptions the model reads, are the simulation's (settings.answer, see
// Answer); the types carry neither, and the schema files hold the defaults.
// The bounds are in characters (about 4 per token in English, fewer
// elsewhere): by default an intention is at most 400 characters (~100
// tokens); a character update at most 300 × 3 characters plus its location
// (~250 tokens with keys); a location update at most 300 + 600 characters
// (~230 tokens). A game master answer for n characters thus stays under about
// 300 + 250·n tokens (Answer.resolutionTokens): 1,800 for six characters,
// so resolution max_tokens of 2,048 or more never truncates a compliant
// answer in a town of six, and 4,096 covers a crowd of fifteen.

// IntentionResponse is a character's answer in phase 1: what they try to do
// this tick, in their own voice.
type IntentionResponse struct {
	Intention string `json:"intention" jsonschema:"minLength=1"`
}

// CharacterUpdate is the game master's decision for one character present at its
// location (seed 004). MemoryEntry comes first: the model narrates what the
// character lived through, then derives where they are and how they feel.
type CharacterUpdate struct {
	MemoryEntry    string `json:"memory_entry" jsonschema:"minLength=1"`
	Location       string `json:"location" jsonschema_description:"Id of the location the character is in at the end of the tick: the current one or one connected to it."`
	InternalState  string `json:"internal_state"`
	ExternalIntent string `json:"external_intent"`
}

// LocationUpdate is the game master's change to its location; a nil field keeps
// the current value.
type LocationUpdate struct {
	Moment      *string `json:"moment"`
	Description *string `json:"description"`
}

// CharacterUpdates maps the id of each character present to its update.
type CharacterUpdates map[string]CharacterUpdate

// JSONSchema is the generic schema of the map: strict mode has no maps, so it
// is an object with no properties; resolutionSchema lists the characters
// present per request, and the schema files document CharacterUpdate under
// $defs.
func (CharacterUpdates) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: jsonschema.NewProperties()}
}

// MasterOutput is the game master's whole decision for one location and one tick
// (seed 004).
type MasterOutput struct {
	Tick       int              `json:"tick" jsonschema:"minimum=1" jsonschema_description:"The tick being resolved."`
	LocationID string           `json:"location_id" jsonschema_description:"Id of the location resolved."`
	Characters CharacterUpdates `json:"characters" jsonschema_description:"One entry per character the call resolves, keyed by character id, each a CharacterUpdate ($defs/CharacterUpdate); each request's schema lists exactly those ids: everyone present, or the call's group when a crowd is shared among several calls. Empty when no one is here."`
	Location   LocationUpdate   `json:"location"`
}

// Schemas lists the generated schema files of the phases' answers, by the
// json_schema name sent with each call, with the default bounds and
// descriptions (DefaultAnswer).
func Schemas() []schemas.Named { return defaultSchemas().named() }

// resolutionSchema is the strict MasterOutput schema of one game master
// call of location locationID, present being the characters it resolves,
// specialised to what the world allows: tick and location_id are
// single-value enums; characters has exactly the ids present as
// properties, all required, no others (none: it must be {}); each
// character's location is an enum of reachable (the location and its
// connections); without updatesLocation (the location's calls but the
// first), moment and description must be null. It is cut from a template
// built and checked against strict mode once (answerSchemas.resolution),
// so a call pays for writing its values, not for reflecting and checking
// the schema; a crowd past strict mode's property limit is refused before
// it is written.
func (s *answerSchemas) resolutionSchema(tick int, locationID string, present, reachable []string, updatesLocation bool) (json.RawMessage, error) {
	if len(present) > 0 && len(reachable) == 0 {
		return nil, errors.New("no reachable location")
	}
	t := s.resolution
	if !updatesLocation {
		t = s.group
	}
	if err := t.fits(len(present)); err != nil {
		return nil, err
	}
	if len(present) > 1 {
		seen := make(map[string]bool, len(present))
		for _, id := range present {
			if seen[id] {
				return nil, fmt.Errorf("character %q listed twice", id)
			}
			seen[id] = true
		}
	}
	return t.write(tick, locationID, present, dedupe(reachable)), nil
}

// fits checks that a schema for n characters present stays within strict
// mode's property limit, as CheckStrict would count it.
func (t *schemaTemplate) fits(n int) error {
	if p := t.base + n*t.perCharacter; p > schemas.MaxProperties {
		return fmt.Errorf("schemas: not a strict-mode schema: %w", schemas.TooManyProperties(p))
	}
	return nil
}

// MaxPresent is the most characters one game master call's schema can list
// within strict mode's property limit (the same whatever the bounds).
func MaxPresent() (int, error) {
	t := defaultSchemas().resolution
	return (schemas.MaxProperties - t.base) / t.perCharacter, nil
}

// schemaTemplate is the JSON of resolutionSchema cut where a request's
// values go: root[0] tick root[1] location_id root[2] the characters'
// properties root[3] their required list root[4]; each character's schema is
// character[0] its location enum character[1].
type schemaTemplate struct {
	root      [5][]byte
	character [2][]byte
	// base and perCharacter count the object properties of a schema with
	// no character present and what each character adds.
	base, perCharacter int
}

// Sentinels marked where the template's values go when it was marshalled.
const (
	sentinelTick      = "\x00tick"
	sentinelLocation  = "\x00location_id"
	sentinelProperty  = "\x00character"
	sentinelRequired  = "\x00required"
	sentinelReachable = "\x00reachable"
)

// buildTemplate is the template of resolutionSchema with a's bounds;
// without updatesLocation, of a location's calls after the first, which
// leave its update to the first: moment and description null.
func (a Answer) buildTemplate(updatesLocation bool) (*schemaTemplate, error) {
	root, err := a.reflect(MasterOutput{})
	if err != nil {
		return nil, err
	}
	if !updatesLocation {
		loc := prop(root, "location")
		loc.Description = "Left to call 1 of this location, which writes its update: both fields null."
		for _, f := range []string{"moment", "description"} {
			*prop(loc, f) = jsonschema.Schema{Type: "null"}
		}
	}
	character, err := a.reflect(CharacterUpdate{})
	if err != nil {
		return nil, err
	}
	prop(character, "location").Enum = []any{sentinelReachable}
	t := prop(root, "tick")
	t.Enum, t.Minimum = []any{sentinelTick}, ""
	prop(root, "location_id").Enum = []any{sentinelLocation}
	chars := prop(root, "characters")
	chars.Properties = jsonschema.NewProperties()
	chars.Properties.Set(sentinelProperty, &jsonschema.Schema{}) // marshals as true
	chars.Required, chars.Extras = []string{sentinelRequired}, nil
	chars.Description = "One entry per character this call resolves, keyed by character id: exactly these ids, no others."

	rootJSON, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	charJSON, err := json.Marshal(character)
	if err != nil {
		return nil, err
	}
	var tpl schemaTemplate
	cuts, err := cut(rootJSON, quoted(sentinelTick, true), quoted(sentinelLocation, true), quoted(sentinelProperty, false)+":true", quoted(sentinelRequired, true))
	if err != nil {
		return nil, err
	}
	copy(tpl.root[:], cuts)
	cuts, err = cut(charJSON, quoted(sentinelReachable, true))
	if err != nil {
		return nil, err
	}
	copy(tpl.character[:], cuts)

	// Check the template as a whole once, with none and with one character
	// present, and count what a character adds.
	for _, present := range [][]string{nil, {"a"}} {
		b := tpl.write(1, "l", present, []any{"l"})
		if errs := schemas.CheckStrict(b); len(errs) > 0 {
			return nil, fmt.Errorf("schemas: not a strict-mode schema: %w", errors.Join(errs...))
		}
		n, err := schemas.CountProperties(b)
		if err != nil {
			return nil, err
		}
		if present == nil {
			tpl.base = n
		} else {
			tpl.perCharacter = n - tpl.base
		}
	}
	return &tpl, nil
}

// quoted is the JSON of sentinel, in a one-value array when enum is set.
func quoted(sentinel string, enum bool) string {
	b, _ := json.Marshal(sentinel)
	if enum {
		return "[" + string(b) + "]"
	}
	return string(b)
}

// cut splits b at each of marks, in order, each found exactly once.
func cut(b []byte, marks ...string) ([][]byte, error) {
	parts := make([][]byte, 0, len(marks)+1)
	for _, m := range marks {
		before, after, ok := bytes.Cut(b, []byte(m))
		if !ok || bytes.Contains(after, []byte(m)) {
			return nil, fmt.Errorf("schema template: %s not found once", m)
		}
		parts = append(parts, before)
		b = after
	}
	return append(parts, b), nil
}

// write fills the template in.
func (t *schemaTemplate) write(tick int, locationID string, present []string, reachable []any) json.RawMessage {
	enum := func(v any) []byte {
		b, _ := json.Marshal([]any{v}) // strings and ints always marshal
		return b
	}
	reach, _ := json.Marshal(reachable)
	required, _ := json.Marshal(append(make([]string, 0, len(present)), present...))
	size := len(t.root[0]) + len(t.root[1]) + len(t.root[2]) + len(t.root[3]) + len(t.root[4]) + 2*len(required) +
		len(present)*(len(t.character[0])+len(reach)+len(t.character[1])+2)
	b := make([]byte, 0, size)
	b = append(b, t.root[0]...)
	b = append(b, enum(tick)...)
	b = append(b, t.root[1]...)
	b = append(b, enum(locationID)...)
	b = append(b, t.root[2]...)
	for i, id := range present {
		if i > 0 {
			b = append(b, ',')
		}
		key, _ := json.Marshal(id)
		b = append(b, key...)
		b = append(b, ':')
		b = append(b, t.character[0]...)
		b = append(b, reach...)
		b = append(b, t.character[1]...)
	}
	b = append(b, t.root[3]...)
	b = append(b, required...)
	return append(b, t.root[4]...)
}

// ResolutionCheck is the llm.Request.Check of the game master call of location
// locationID at tick: an answer that names another tick or location is sent
// back for repair, as a schema mismatch would be.
func ResolutionCheck(tick int, locationID string) func(json.RawMessage) error {
	return func(out json.RawMessage) error {
		var got struct {
			Tick       int    `json:"tick"`
			LocationID string `json:"location_id"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			return fmt.Errorf("%w: %w", ErrOutput, err)
		}
		var errs []error
		if got.Tick != tick {
			errs = append(errs, fmt.Errorf("at /tick: %d, but this call resolves tick %d", got.Tick, tick))
		}
		if got.LocationID != locationID {
			errs = append(errs, fmt.Errorf("at /location_id: %q, but this call resolves location %q", got.LocationID, locationID))
		}
		return errors.Join(errs...)
	}
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
	err := parse(data, defaultSchemas().intentionValidator, &out)
	return out, err
}

// checkedIntention is ParseIntention of an answer that llm.Client.Complete
// has already checked against the intention schema, which ParseIntention's
// schema is compiled from: it only decodes it, since a second check could
// find nothing the first did not.
func checkedIntention(data []byte) (IntentionResponse, error) {
	var out IntentionResponse
	err := decodeChecked(data, &out)
	return out, err
}

// ParseMasterOutput reads a game master's answer as seed 004 allows it, in two
// steps. The envelope first: one JSON object with tick, location_id,
// characters (an object) and location, no unknown field, no trailing data;
// location's moment and description may be left out, which keeps them. An
// envelope that fails is an error wrapping ErrOutput. Then each character's
// update on its own against the CharacterUpdate schema: the valid ones are
// in Characters (never nil), the others in skipped, by character id, each
// with its reason. Who is present and where they may go are the world's to
// check (Apply). The bounds are the defaults.
func ParseMasterOutput(data []byte) (out MasterOutput, skipped map[string]error, err error) {
	return defaultSchemas().parseMasterOutput(data, false)
}

// parseMasterOutput is ParseMasterOutput with s's bounds; with
// envelopeChecked, data has been checked against s.envelope already (an
// answer Complete accepted under it), and only its characters' updates are.
func (s *answerSchemas) parseMasterOutput(data []byte, envelopeChecked bool) (out MasterOutput, skipped map[string]error, err error) {
	var env struct {
		Tick       int                        `json:"tick"`
		LocationID string                     `json:"location_id"`
		Characters map[string]json.RawMessage `json:"characters"`
		Location   LocationUpdate             `json:"location"`
	}
	if envelopeChecked {
		err = decodeChecked(data, &env)
	} else {
		err = parse(data, s.envelopeValidator, &env)
	}
	if err != nil {
		return MasterOutput{}, nil, err
	}
	out = MasterOutput{Tick: env.Tick, LocationID: env.LocationID, Characters: CharacterUpdates{}, Location: env.Location}
	for _, id := range sortedKeys(env.Characters) {
		var u CharacterUpdate
		if err := parse(env.Characters[id], s.characterValidator, &u); err != nil {
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

// checkedMasterOutput is parseMasterOutput(data, true) of an answer
// Complete accepted under the envelope (answerSchemas.envelope), read from the value its check
// decoded (llm.Result.Decoded) when there is one, rather than from the
// bytes a second time: each update is validated as decoded, not decoded
// again for it and then once more into its struct, so a game master's answer
// is read once however many characters it updates. The two readings
// are the same but for an answer that repeats a key: the value holds the
// last, which is what the schema check saw, where decoding the bytes into
// structs merges the repeats.
func (s *answerSchemas) checkedMasterOutput(data []byte, decoded any) (MasterOutput, map[string]error, error) {
	if out, skipped, ok := s.masterOutputOf(decoded); ok {
		return out, skipped, nil
	}
	return s.parseMasterOutput(data, true)
}

// masterOutputOf reads v, a valid envelope as encoding/json decodes it with
// UseNumber, as parseMasterOutput reads its bytes. Anything else (nil, a
// value the envelope would not pass) is not ok, for the bytes to be read.
func (s *answerSchemas) masterOutputOf(v any) (out MasterOutput, skipped map[string]error, ok bool) {
	m, _ := v.(map[string]any)
	num, _ := m["tick"].(json.Number)
	tick, err := strconv.ParseInt(string(num), 10, strconv.IntSize) // as encoding/json reads an int
	id, isString := m["location_id"].(string)
	chars, isObject := m["characters"].(map[string]any)
	place, isPlace := m["location"].(map[string]any)
	if err != nil || !isString || !isObject || !isPlace || len(m) != 4 {
		return MasterOutput{}, nil, false
	}
	moment, isMoment := optionalString(place["moment"])
	description, isDescription := optionalString(place["description"])
	if !isMoment || !isDescription {
		return MasterOutput{}, nil, false
	}
	out = MasterOutput{Tick: int(tick), LocationID: id, Characters: CharacterUpdates{},
		Location: LocationUpdate{Moment: moment, Description: description}}
	for _, id := range sortedKeys(chars) {
		if err := s.characterValidator.Validate(chars[id]); err != nil {
			if skipped == nil {
				skipped = map[string]error{}
			}
			skipped[id] = fmt.Errorf("%w: %w", ErrOutput, err)
			continue
		}
		c, _ := chars[id].(map[string]any)
		memory, ok1 := c["memory_entry"].(string)
		location, ok2 := c["location"].(string)
		internal, ok3 := c["internal_state"].(string)
		external, ok4 := c["external_intent"].(string)
		if !ok1 || !ok2 || !ok3 || !ok4 || len(c) != 4 {
			return MasterOutput{}, nil, false
		}
		out.Characters[id] = CharacterUpdate{MemoryEntry: memory, Location: location, InternalState: internal, ExternalIntent: external}
	}
	return out, skipped, true
}

// optionalString reads a string that may be null or left out (nil), as
// encoding/json reads it into a *string.
func optionalString(v any) (*string, bool) {
	switch s := v.(type) {
	case nil:
		return nil, true
	case string:
		return &s, true
	}
	return nil, false
}

// checkedIntentionOf is checkedIntention(data) read from the value
// Complete's check decoded, when there is one.
func checkedIntentionOf(data []byte, decoded any) (IntentionResponse, error) {
	if m, _ := decoded.(map[string]any); len(m) == 1 {
		if s, ok := m["intention"].(string); ok {
			return IntentionResponse{Intention: s}, nil
		}
	}
	return checkedIntention(data)
}

func parse(data []byte, sch *sjs.Schema, out any) error {
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%w: not JSON: %w", ErrOutput, err)
	}
	if err := sch.Validate(doc); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	return decode(data, out)
}

// decodeChecked reads into out data that the client has checked against
// out's schema, which allows no other key than out's fields: one JSON
// value and nothing after it (llm.Client.Complete refuses more), so
// json.Unmarshal, which does not copy data as a Decoder does, reads it as
// decode would.
func decodeChecked(data []byte, out any) error {
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%w: %w", ErrOutput, err)
	}
	return nil
}

// decode reads data, one JSON object and nothing after it, into out, which
// must have a field for each of its keys.
func decode(data []byte, out any) error {
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

// envelope is the schema of a game master's answer, with a's bounds, that
// leaves each character's update to be checked on its own and location's
// fields optional.
func (a Answer) envelope() (*jsonschema.Schema, error) {
	s, err := a.reflect(MasterOutput{})
	if err != nil {
		return nil, err
	}
	chars := prop(s, "characters")
	chars.Properties, chars.Required, chars.Extras, chars.AdditionalProperties = nil, nil, nil, nil
	loc := prop(s, "location")
	loc.Required, loc.Extras = nil, nil
	return s, nil
}
