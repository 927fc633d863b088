package session_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
)

// writeTo writes name -> content under dir, making folders as needed.
func writeTo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestValidateOnePass: a stray file in prompts/, a typo in a template's
// field, a template that does not parse and a bad setting are all listed
// at once; the overrides are named, a working one among them, and one of a
// template the kind does not use is warned about.
func TestValidateOnePass(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	yaml, err := os.ReadFile(filepath.Join(dir, "simulation.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	writeTo(t, dir, map[string]string{
		"simulation.yaml":                      string(yaml) + "settings:\n  answer:\n    intention: {max_length: 0}\n",
		"prompts/phase1_intentions_user.md":    "a stray file: the name has a typo",
		"prompts/phase1_intention_user.md":     "Tick {{.Simulation.Tick}}: {{.Character.Nmae}}",
		"prompts/phase2a_resolution_user.md":   "{{if}}",
		"prompts/phase2a_resolution_system.md": "You keep {{.Location.Name}}.",
		"prompts/duel_system.md":               "A duel.",
	})
	v := session.Validate(dir, session.Settings{})
	path := func(name string) string { return filepath.Join(dir, "prompts", name) }
	want := []string{
		path("phase1_intentions_user.md") + ": not a prompt template",
		"prompt phase2a_resolution_user.md (" + path("phase2a_resolution_user.md") + ")",
		filepath.Join(dir, "simulation.yaml") + ": settings.answer.intention.max_length: want a whole number of characters from 1 to 4000, got 0",
		"prompt phase1_intention_user.md (" + path("phase1_intention_user.md") + "): template: phase1_intention_user.md:1:39: executing \"phase1_intention_user.md\" at <.Character.Nmae>: can't evaluate field Nmae",
	}
	got := errorStrings(v.Problems)
	if len(got) != len(want) {
		t.Fatalf("Validate: %d problems, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("problem %d = %q\nwant it to start %q", i+1, got[i], want[i])
		}
	}
	var names []string
	for _, o := range v.Overrides {
		names = append(names, o.Template)
		if o.Path != path(o.Template) {
			t.Errorf("override %s: path %s", o.Template, o.Path)
		}
	}
	if w := []string{"duel_system.md", "phase1_intention_user.md", "phase2a_resolution_system.md", "phase2a_resolution_user.md"}; !slices.Equal(names, w) {
		t.Errorf("Overrides = %v, want %v", names, w)
	}
	if w := errorStrings(v.Warnings); len(w) != 1 || !strings.HasPrefix(w[0], path("duel_system.md")+": a narrative simulation does not use duel_system.md, so this override changes nothing") {
		t.Errorf("Warnings = %q, want the unused duel_system.md", w)
	}
}

// TestKindTemplatesAreItsManifests: the templates each kind lists by
// phase for `prompts init` are the ones its manifest says it renders.
func TestKindTemplatesAreItsManifests(t *testing.T) {
	for _, name := range []string{"demo-sim", "chronicle-demo", "conquest-demo", "duel-demo"} {
		dir := copyDir(t, "../simulations/"+name)
		s, err := session.Load(dir, session.Settings{})
		if err != nil {
			t.Fatal(err)
		}
		written, err := session.InitPrompts(dir, "", false)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range written {
			got = append(got, filepath.Base(p))
		}
		want := s.Kind.Manifest().Templates
		if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			t.Errorf("%s: init wrote %v; the manifest lists %v", name, got, want)
		}
		if len(session.Phases(s.Sim.Kind)) == 0 {
			t.Errorf("%s: no phases", name)
		}
	}
}

// TestInitPrompts: init writes the kind's defaults (a phase's, with
// phase), byte for byte, leaves a simulation that validates with them as
// overrides; a second init refuses, naming the files and writing nothing,
// unless forced; an unknown phase names the kind's phases.
func TestInitPrompts(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	folder := filepath.Join(dir, "prompts")
	written, err := session.InitPrompts(dir, "intention", false)
	want := []string{filepath.Join(folder, "phase1_intention_system.md"), filepath.Join(folder, "phase1_intention_user.md")}
	if err != nil || !slices.Equal(written, want) {
		t.Fatalf("InitPrompts(intention) = %v, %v; want %v", written, err, want)
	}
	for _, p := range written {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if def, _ := prompts.DefaultText(filepath.Base(p)); string(got) != string(def) {
			t.Errorf("%s is not the default", p)
		}
	}
	if v := session.Validate(dir, session.Settings{}); len(v.Problems) > 0 || len(v.Overrides) != 2 {
		t.Errorf("Validate after init: %v, overrides %v", v.Problems, v.Overrides)
	}

	edited := []byte("You are {{.Character.Name}}.")
	if err := os.WriteFile(want[0], edited, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = session.InitPrompts(dir, "", false)
	var ie *session.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), want[0]) || !strings.Contains(err.Error(), want[1]) || !strings.Contains(err.Error(), "--force") {
		t.Errorf("init over existing files = %v, want an InputError naming both and --force", err)
	}
	if got, _ := os.ReadFile(want[0]); string(got) != string(edited) {
		t.Error("a refused init changed an existing file")
	}
	if _, err := os.Stat(filepath.Join(folder, "phase2a_resolution_user.md")); err == nil {
		t.Error("a refused init wrote the files that were not there")
	}
	written, err = session.InitPrompts(dir, "", true)
	if err != nil || len(written) != 4 {
		t.Fatalf("init --force = %v, %v", written, err)
	}
	if got, _ := os.ReadFile(want[0]); string(got) == string(edited) {
		t.Error("init --force kept the edited file")
	}

	if _, err := session.InitPrompts(dir, "orders", false); !errors.As(err, &ie) || !strings.Contains(err.Error(), `--phase "orders": a narrative simulation's phases with prompt templates are intention, resolution`) {
		t.Errorf("unknown phase = %v", err)
	}
	if _, err := session.InitPrompts(t.TempDir(), "", false); !errors.As(err, &ie) {
		t.Errorf("init of a folder with no simulation = %v, want an InputError", err)
	}
}
