package phases

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	sjs "github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/arbiter-sim/arbiter/schemas"
)

func ptr(s string) *string { return &s }

// validator compiles a schema for the tests with santhosh-tekuri/jsonschema.
func validator(t *testing.T, schema []byte) *sjs.Schema {
	t.Helper()
	doc, err := sjs.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		t.Fatal(err)
	}
	c := sjs.NewCompiler()
	if err := c.AddResource("mem://test.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("mem://test.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *sjs.Schema, answer string) error {
	t.Helper()
	doc, err := sjs.UnmarshalJSON(strings.NewReader(answer))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", answer, err)
	}
	return s.Validate(doc)
}

const validMaster = `{
  "tick": 3,
  "location_id": "common",
  "characters": {
    "ada": {"memory_entry": "Bo spilled the ink on my map.", "location": "common", "internal_state": "annoyed", "external_intent": "wiping the map"},
    "bo": {"memory_entry": "I fled to the cellar.", "location": "cellar", "internal_state": "ashamed", "external_intent": "hiding"}
  },
  "location": {"moment": "Ink drips from the table.", "description": null}
}`

func TestCharacterUpdateCreation(t *testing.T) {
	t.Parallel()
	u := CharacterUpdate{Location: "common", InternalState: "calm", ExternalIntent: "reading", MemoryEntry: "I read a letter."}
	b, err := json.Marshal(u)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"memory_entry":"I read a letter.","location":"common","internal_state":"calm","external_intent":"reading"}`
	if string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
	mo, _, err := ParseMasterOutput([]byte(`{"tick":1,"location_id":"common","characters":{"ada":` + want + `},"location":{"moment":null,"description":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	if mo.Characters["ada"] != u {
		t.Errorf("parsed %+v, want %+v", mo.Characters["ada"], u)
	}
}

func TestCharacterUpdateMemoryEntryRequired(t *testing.T) {
	t.Parallel()
	specialised, err := defaultResolutionSchema(1, "common", []string{"ada"}, []string{"common"})
	if err != nil {
		t.Fatal(err)
	}
	s := validator(t, specialised)
	for name, entry := range map[string]string{
		"empty":   `"memory_entry": "", `,
		"missing": ``,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			answer := `{"tick":1,"location_id":"common","characters":{"ada":{` + entry +
				`"location":"common","internal_state":"","external_intent":""}},"location":{"moment":null,"description":null}}`
			if err := validate(t, s, answer); err == nil {
				t.Error("request schema accepted it")
			}
			mo, skipped, err := ParseMasterOutput([]byte(answer))
			if err != nil {
				t.Fatalf("the envelope is valid, yet: %v", err)
			}
			if _, ok := mo.Characters["ada"]; ok || !errors.Is(skipped["ada"], ErrOutput) {
				t.Errorf("ada's update kept (%v) or not reported as skipped (%v)", mo.Characters, skipped)
			}
		})
	}
}

func TestLocationUpdateOptionalFields(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   LocationUpdate
		json string
	}{
		{"nulls", LocationUpdate{}, `{"moment":null,"description":null}`},
		{"moment only", LocationUpdate{Moment: ptr("Dusk.")}, `{"moment":"Dusk.","description":null}`},
		{"both", LocationUpdate{Moment: ptr("Dusk."), Description: ptr("")}, `{"moment":"Dusk.","description":""}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := json.Marshal(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.json {
				t.Errorf("json = %s, want %s", b, tt.json)
			}
			mo, _, err := ParseMasterOutput([]byte(`{"tick":1,"location_id":"x","characters":{},"location":` + tt.json + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(mo.Location, tt.in) {
				t.Errorf("round trip = %+v, want %+v", mo.Location, tt.in)
			}
		})
	}
	// Seed 004: moment and description default to None; left out, they
	// keep the current values.
	for _, loc := range []string{`{"moment":null}`, `{"description":"Ruins."}`, `{}`} {
		mo, _, err := ParseMasterOutput([]byte(`{"tick":1,"location_id":"x","characters":{},"location":` + loc + `}`))
		if err != nil {
			t.Errorf("location %s: %v", loc, err)
		}
		if loc == `{}` && (mo.Location.Moment != nil || mo.Location.Description != nil) {
			t.Errorf("location {} = %+v, want both nil", mo.Location)
		}
	}
	// The schema sent still requires both, nullable, as strict mode needs.
	sent, err := defaultResolutionSchema(1, "x", nil, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	if err := validate(t, validator(t, sent), `{"tick":1,"location_id":"x","characters":{},"location":{}}`); err == nil {
		t.Error("the request schema does not require moment and description")
	}
}

func TestMasterOutputCreation(t *testing.T) {
	t.Parallel()
	mo, _, err := ParseMasterOutput([]byte(validMaster))
	if err != nil {
		t.Fatal(err)
	}
	want := MasterOutput{
		Tick:       3,
		LocationID: "common",
		Characters: CharacterUpdates{
			"ada": {MemoryEntry: "Bo spilled the ink on my map.", Location: "common", InternalState: "annoyed", ExternalIntent: "wiping the map"},
			"bo":  {MemoryEntry: "I fled to the cellar.", Location: "cellar", InternalState: "ashamed", ExternalIntent: "hiding"},
		},
		Location: LocationUpdate{Moment: ptr("Ink drips from the table.")},
	}
	if !reflect.DeepEqual(mo, want) {
		t.Errorf("parsed %+v\nwant %+v", mo, want)
	}
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := ParseMasterOutput(b)
	if err != nil || !reflect.DeepEqual(again, want) {
		t.Errorf("round trip = %+v, %v", again, err)
	}
}

func TestMasterOutputEmptyCharacters(t *testing.T) {
	t.Parallel()
	const answer = `{"tick":2,"location_id":"cellar","characters":{},"location":{"moment":"Rain drips.","description":null}}`
	mo, _, err := ParseMasterOutput([]byte(answer))
	if err != nil {
		t.Fatal(err)
	}
	if mo.Characters == nil || len(mo.Characters) != 0 {
		t.Errorf("Characters = %#v, want an empty, non-nil map", mo.Characters)
	}
	b, err := json.Marshal(MasterOutput{Tick: 2, LocationID: "cellar", Characters: CharacterUpdates{}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"characters":{}`) {
		t.Errorf("json = %s, want empty characters object", b)
	}
	specialised, err := defaultResolutionSchema(2, "cellar", nil, []string{"cellar", "common"})
	if err != nil {
		t.Fatal(err)
	}
	s := validator(t, specialised)
	if err := validate(t, s, answer); err != nil {
		t.Errorf("empty location answer rejected: %v", err)
	}
	intruder := strings.Replace(answer, `"characters":{}`,
		`"characters":{"ada":{"memory_entry":"x","location":"cellar","internal_state":"","external_intent":""}}`, 1)
	if err := validate(t, s, intruder); err == nil {
		t.Error("a character in an empty location was accepted")
	}
}

func TestResolutionSchema(t *testing.T) {
	t.Parallel()
	schema, err := defaultResolutionSchema(3, "common", []string{"ada", "bo"}, []string{"common", "cellar", "common"})
	if err != nil {
		t.Fatal(err)
	}
	s := validator(t, schema)
	bo := `"bo": {"memory_entry": "I fled to the cellar.", "location": "cellar", "internal_state": "ashamed", "external_intent": "hiding"}`
	tests := []struct {
		name, answer string
		ok           bool
	}{
		{"valid", validMaster, true},
		{"unknown character", strings.Replace(validMaster, `"bo":`, `"cy":`, 1), false},
		{"extra character", strings.Replace(validMaster, bo, bo+`, "cy": {"memory_entry": "x", "location": "common", "internal_state": "", "external_intent": ""}`, 1), false},
		{"missing character", strings.Replace(validMaster, ",\n    "+bo, "", 1), false},
		{"unreachable location", strings.Replace(validMaster, `"location": "cellar"`, `"location": "tower"`, 1), false},
		{"wrong tick", strings.Replace(validMaster, `"tick": 3`, `"tick": 4`, 1), false},
		{"wrong location_id", strings.Replace(validMaster, `"location_id": "common"`, `"location_id": "cellar"`, 1), false},
		{"empty memory_entry", strings.Replace(validMaster, `"I fled to the cellar."`, `""`, 1), false},
		{"memory_entry too long", strings.Replace(validMaster, `"I fled to the cellar."`, `"`+strings.Repeat("a", 301)+`"`, 1), false},
		{"unknown field", strings.Replace(validMaster, `"tick": 3,`, `"tick": 3, "mood": "x",`, 1), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.answer == validMaster && tt.name != "valid" {
				t.Fatal("test case did not change the answer")
			}
			err := validate(t, s, tt.answer)
			if tt.ok && err != nil {
				t.Errorf("rejected: %v", err)
			}
			if !tt.ok && err == nil {
				t.Error("accepted")
			}
		})
	}

	var doc struct {
		Properties struct {
			Characters struct {
				Properties map[string]struct {
					Properties struct {
						Location struct {
							Enum []string `json:"enum"`
						} `json:"location"`
					} `json:"properties"`
				} `json:"properties"`
			} `json:"characters"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.Characters.Properties["ada"].Properties.Location.Enum; !reflect.DeepEqual(got, []string{"common", "cellar"}) {
		t.Errorf("location enum = %q, want [common cellar] (deduplicated, in order)", got)
	}
}

func TestResolutionSchemaErrors(t *testing.T) {
	t.Parallel()
	if _, err := defaultResolutionSchema(1, "common", []string{"ada", "ada"}, []string{"common"}); err == nil || !strings.Contains(err.Error(), `"ada" listed twice`) {
		t.Errorf("duplicate character: err = %v", err)
	}
	if _, err := defaultResolutionSchema(1, "common", []string{"ada"}, nil); err == nil || !strings.Contains(err.Error(), "no reachable location") {
		t.Errorf("no reachable location: err = %v", err)
	}
}

// TestResolutionSchemaLimit: the schema is refused past strict mode's
// property limit exactly where CheckStrict would refuse the written schema,
// and MaxPresent is the last crowd that fits.
func TestResolutionSchemaLimit(t *testing.T) {
	t.Parallel()
	fit, err := MaxPresent()
	if err != nil || fit < 100 {
		t.Fatalf("MaxPresent = %d, %v", fit, err)
	}
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("c%05d", i)
		}
		return out
	}
	b, err := defaultResolutionSchema(1, "hall", ids(fit), []string{"hall"})
	if err != nil {
		t.Fatalf("%d characters: %v", fit, err)
	}
	if errs := schemas.CheckStrict(b); len(errs) > 0 {
		t.Fatalf("%d characters: written schema breaks strict mode: %v", fit, errs)
	}
	_, err = defaultResolutionSchema(1, "hall", ids(fit+1), []string{"hall"})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("strict mode allows at most %d", schemas.MaxProperties)) {
		t.Fatalf("%d characters: err = %v, want the property limit", fit+1, err)
	}
}

// TestResolutionSchemaEscapesIDs: ids and locations with JSON's and JSON
// pointer's special characters are written as the values they are.
func TestResolutionSchemaEscapesIDs(t *testing.T) {
	t.Parallel()
	present := []string{`a"b`, `c\d`, "e/f~g", "<h>"}
	b, err := defaultResolutionSchema(2, `l"1`, present, []string{`l"1`, "x/y"})
	if err != nil {
		t.Fatal(err)
	}
	if errs := schemas.CheckStrict(b); len(errs) > 0 {
		t.Fatalf("breaks strict mode: %v", errs)
	}
	var doc struct {
		Properties struct {
			LocationID struct{ Enum []string } `json:"location_id"`
			Characters struct {
				Properties map[string]struct {
					Properties struct{ Location struct{ Enum []string } }
				}
				Required []string
			}
		}
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if got := doc.Properties.LocationID.Enum; !slices.Equal(got, []string{`l"1`}) {
		t.Errorf("location_id enum = %q", got)
	}
	if got := doc.Properties.Characters.Required; !slices.Equal(got, present) {
		t.Errorf("required = %q, want %q", got, present)
	}
	for _, id := range present {
		if got := doc.Properties.Characters.Properties[id].Properties.Location.Enum; !slices.Equal(got, []string{`l"1`, "x/y"}) {
			t.Errorf("%q: location enum = %q", id, got)
		}
	}
}

func TestIntentionSchema(t *testing.T) {
	t.Parallel()
	s := validator(t, intentionSchema())
	for answer, ok := range map[string]bool{
		`{"intention": "I open the door."}`:                 true,
		`{"intention": ""}`:                                 false,
		`{"intention": "` + strings.Repeat("a", 401) + `"}`: false,
		`{}`: false,
		`{"intention": "I open the door.", "reasoning": "because"}`: false,
	} {
		if err := validate(t, s, answer); (err == nil) != ok {
			t.Errorf("validate(%.40s) = %v, want ok=%v", answer, err, ok)
		}
	}
}

func TestParseIntention(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		want     string // "" for an error
	}{
		{"valid", `{"intention": "I hide the key."}`, "I hide the key."},
		{"surrounding space", " \n{\"intention\": \"I wait.\"}\n ", "I wait."},
		{"unknown field", `{"intention": "I wait.", "why": "tired"}`, ""},
		{"missing", `{}`, ""},
		{"empty", `{"intention": ""}`, ""},
		{"null", `{"intention": null}`, ""},
		{"trailing data", `{"intention": "I wait."} {"intention": "again"}`, ""},
		{"not JSON", `I wait.`, ""},
		{"array", `["I wait."]`, ""},
		{"empty input", ``, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseIntention([]byte(tt.in))
			if tt.want == "" {
				if !errors.Is(err, ErrOutput) {
					t.Errorf("ParseIntention = %+v, %v; want ErrOutput", got, err)
				}
				return
			}
			if err != nil || got.Intention != tt.want {
				t.Errorf("ParseIntention = %+v, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestParseMasterOutputRejects(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"unknown field":    strings.Replace(validMaster, `"tick": 3,`, `"tick": 3, "notes": "x",`, 1),
		"characters null":  strings.Replace(validMaster, `"characters": {`, `"characters": null, "x": {`, 1),
		"missing location": `{"tick": 1, "location_id": "x", "characters": {}}`,
		"tick as string":   strings.Replace(validMaster, `"tick": 3`, `"tick": "3"`, 1),
		"tick zero":        strings.Replace(validMaster, `"tick": 3`, `"tick": 0`, 1),
		"trailing data":    validMaster + `{}`,
		"truncated":        validMaster[:len(validMaster)/2],
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if _, _, err := ParseMasterOutput([]byte(in)); !errors.Is(err, ErrOutput) {
				t.Errorf("ParseMasterOutput = %v, want ErrOutput", err)
			}
		})
	}
}

// Seed 004 per character: an update that breaks its schema is skipped on its
// own and named; the envelope and the other updates stand.
func TestParseMasterOutputSkipsBadUpdates(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"unknown nested field": strings.Replace(validMaster, `"hiding"}`, `"hiding", "mood": "x"}`, 1),
		"missing field":        strings.Replace(validMaster, `"internal_state": "ashamed", `, ``, 1),
		"wrong type":           strings.Replace(validMaster, `"location": "cellar"`, `"location": 7`, 1),
		"not an object":        strings.Replace(validMaster, `"bo": {`, `"bo": "fled", "x": {`, 1),
		"too long":             strings.Replace(validMaster, `"I fled to the cellar."`, `"`+strings.Repeat("x", 301)+`"`, 1),
	}
	for name, in := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mo, skipped, err := ParseMasterOutput([]byte(in))
			if err != nil {
				t.Fatalf("envelope rejected: %v", err)
			}
			if _, ok := mo.Characters["ada"]; !ok {
				t.Error("ada's valid update was dropped")
			}
			if _, ok := mo.Characters["bo"]; ok || !errors.Is(skipped["bo"], ErrOutput) {
				t.Errorf("bo kept = %v, skipped = %v; want bo skipped with ErrOutput", ok, skipped)
			}
		})
	}
}

func FuzzParseMasterOutput(f *testing.F) {
	f.Add([]byte(validMaster))
	f.Add([]byte(`{"tick":1,"location_id":"l","characters":{},"location":{"moment":"m"},"characters":{},"location":{"description":"d"}}`))
	f.Add([]byte(`{"tick":2,"location_id":"cellar","characters":{},"location":{"moment":null,"description":null}}`))
	f.Add([]byte(`{"tick":1e400,"characters":{"a":null}}`))
	f.Add([]byte(`[{}]`))
	f.Add([]byte(`{"tick":1,"location_id":"x","characters":{"\u0000":{"memory_entry":"\ud800","location":"","internal_state":"","external_intent":""}},"location":{"moment":null,"description":null}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := ResolutionCheck(1, "hall")(data); err != nil && !json.Valid(data) && !errors.Is(err, ErrOutput) {
			t.Fatalf("ResolutionCheck of broken JSON: %v does not wrap ErrOutput", err)
		}
		rec := checkAnswerRecord(t, data)
		mo, skipped, err := ParseMasterOutput(data)
		if err != nil {
			if !errors.Is(err, ErrOutput) {
				t.Fatalf("error %v does not wrap ErrOutput", err)
			}
			return
		}
		checkRecordKeeps(t, rec, mo)
		if mo.Characters == nil {
			t.Fatal("nil Characters on success")
		}
		checkCheckedReadings(t, data, mo, skipped)
		checkMasterOutput(t, data, mo, skipped)
	})
}

// checkAnswerRecord checks what the game master's history keeps of an answer,
// data: the answer whole, or JSON of its own, the same as read in two
// passes. It returns the record.
func checkAnswerRecord(t *testing.T, data []byte) string {
	t.Helper()
	rec := resolutionAnswerRecord(data)
	if want := twoPassAnswerRecord(data); rec != want {
		t.Fatalf("answer record of %q:\n%s\nwant, as read in two passes:\n%s", data, rec, want)
	}
	if rec != string(data) && !json.Valid([]byte(rec)) {
		t.Fatalf("answer record %q of %q is neither the answer nor JSON", rec, data)
	}
	return rec
}

// checkRecordKeeps checks that rec, the record of a valid answer read as
// mo, keeps each valid update's memory entry and location (an update
// skipped may not be an object: the record is then the answer whole).
func checkRecordKeeps(t *testing.T, rec string, mo MasterOutput) {
	t.Helper()
	var kept struct {
		Characters map[string]json.RawMessage
	}
	if err := json.Unmarshal([]byte(rec), &kept); err != nil {
		t.Fatalf("answer record %q of a valid answer: %v", rec, err)
	}
	for id, u := range mo.Characters {
		var k struct {
			MemoryEntry string `json:"memory_entry"`
			Location    string `json:"location"`
		}
		if err := json.Unmarshal(kept.Characters[id], &k); err != nil || k.MemoryEntry != u.MemoryEntry || k.Location != u.Location {
			t.Fatalf("answer record keeps %+v (%v) of %q, want its memory entry and location %+v", k, err, id, u)
		}
	}
}

// checkCheckedReadings checks that a valid answer, data, read as mo with
// skipped updates, reads the same once Complete has checked its envelope:
// from its bytes, or from the value the check decoded.
func checkCheckedReadings(t *testing.T, data []byte, mo MasterOutput, skipped map[string]error) {
	t.Helper()
	mo2, skipped2, err := defaultSchemas().parseMasterOutput(data, true)
	if err != nil || !reflect.DeepEqual(mo2, mo) || len(skipped2) != len(skipped) {
		t.Fatalf("with its envelope checked: %+v, %d skipped, %v; want %+v, %d skipped", mo2, len(skipped2), err, mo, len(skipped))
	}
	if repeatsAKey(data) {
		return // the decoded value keeps each repeated key's last value, as the schema check saw it
	}
	mo3, skipped3, err := defaultSchemas().checkedMasterOutput(data, decodedAsChecked(t, data))
	// (The same ids skipped: a validation error lists additional
	// properties in the order of a Go map, so its text varies.)
	if err != nil || !reflect.DeepEqual(mo3, mo) || !slices.Equal(slices.Sorted(maps.Keys(skipped3)), slices.Sorted(maps.Keys(skipped))) {
		t.Fatalf("from the checked value: %+v, skipped %v, %v; want %+v, skipped %v", mo3, skipped3, err, mo, skipped)
	}
	if _, _, ok := defaultSchemas().masterOutputOf(decodedAsChecked(t, data)); !ok {
		t.Fatalf("a valid envelope %q was not read from its value", data)
	}
}

// checkMasterOutput checks what ParseMasterOutput made of a valid answer,
// data: no empty memory entry kept, no update both kept and skipped, every
// skip an ErrOutput, a round trip through JSON that changes nothing, and
// the client's check of tick and location accepting exactly an answer
// naming them.
func checkMasterOutput(t *testing.T, data []byte, mo MasterOutput, skipped map[string]error) {
	t.Helper()
	for id, u := range mo.Characters {
		if u.MemoryEntry == "" {
			t.Fatalf("character %q: empty memory_entry accepted", id)
		}
		if _, both := skipped[id]; both {
			t.Fatalf("character %q both kept and skipped", id)
		}
	}
	for id, e := range skipped {
		if !errors.Is(e, ErrOutput) {
			t.Fatalf("skipped %q: %v does not wrap ErrOutput", id, e)
		}
	}
	b, err := json.Marshal(mo)
	if err != nil {
		t.Fatal(err)
	}
	again, _, err := ParseMasterOutput(b)
	if err != nil {
		t.Fatalf("re-parse of %s: %v", b, err)
	}
	if !reflect.DeepEqual(again, mo) {
		t.Fatalf("round trip changed %+v into %+v", mo, again)
	}
	if err := ResolutionCheck(mo.Tick, mo.LocationID)(data); err != nil {
		t.Fatalf("ResolutionCheck(%d, %q) refused the answer naming them: %v", mo.Tick, mo.LocationID, err)
	}
	if ResolutionCheck(mo.Tick+1, mo.LocationID)(data) == nil || ResolutionCheck(mo.Tick, mo.LocationID+"x")(data) == nil {
		t.Fatalf("ResolutionCheck accepted another tick or location for %s", data)
	}
}

// FuzzParseIntention: an intention answer is read or refused with
// ErrOutput; one that ParseIntention accepts (valid against the schema
// Complete checks it against) checkedIntention reads the same.
func FuzzParseIntention(f *testing.F) {
	f.Add([]byte(`{"intention":"I go to the garden."}`))
	f.Add([]byte(`{"intention":""}`))
	f.Add([]byte(`{"intention":"a","extra":1}`))
	f.Add([]byte(`{"intention":"a"} {}`))
	f.Add([]byte(`{"intention":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseIntention(data)
		if err != nil {
			if !errors.Is(err, ErrOutput) {
				t.Fatalf("error %v does not wrap ErrOutput", err)
			}
			return
		}
		checked, err := checkedIntention(data)
		if err != nil || checked != got {
			t.Fatalf("checkedIntention of a valid answer: %+v, %v; want %+v", checked, err, got)
		}
		// Read from the value Complete's check decoded, the same (but for
		// a repeated key, of which the value keeps the last, as the check
		// saw it).
		if repeatsAKey(data) {
			return
		}
		if of, err := checkedIntentionOf(data, decodedAsChecked(t, data)); err != nil || of != got {
			t.Fatalf("checkedIntentionOf a valid answer's value: %+v, %v; want %+v", of, err, got)
		}
	})
}

// decodedAsChecked is data as llm's check decodes an answer
// (llm.Result.Decoded): one value, numbers as json.Number.
func decodedAsChecked(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
	return v
}

// twoPassAnswerRecord is resolutionAnswerRecord as it was written first,
// each character's update read on its own after the envelope (readEach),
// which the one-pass reading must equal.
func twoPassAnswerRecord(answer json.RawMessage) string {
	var rec answerRecord
	if !rec.readEach(answer) {
		return string(answer)
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return string(answer)
	}
	return string(b)
}

// repeatsAKey reports whether an object of data, at any depth, has a key
// twice: encoding/json then keeps the last value in a map, but merges
// into a struct's field, so the two readings may differ.
func repeatsAKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type level struct {
		keys  map[string]bool
		isKey bool // the next string token is a key
	}
	var stack []*level
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch tok := tok.(type) {
		case json.Delim:
			switch tok {
			case '{':
				stack = append(stack, &level{keys: map[string]bool{}, isKey: true})
				continue
			case '[':
				stack = append(stack, &level{})
				continue
			default:
				stack = stack[:len(stack)-1]
			}
		case string:
			if top != nil && top.keys != nil && top.isKey {
				if top.keys[tok] {
					return true
				}
				top.keys[tok] = true
				top.isKey = false
				continue
			}
		}
		// a value ended: in an object, a key comes next
		if len(stack) > 0 && stack[len(stack)-1].keys != nil {
			stack[len(stack)-1].isKey = true
		}
	}
}

func TestRepeatsAKey(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		`{"a":1,"b":{"a":2},"c":[{"a":1},{"a":1}]}`: false,
		`{"a":1,"b":2,"a":3}`:                       true,
		`{"x":[{"k":{},"k":[]}]}`:                   true,
		`{"a":"a","b":"a"}`:                         false,
	} {
		if got := repeatsAKey([]byte(in)); got != want {
			t.Errorf("repeatsAKey(%s) = %v, want %v", in, got, want)
		}
	}
}
