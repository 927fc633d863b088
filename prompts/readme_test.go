package prompts_test

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// readmeFields returns the field names in the first column of the table
// that follows the heading line starting with heading in README.md ("`ID`",
// "`Seat`, `Opponent`" give ID, Seat and Opponent).
func readmeFields(t *testing.T, heading string) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	at := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, heading) })
	if at < 0 {
		t.Fatalf("README.md has no line starting %q", heading)
	}
	var names []string
	inTable := false
	for _, l := range lines[at+1:] {
		if !strings.HasPrefix(l, "|") {
			if inTable {
				break
			}
			continue
		}
		inTable = true
		cell := strings.Split(l, "|")[1]
		if strings.Contains(cell, "---") || strings.TrimSpace(cell) == "field" {
			continue
		}
		for _, m := range regexp.MustCompile("`([A-Za-z]+)`").FindAllStringSubmatch(cell, -1) {
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatalf("README.md: no fields in the table after %q", heading)
	}
	return names
}

// TestReadmeNamesTheDataFields: each table of the narrative's data in
// README.md lists exactly the fields of its type, in order.
func TestReadmeNamesTheDataFields(t *testing.T) {
	for heading, v := range map[string]any{
		"`SimulationData`":     prompts.SimulationData{},
		"`LocationData`":       prompts.LocationData{},
		"`CharacterData`":      prompts.CharacterData{},
		"### `IntentionData`":  prompts.IntentionData{},
		"### `ResolutionData`": prompts.ResolutionData{},
	} {
		typ := reflect.TypeOf(v)
		var want []string
		for i := range typ.NumField() {
			want = append(want, typ.Field(i).Name)
		}
		if got := readmeFields(t, heading); !slices.Equal(got, want) {
			t.Errorf("README.md %s lists %v; %s has %v", heading, got, typ.Name(), want)
		}
	}
	// "PresentCharacter has every field of CharacterData plus Intention".
	var want []string
	for f := range reflect.TypeFor[prompts.CharacterData]().Fields() {
		want = append(want, f.Name+" "+f.Type.String())
	}
	want = append(want, "Intention string")
	var got []string
	for f := range reflect.TypeFor[prompts.PresentCharacter]().Fields() {
		got = append(got, f.Name+" "+f.Type.String())
	}
	if !slices.Equal(got, want) {
		t.Errorf("PresentCharacter has %v, no longer the fields of CharacterData plus Intention %v: update README.md", got, want)
	}
}

// TestReadmeNamesTheGameFields: every field README.md lists for a game's
// data is one its templates can use: an override naming them all renders
// when the game opens (templates run with missingkey=error).
func TestReadmeNamesTheGameFields(t *testing.T) {
	tests := []struct {
		heading, sim, template string
		open                   func(*world.Simulation, *prompts.Renderer) error
	}{
		{"### Chronicle data", "chronicle-demo", chronicle.PromptFile, func(s *world.Simulation, pr *prompts.Renderer) error {
			_, err := chronicle.Open(s, pr)
			return err
		}},
		{"### Conquest data", "conquest-demo", conquest.PromptFile, func(s *world.Simulation, pr *prompts.Renderer) error {
			_, err := conquest.Open(s, pr)
			return err
		}},
		{"### Duel data", "duel-demo", duel.SystemPrompt, func(s *world.Simulation, pr *prompts.Renderer) error {
			_, err := duel.Open(s, pr)
			return err
		}},
	}
	for _, tc := range tests {
		t.Run(tc.sim, func(t *testing.T) {
			var text strings.Builder
			for _, f := range readmeFields(t, tc.heading) {
				text.WriteString("{{." + f + "}}\n")
			}
			dir := worldtest.Copy(t, filepath.Join("..", "simulations", tc.sim))
			if err := os.MkdirAll(filepath.Join(dir, prompts.OverrideDir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, prompts.OverrideDir, tc.template), []byte(text.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			sim, err := worldtest.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			pr, err := prompts.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.open(sim, pr); err != nil {
				t.Errorf("README.md %s names a field the data lacks: %v", tc.heading, err)
			}
		})
	}
}
