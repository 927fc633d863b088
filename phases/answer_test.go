package phases

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/world"
)

// TestReadSettings: settings.answer sets a field's max_length and
// description, leaving the others at their defaults; every problem is
// listed, each naming simulation.yaml and the key, and the fields that read
// well keep their value beside them.
func TestReadSettings(t *testing.T) {
	t.Parallel()
	sim := &world.Simulation{Dir: "sims/town", Settings: map[string]any{"answer": map[string]any{
		"intention":    map[string]any{"max_length": 80, "description": "One sentence."},
		"memory_entry": map[string]any{"max_length": 120},
	}}}
	a, errs := ReadSettings(sim)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := DefaultAnswer()
	want.Intention.Intention = prompts.Field{MaxLength: 80, Description: "One sentence."}
	want.Resolution.MemoryEntry.MaxLength = 120
	if a != want {
		t.Errorf("ReadSettings = %+v, want %+v", a, want)
	}
	if a, errs := ReadSettings(&world.Simulation{Dir: "sims/town"}); len(errs) > 0 || a != DefaultAnswer() {
		t.Errorf("no settings: %+v, %v; want the defaults", a, errs)
	}

	file := filepath.Join("sims/town", "simulation.yaml")
	for _, tc := range []struct {
		name     string
		settings map[string]any
		want     []string
	}{
		{"unknown setting", map[string]any{"tone": "wry"}, []string{"settings.tone: unknown setting (a narrative reads answer)"}},
		{"answer not a map", map[string]any{"answer": 80}, []string{"settings.answer: want a map of the answer's fields"}},
		{"unknown field", map[string]any{"answer": map[string]any{"intent": map[string]any{"max_length": 80}}},
			[]string{"settings.answer.intent: unknown field (the answer's text fields are intention, memory_entry, internal_state, external_intent, moment, description)"}},
		{"field not a map", map[string]any{"answer": map[string]any{"moment": 80}}, []string{"settings.answer.moment: want a map with max_length and description"}},
		{"every bad value", map[string]any{"answer": map[string]any{
			"intention":       map[string]any{"max_length": 0, "description": "  "},
			"memory_entry":    map[string]any{"max_length": MaxFieldLength + 1, "description": strings.Repeat("é", MaxDescriptionLength+1)},
			"internal_state":  map[string]any{"max_length": "80", "description": 3, "maxlength": 80},
			"external_intent": map[string]any{"max_length": 2.5},
		}}, []string{
			"settings.answer.external_intent.max_length: want a whole number of characters from 1 to 4000, got 2.5",
			"settings.answer.intention.description: want the text the schema tells the model, got   ",
			"settings.answer.intention.max_length: want a whole number of characters from 1 to 4000, got 0",
			"settings.answer.internal_state.description: want the text the schema tells the model, got 3",
			"settings.answer.internal_state.max_length: want a whole number of characters from 1 to 4000, got 80",
			"settings.answer.internal_state.maxlength: unknown key (a field has max_length and description)",
			"settings.answer.memory_entry.description: 1001 characters: at most 1000",
			"settings.answer.memory_entry.max_length: want a whole number of characters from 1 to 4000, got 4001",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, errs := ReadSettings(&world.Simulation{Dir: "sims/town", Settings: tc.settings})
			if len(errs) != len(tc.want) {
				t.Fatalf("ReadSettings: %d problems, want %d:\n%v", len(errs), len(tc.want), errs)
			}
			for i, w := range tc.want {
				if got := errs[i].Error(); !strings.HasPrefix(got, file+": "+w) {
					t.Errorf("problem %d = %q, want it to start %q", i+1, got, file+": "+w)
				}
			}
			if a != DefaultAnswer() {
				t.Errorf("the bad values left %+v, want the defaults", a)
			}
		})
	}
}

// terse is an Answer an author would write: a one-sentence intention of
// at most 80 characters, memories of at most 120.
func terse() Answer {
	a := DefaultAnswer()
	a.Intention.Intention = prompts.Field{MaxLength: 80, Description: "One sentence of at most 80 characters."}
	a.Resolution.MemoryEntry = prompts.Field{MaxLength: 120, Description: "One sentence they will remember."}
	return a
}

// narrative is the narrative kind of the test world with answer a.
func narrative(t *testing.T, a Answer) *Narrative {
	t.Helper()
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	n := &Narrative{Sim: testWorld(), Prompts: pr, Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
	if err := n.SetAnswer(a); err != nil {
		t.Fatal(err)
	}
	return n
}

// property is the schema of the text field at path (property names, with
// "*" for the one character of a game master's schema) in schema.
func property(t *testing.T, schema []byte, path ...string) map[string]any {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		props, _ := s["properties"].(map[string]any)
		if p == "*" {
			for _, v := range props {
				s, _ = v.(map[string]any)
			}
			continue
		}
		s, _ = props[p].(map[string]any)
	}
	if s == nil {
		t.Fatalf("schema has no %v: %s", path, schema)
	}
	return s
}

// TestAnswerShapesPromptsAndSchemas: with an answer's bounds set, the
// default templates tell the model the very bounds the schema of the same
// call enforces, and the schema carries the author's description; the
// fields left alone keep the defaults, and so does everything of a
// simulation that sets nothing, byte for byte.
func TestAnswerShapesPromptsAndSchemas(t *testing.T) {
	t.Parallel()
	n := narrative(t, terse())
	st := n.Sim.InitialState()
	req, err := n.Call(st, PhaseIntention, "ada")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.System, "`intention` (string, 1 to 80 characters)") {
		t.Errorf("intention system prompt does not state 80 characters:\n%s", req.System)
	}
	if p := property(t, req.Schema, "intention"); p["maxLength"] != 80.0 || p["description"] != "One sentence of at most 80 characters." {
		t.Errorf("intention schema: %v", p)
	}
	req, err = n.Call(st, PhaseResolution, "hall")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(req.System, "`memory_entry` (string, 1 to 120 characters") || !strings.Contains(req.System, "`internal_state` (string, at most 300 characters)") {
		t.Errorf("resolution system prompt does not state 120 and 300:\n%s", req.System)
	}
	if p := property(t, req.Schema, "characters", "*", "memory_entry"); p["maxLength"] != 120.0 || p["description"] != "One sentence they will remember." {
		t.Errorf("memory_entry schema: %v", p)
	}
	if p := property(t, req.Schema, "characters", "*", "internal_state"); p["maxLength"] != 300.0 {
		t.Errorf("internal_state schema: %v, want the default 300", p)
	}
	if !bytes.Contains(req.Accept, []byte(`"maxLength":600`)) {
		t.Errorf("the envelope lost the location's default bounds: %s", req.Accept)
	}
	if got := n.Manifest().Schemas[0].Schema; !bytes.Contains(got, []byte(`"maxLength":80`)) {
		t.Errorf("the manifest's IntentionResponse is not the one sent: %s", got)
	}

	plain := narrative(t, DefaultAnswer())
	req, err = plain.Call(st, PhaseIntention, "ada")
	if err != nil || !bytes.Equal(req.Schema, intentionSchema()) || !strings.Contains(req.System, "1 to 400 characters") {
		t.Errorf("defaults: schema %s, %v; want IntentionSchema and 400 in the prompt", req.Schema, err)
	}
	for i, n := range Schemas() {
		if got := plain.Manifest().Schemas[i]; got.Name != n.Name || !bytes.Equal(got.Schema, n.Schema) {
			t.Errorf("defaults: manifest schema %s differs from the schema file's", got.Name)
		}
	}
}

// TestAnswerBoundsAreEnforced: a model that writes past the author's
// bounds is refused as off-schema (its intention falls back, its update of
// a character is skipped), though the default bounds would have let the
// same answers through.
func TestAnswerBoundsAreEnforced(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("I wait. ", 12) // 96 characters: over 80, under 400
	h := openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If:   func(c *openaitest.Call) bool { return c.SchemaName() == "IntentionResponse" },
		Then: openaitest.Always(openaitest.JSON(map[string]string{"intention": long})),
	})
	env, _, _ := testEnv(t, h)
	for _, tc := range []struct {
		answer   Answer
		fallback bool
	}{{terse(), true}, {DefaultAnswer(), false}} {
		s, err := schemasOf(tc.answer)
		if err != nil {
			t.Fatal(err)
		}
		env.answer = s
		res, err := intentionPhase(context.Background(), env, env.Sim.InitialState())
		if err != nil {
			t.Fatal(err)
		}
		if got := len(fallbackIDs(res)) == len(res); got != tc.fallback {
			t.Errorf("max_length %d: every intention fell back: %v, want %v", tc.answer.Intention.Intention.MaxLength, got, tc.fallback)
		}
		if tc.fallback && llm.ErrorKindOf(res[0].Call.Err) != llm.KindSchema {
			t.Errorf("the fallback's error: %v, want a schema error", res[0].Call.Err)
		}

		update := fmt.Sprintf(`{"tick":1,"location_id":"hall","characters":{"ada":{"memory_entry":%q,"location":"hall","internal_state":"","external_intent":""}},"location":{"moment":null,"description":null}}`, long+long)
		_, skipped, err := s.parseMasterOutput([]byte(update), false)
		if err != nil || (skipped["ada"] != nil) != tc.fallback {
			t.Errorf("max_length %d: a memory of 192 characters: skipped %v, %v", tc.answer.Resolution.MemoryEntry.MaxLength, skipped, err)
		}
	}
}

// TestAnswerTokens: a game master's answer's token bound is 300 + 250 per
// character at the default bounds, and grows with them, so that max_tokens
// and the characters one call resolves follow the author's lengths.
func TestAnswerTokens(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]int{0: 300, 1: 550, 6: 1800} {
		if got := resolutionTokens(n); got != want {
			t.Errorf("resolutionTokens(%d) = %d, want %d", n, got, want)
		}
	}
	wide := DefaultAnswer()
	wide.Resolution.MemoryEntry.MaxLength = 2100 // +1,800 characters: +450 tokens a character
	if got := wide.resolutionTokens(2); got != 300+2*700 {
		t.Errorf("resolutionTokens(2) with memories of 2,100 characters = %d, want 1700", got)
	}
	def, err := perCallOf(0, 4096)
	if err != nil {
		t.Fatal(err)
	}
	got, err := perCall(wide, 0, 4096)
	if err != nil || def != 15 || got != 5 {
		t.Errorf("characters per call within 4,096 tokens: %d by default (want 15), %d with long memories (want 5), %v", def, got, err)
	}
	n := narrative(t, wide)
	n.Resolution.MaxTokens = 100
	if p := resolutionParams(n.env(n.Resolution), 3); p.MaxTokens != 300+3*700 {
		t.Errorf("max_tokens of a call for 3 with long memories = %d, want %d", p.MaxTokens, 300+3*700)
	}
}

// TestOpenListsSettingsAndTemplateProblems: a narrative whose settings and
// templates are both wrong is refused with every problem at once.
func TestOpenListsSettingsAndTemplateProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeOverride(t, dir, "phase1_intention_user.md", "{{.Character.Nmae}}")
	pr, err := prompts.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim := testWorld()
	sim.Dir, sim.Settings = dir, map[string]any{"answer": map[string]any{"intention": map[string]any{"max_length": -1}}, "tone": "wry"}
	_, err = open(sim, pr, session.Settings{})
	for _, want := range []string{"settings.answer.intention.max_length", "settings.tone", "Nmae"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("open = %v; want it to name %s", err, want)
		}
	}
}

// writeOverride writes a template override into dir/prompts/.
func writeOverride(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, prompts.OverrideDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, prompts.OverrideDir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLengthWarnings: an overridden template that states a length its
// answer's schema does not allow is warned about, naming the file and what
// it says; the same text beside settings that allow it, a template that
// writes the length from the data, the defaults and people counted in
// characters are not.
func TestLengthWarnings(t *testing.T) {
	t.Parallel()
	const terseText = "Answer in one sentence of at most 80 characters; an 80-character limit. Up to 6 characters may be here."
	for _, tc := range []struct {
		name     string
		files    map[string]string
		answer   Answer
		warnings []string
	}{
		{"stated, not set", map[string]string{IntentionSystemTemplate: terseText}, DefaultAnswer(),
			[]string{`phase1_intention_system.md: says "at most 80 characters", but the intention answer's schema allows no field 80 characters (max_length: intention 400); set settings.answer.<field>.max_length in simulation.yaml, or write the length from the data, e.g. {{.Answer.Intention.MaxLength}}`}},
		{"stated and set", map[string]string{IntentionSystemTemplate: terseText}, terse(), nil},
		{"from the data", map[string]string{IntentionSystemTemplate: "At most {{.Answer.Intention.MaxLength}} characters."}, terse(), nil},
		{"the game master's", map[string]string{ResolutionUserTemplate: "Memories of 1 to 120 characters, a moment of up to 1,000 characters or 300 characters or fewer."}, terse(),
			[]string{`phase2a_resolution_user.md: says "up to 1,000 characters", but the resolution answer's schema allows no field 1000 characters (max_length: memory_entry 120, internal_state 300, external_intent 300, moment 300, description 600)`}},
		{"defaults", nil, terse(), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, text := range tc.files {
				writeOverride(t, dir, name, text)
			}
			n := narrative(t, tc.answer)
			var err error
			if n.Prompts, err = prompts.New(dir); err != nil {
				t.Fatal(err)
			}
			got := n.lengthWarnings()
			if len(got) != len(tc.warnings) {
				t.Fatalf("lengthWarnings = %v, want %d", got, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if want := filepath.Join(dir, "prompts", w); !strings.HasPrefix(got[i].Error(), want) {
					t.Errorf("warning %d = %q\nwant it to start %q", i+1, got[i], want)
				}
			}
		})
	}
}

// FuzzAnswerSettings: whatever settings.answer holds, ReadSettings either
// refuses it, naming simulation.yaml and the key, or its Answer makes
// strict schemas that the prompts state: the intention's schema and system
// prompt both carry its max_length, and an answer of exactly that length
// passes while one a character longer does not.
func FuzzAnswerSettings(f *testing.F) {
	f.Add(int64(80), "One sentence.", int64(300), "Never empty.")
	f.Add(int64(0), "", int64(4001), "\x00\"}{\\u0000")
	f.Add(int64(4000), "é", int64(1), "{{.X}}")
	pr, err := prompts.New("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, intentionLength int64, intentionText string, memoryLength int64, memoryText string) {
		sim := testWorld()
		sim.Dir = "sims/x"
		sim.Settings = map[string]any{"answer": map[string]any{
			"intention":    map[string]any{"max_length": int(intentionLength), "description": intentionText},
			"memory_entry": map[string]any{"max_length": int(memoryLength), "description": memoryText},
		}}
		a, errs := ReadSettings(sim)
		for _, err := range errs {
			if !strings.HasPrefix(err.Error(), filepath.Join("sims/x", "simulation.yaml")+": settings.answer.") {
				t.Fatalf("problem %q does not name simulation.yaml and the key", err)
			}
		}
		if len(errs) > 0 {
			return
		}
		n := &Narrative{Sim: sim, Prompts: pr, Intention: llm.Params{MaxTokens: 400}, Resolution: llm.Params{MaxTokens: 2048}}
		if err := n.SetAnswer(a); err != nil {
			t.Fatalf("accepted settings %v: %v", sim.Settings, err)
		}
		req, err := n.Call(sim.InitialState(), PhaseIntention, "ada")
		if err != nil {
			t.Fatal(err)
		}
		most := a.Intention.Intention.MaxLength
		if !strings.Contains(req.System, fmt.Sprintf("1 to %d characters", most)) {
			t.Errorf("the system prompt does not state %d", most)
		}
		s := validator(t, req.Schema)
		for length, ok := range map[int]bool{most: true, most + 1: false} {
			answer, _ := json.Marshal(map[string]string{"intention": strings.Repeat("é", length)})
			if err := validate(t, s, string(answer)); (err == nil) != ok {
				t.Errorf("an intention of %d characters within max_length %d: %v", length, most, err)
			}
		}
	})
}
