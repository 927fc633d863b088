package phases

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/invopop/jsonschema"
	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/arbiter-sim/arbiter/world"
)

// Answer is the text fields of the narrative's answers as a simulation
// sets them (simulation.yaml's settings.answer): the most characters each
// may hold and the description the schema gives the model. The schemas
// sent with the calls and the templates' data (.Answer) are both made from
// it, so that a template saying "at most 80 characters" goes out beside a
// schema whose maxLength is 80.
type Answer struct {
	Intention  prompts.IntentionAnswer
	Resolution prompts.ResolutionAnswer
}

// DefaultAnswer is the answer's fields of a simulation that does not set
// them: those of the schema files in schemas/.
func DefaultAnswer() Answer {
	return Answer{Intention: prompts.DefaultIntentionAnswer(), Resolution: prompts.DefaultResolutionAnswer()}
}

// Bounds of settings.answer.<field>.
const (
	// MaxFieldLength is the most a max_length may allow: about 1,000
	// tokens, far past a line of a story.
	MaxFieldLength = 4000
	// MaxDescriptionLength is the most characters of a description.
	MaxDescriptionLength = 1000
)

// answerField is one field of an Answer under its settings key, which is
// its JSON name in the answer.
type answerField struct {
	key   string
	field *prompts.Field
}

// fields are a's fields in the order of the answers.
func (a *Answer) fields() []answerField {
	r := &a.Resolution
	return []answerField{
		{"intention", &a.Intention.Intention},
		{"memory_entry", &r.MemoryEntry}, {"internal_state", &r.InternalState}, {"external_intent", &r.ExternalIntent},
		{"moment", &r.Moment}, {"description", &r.Description},
	}
}

// settingKeys are the settings a narrative simulation reads.
var settingKeys = []string{"answer"}

// ReadSettings reads the settings of a narrative simulation: answer, a map
// of the answers' text fields (intention, memory_entry, internal_state,
// external_intent, moment, description) to their max_length (1 to
// MaxFieldLength characters) and description (what the schema tells the
// model; at most MaxDescriptionLength characters); a field or key left out
// keeps its default (DefaultAnswer). Every problem names simulation.yaml
// and the key; the Answer holds the defaults in place of what is wrong.
func ReadSettings(sim *world.Simulation) (Answer, []error) {
	file := filepath.Join(sim.Dir, "simulation.yaml")
	a := DefaultAnswer()
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: settings.%s: %s", file, key, fmt.Sprintf(format, args...)))
	}
	for _, k := range slices.Sorted(maps.Keys(sim.Settings)) {
		if !slices.Contains(settingKeys, k) {
			bad(k, "unknown setting (a narrative reads %s)", strings.Join(settingKeys, ", "))
		}
	}
	raw, ok := sim.Settings["answer"]
	if !ok {
		return a, errs
	}
	answer, isMap := raw.(map[string]any)
	if !isMap {
		bad("answer", "want a map of the answer's fields to their max_length and description, e.g. {intention: {max_length: 80}}")
		return a, errs
	}
	fields := a.fields()
	var names []string
	for _, f := range fields {
		names = append(names, f.key)
	}
	for _, k := range slices.Sorted(maps.Keys(answer)) {
		at := slices.IndexFunc(fields, func(f answerField) bool { return f.key == k })
		if at < 0 {
			bad("answer."+k, "unknown field (the answer's text fields are %s)", strings.Join(names, ", "))
			continue
		}
		errs = append(errs, readField(file, "answer."+k, answer[k], fields[at].field)...)
	}
	return a, errs
}

// readField reads settings key, one field's max_length and description,
// into f.
func readField(file, key string, raw any, f *prompts.Field) []error {
	var errs []error
	bad := func(sub, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: settings.%s%s: %s", file, key, sub, fmt.Sprintf(format, args...)))
	}
	m, ok := raw.(map[string]any)
	if !ok {
		bad("", "want a map with max_length and description, e.g. {max_length: 80, description: One sentence.}")
		return errs
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "max_length":
			n, isInt := m[k].(int)
			if !isInt || n < 1 || n > MaxFieldLength {
				bad(".max_length", "want a whole number of characters from 1 to %d, got %v", MaxFieldLength, m[k])
				continue
			}
			f.MaxLength = n
		case "description":
			s, isString := m[k].(string)
			switch {
			case !isString || strings.TrimSpace(s) == "":
				bad(".description", "want the text the schema tells the model, got %v", m[k])
			case utf8.RuneCountInString(s) > MaxDescriptionLength:
				bad(".description", "%d characters: at most %d", utf8.RuneCountInString(s), MaxDescriptionLength)
			default:
				f.Description = s
			}
		default:
			bad("."+k, "unknown key (a field has max_length and description)")
		}
	}
	return errs
}

// answerSchemas are the schemas and validators of the answers of one
// Answer, built once: for the defaults (defaultSchemas) and for each
// simulation that sets its own.
type answerSchemas struct {
	answer Answer
	// intention is IntentionResponse's strict schema, sent with every
	// phase-1 call; master
	// the MasterOutput schema file, with CharacterUpdate under $defs.
	intention, master json.RawMessage
	// resolution and group are the templates of resolutionSchema (group:
	// a crowd's calls after the first).
	resolution, group *schemaTemplate
	// envelope is the schema a game master's answer must match for the
	// client to return it (llm.Request.Accept): MasterOutput's shape,
	// with any characters object, each update then read on its own by
	// ParseMasterOutput, and moment and description optional. One bad
	// update thus costs the location that update, not its whole
	// resolution. It is the same for every call of a simulation, so the
	// client compiles it once; the tick and location an answer must name
	// are ResolutionCheck's.
	envelope json.RawMessage
	// intentionValidator and envelopeValidator are compiled from the very
	// schemas the calls send (intention, envelope), which is what lets
	// checkedIntention and parseMasterOutput skip checking an answer the
	// client has checked; characterValidator checks each update of an
	// game master's answer on its own.
	intentionValidator, envelopeValidator, characterValidator *sjs.Schema
}

// defaultSchemas are the answers' schemas of DefaultAnswer.
var defaultSchemas = sync.OnceValue(func() *answerSchemas {
	s, err := newAnswerSchemas(DefaultAnswer())
	if err != nil {
		panic(err) // fixed types and defaults: TestSchemasStrict catches it
	}
	return s
})

// schemasOf are the schemas of a: the defaults' when a is DefaultAnswer.
func schemasOf(a Answer) (*answerSchemas, error) {
	if a == DefaultAnswer() {
		return defaultSchemas(), nil
	}
	return newAnswerSchemas(a)
}

func newAnswerSchemas(a Answer) (*answerSchemas, error) {
	s := &answerSchemas{answer: a}
	var err error
	if s.intention, err = a.generate(IntentionResponse{}); err != nil {
		return nil, err
	}
	if s.master, err = a.generate(MasterOutput{}, CharacterUpdate{}); err != nil {
		return nil, err
	}
	if s.resolution, err = a.buildTemplate(true); err != nil {
		return nil, err
	}
	if s.group, err = a.buildTemplate(false); err != nil {
		return nil, err
	}
	env, err := a.envelope()
	if err != nil {
		return nil, err
	}
	if s.envelope, err = json.Marshal(env); err != nil {
		return nil, fmt.Errorf("resolution envelope: %w", err)
	}
	character, err := a.reflect(CharacterUpdate{})
	if err != nil {
		return nil, err
	}
	characterJSON, err := json.Marshal(character)
	if err != nil {
		return nil, err
	}
	for _, v := range []struct {
		dst *(*sjs.Schema)
		src json.RawMessage
	}{{&s.intentionValidator, s.intention}, {&s.envelopeValidator, s.envelope}, {&s.characterValidator, characterJSON}} {
		if *v.dst, err = schemas.Compile("mem://schema.json", v.src); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// named are the schema files of a's answers, as Schemas lists them.
func (s *answerSchemas) named() []schemas.Named {
	return []schemas.Named{
		{Name: "IntentionResponse", Value: IntentionResponse{}, Schema: s.intention},
		{Name: "MasterOutput", Value: MasterOutput{}, Defs: []any{CharacterUpdate{}}, Schema: s.master},
	}
}

// reflect is the schema of v, an answer's type or a part of one
// (schemas.Reflect), with a's bounds and descriptions on its text fields
// (and on those of its $defs).
func (a Answer) reflect(v any, defs ...any) (*jsonschema.Schema, error) {
	s, err := schemas.Reflect(v, defs...)
	if err != nil {
		return nil, err
	}
	a.describe(s)
	for _, d := range s.Definitions {
		a.describe(d)
	}
	return s, nil
}

// describe sets a's bounds and descriptions on the text fields of s, an
// answer or an update: each of a's fields s has, by JSON name, and the
// location update's when s is a MasterOutput.
func (a Answer) describe(s *jsonschema.Schema) {
	if s.Properties == nil {
		return
	}
	for _, f := range a.fields() {
		p, ok := s.Properties.Get(f.key)
		if !ok {
			continue
		}
		p.Description = f.field.Description
		text := p
		if len(p.AnyOf) > 0 {
			text = p.AnyOf[0] // nullable: the string branch (schemas.Reflect)
		}
		n := uint64(f.field.MaxLength)
		text.MaxLength = &n
	}
	if loc, ok := s.Properties.Get("location"); ok && loc.Properties != nil {
		a.describe(loc)
	}
}

// generate is a.reflect of v, compact and checked against strict mode.
func (a Answer) generate(v any, defs ...any) (json.RawMessage, error) {
	s, err := a.reflect(v, defs...)
	if err != nil {
		return nil, err
	}
	return schemas.Marshal(s)
}

// tokens is about how many tokens a text of chars characters takes at
// most: 4 characters a token, as English mostly goes.
func tokens(chars int) int { return (chars + 3) / 4 }

// resolutionTokens is the most tokens a game master's answer for n characters
// can take within a's bounds: the frame (tick, location_id, the location's
// update: 300 at the default bounds) and each character's update (250),
// each its text plus its keys.
func (a Answer) resolutionTokens(n int) int {
	r := a.Resolution
	frame := 75 + tokens(r.Moment.MaxLength+r.Description.MaxLength)
	per := 25 + tokens(r.MemoryEntry.MaxLength+r.InternalState.MaxLength+r.ExternalIntent.MaxLength)
	return frame + per*n
}

// statedLength finds the lengths a prompt states in characters: "at most
// 80 characters", "1 to 400 characters", "up to 1,000 characters", "80
// characters or fewer", "an 80-character sentence". A number under 10 is
// taken for people ("up to 6 characters are here"), not a length.
var statedLength = regexp.MustCompile(`(?i)(?:\b(?:at most|up to|no more than|fewer than|less than|maximum of|max\.?)|\d\s*(?:to|-|–)) *(\d[\d,]*) characters\b|\b(\d[\d,]*)(?: characters or (?:fewer|less)\b|-character\b)`)

// lengthWarnings are validate's warnings about an overridden template
// that states a length in characters no field of its phase's answer has,
// as rendered for the phase's first call: the schema sent beside it
// allows another, and the model is told two things.
func (n *Narrative) lengthWarnings() []error {
	w := prompts.NewSnapshot(n.Sim, n.Sim.InitialState())
	a := n.Answer()
	fields := a.fields()
	phases := []struct {
		phase, entity string
		system, user  string
		fields        []answerField
	}{
		{PhaseIntention, "", IntentionSystemTemplate, IntentionUserTemplate, fields[:1]},
		{PhaseResolution, "", ResolutionSystemTemplate, ResolutionUserTemplate, fields[1:]},
	}
	if len(n.Sim.Characters) > 0 && len(n.Sim.Locations) > 0 {
		phases[0].entity, phases[1].entity = n.Sim.Characters[0].ID, n.Sim.Locations[0].ID
	}
	var out []error
	for _, p := range phases {
		req, err := n.request(w, p.phase, p.entity)
		if err != nil {
			continue // Lint reports it
		}
		for _, t := range []struct{ name, text string }{{p.system, req.System}, {p.user, req.User}} {
			if src := n.Prompts.Source(t.name); src != "default" {
				out = append(out, disagreements(src, p.phase, t.text, p.fields)...)
			}
		}
	}
	return out
}

// disagreements are the lengths text (from the template file src) states
// that none of fields has, each a warning naming the file.
func disagreements(src, phase, text string, fields []answerField) []error {
	var allowed []string
	has := map[int]bool{}
	for _, f := range fields {
		has[f.field.MaxLength] = true
		allowed = append(allowed, fmt.Sprintf("%s %d", f.key, f.field.MaxLength))
	}
	var out []error
	seen := map[int]bool{}
	for _, m := range statedLength.FindAllStringSubmatch(text, -1) {
		n, err := strconv.Atoi(strings.ReplaceAll(m[1]+m[2], ",", ""))
		if err != nil || n < 10 || has[n] || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, fmt.Errorf("%s: says %q, but the %s answer's schema allows no field %d characters (max_length: %s); set settings.answer.<field>.max_length in simulation.yaml, or write the length from the data, e.g. {{.Answer.%s.MaxLength}}",
			src, m[0], phase, n, strings.Join(allowed, ", "), fieldName(fields[0].key)))
	}
	return out
}

// fieldName is the Go name of a field's settings key: memory_entry is
// MemoryEntry.
func fieldName(key string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(key, "_") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
