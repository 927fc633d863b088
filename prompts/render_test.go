package prompts

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenCases are the renders kept in testdata: every default template on the
// fixture world, plus the branches for a lone character and an empty place.
func goldenCases(t *testing.T) []struct {
	golden, template string
	data             any
} {
	t.Helper()
	sim, st := fixture()
	ada, err := NewSnapshot(sim, st).IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	cy, err := NewSnapshot(sim, st).IntentionData("cy")
	if err != nil {
		t.Fatal(err)
	}
	cottage, err := NewSnapshot(sim, st).ResolutionData("cottage", map[string]string{"ada": "I lock the oil store and ask Bo where the missing cans went."})
	if err != nil {
		t.Fatal(err)
	}
	jetty, err := NewSnapshot(sim, st).ResolutionData("jetty", nil)
	if err != nil {
		t.Fatal(err)
	}
	// The cottage's crowd shared by two calls: the second resolves bo, sees
	// ada as one of the others, and leaves the place's update to call 1.
	split, err := NewSnapshot(sim, st).ResolutionPart("cottage", map[string]string{"ada": "I lock the oil store and ask Bo where the missing cans went."}, []string{"bo"}, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	return []struct {
		golden, template string
		data             any
	}{
		{"phase1_intention_system", "phase1_intention_system.md", ada},
		{"phase1_intention_user", "phase1_intention_user.md", ada},
		{"phase1_intention_user_alone", "phase1_intention_user.md", cy},
		{"phase2a_resolution_system", "phase2a_resolution_system.md", cottage},
		{"phase2a_resolution_user", "phase2a_resolution_user.md", cottage},
		{"phase2a_resolution_user_empty", "phase2a_resolution_user.md", jetty},
		{"phase2a_resolution_user_split", "phase2a_resolution_user.md", split},
	}
}

func TestGolden(t *testing.T) {
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range goldenCases(t) {
		t.Run(tc.golden, func(t *testing.T) {
			got, err := r.Render(tc.template, tc.data)
			if err != nil {
				t.Fatal(err)
			}
			got += "\n"
			path := filepath.Join("testdata", tc.golden+".golden")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./prompts -update)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (run go test ./prompts -update to accept):\n%s", tc.template, path, got)
			}
		})
	}
}

func TestNames(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"chronicle_system.md", "conquest_system.md", "duel_build.md", "duel_charges.md", "duel_system.md", "phase1_intention_system.md", "phase1_intention_user.md", "phase2a_resolution_system.md", "phase2a_resolution_user.md"}
	if got := r.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("Names = %q, want %q", got, want)
	}
	for _, n := range want {
		if r.Source(n) != "default" {
			t.Errorf("Source(%s) = %q, want default", n, r.Source(n))
		}
	}
}

// simWith makes a simulation folder whose prompts/ holds the given files.
func simWith(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, OverrideDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, OverrideDir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestOverrideByName(t *testing.T) {
	t.Parallel()
	dir := simWith(t, map[string]string{
		"phase1_intention_user.md": "Tick {{.Simulation.Tick}}: {{.Character.Name}} in {{.Location.Name}}.\n",
		".DS_Store":                "ignored",
	})
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim, st := fixture()
	d, err := NewSnapshot(sim, st).IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Render("phase1_intention_user.md", d)
	if err != nil {
		t.Fatal(err)
	}
	if want := "Tick 13: Ada Marsh in Keeper's Cottage."; got != want {
		t.Errorf("override rendered %q, want %q", got, want)
	}
	if src := r.Source("phase1_intention_user.md"); src != filepath.Join(dir, "prompts", "phase1_intention_user.md") {
		t.Errorf("Source = %q, want the override path", src)
	}
	// The other templates keep their defaults.
	sys, err := r.Render("phase1_intention_system.md", d)
	if err != nil || !strings.HasPrefix(sys, "You play one character in") || !strings.Contains(sys, "You are Ada Marsh.") {
		t.Errorf("default system prompt = %.40q, %v", sys, err)
	}
	if r.Source("phase1_intention_system.md") != "default" {
		t.Error("system prompt not from the default")
	}
}

func TestNoOverrideFolder(t *testing.T) {
	t.Parallel()
	r, err := New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Names()) != 9 {
		t.Errorf("Names = %q", r.Names())
	}
}

func TestUnknownOverrideFile(t *testing.T) {
	t.Parallel()
	dir := simWith(t, map[string]string{"phase1_intentions_user.md": "typo in the name"})
	_, err := New(dir)
	path := filepath.Join(dir, "prompts", "phase1_intentions_user.md")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "phase1_intention_user.md") {
		t.Fatalf("New = %v, want an error naming %s and the known names", err, path)
	}
}

func TestParseErrorNamesFileAndLine(t *testing.T) {
	t.Parallel()
	dir := simWith(t, map[string]string{"phase2a_resolution_user.md": "line one\nline two {{.Location.Name | shout}}\n"})
	_, err := New(dir)
	var te *TemplateError
	if !errors.As(err, &te) {
		t.Fatalf("New = %v, want a *TemplateError", err)
	}
	path := filepath.Join(dir, "prompts", "phase2a_resolution_user.md")
	if te.Source != path || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "phase2a_resolution_user.md:2:") {
		t.Errorf("error %q does not name %s and line 2", err, path)
	}
}

func TestMissingKeyIsAnError(t *testing.T) {
	t.Parallel()
	dir := simWith(t, map[string]string{
		"phase1_intention_user.md":     "{{.Character.Nickname}}",
		"phase1_intention_system.md":   "{{.nickname}}",
		"phase2a_resolution_system.md": "{{.Location.Name}}",
	})
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	sim, st := fixture()
	d, err := NewSnapshot(sim, st).IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, template string
		data           any
		key            string
	}{
		{"struct field", "phase1_intention_user.md", d, "Nickname"},
		{"map key", "phase1_intention_system.md", map[string]any{"name": "Ada"}, "nickname"},
		{"nil data", "phase2a_resolution_system.md", nil, "Location"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := r.Render(tt.template, tt.data)
			var te *TemplateError
			if !errors.As(err, &te) || te.Name != tt.template {
				t.Fatalf("Render = %q, %v; want a *TemplateError for %s", out, err, tt.template)
			}
			if !strings.Contains(err.Error(), tt.template) || !strings.Contains(err.Error(), tt.key) {
				t.Errorf("error %q does not name the template and %q", err, tt.key)
			}
		})
	}
	if _, err := r.Render("nope.md", d); err == nil || !strings.Contains(err.Error(), `"nope.md"`) {
		t.Errorf("Render(nope.md) = %v", err)
	}
}

// TestDefaultsRenderEveryState renders every default template for every
// character and location of the fixture: no default may miss a field.
func TestDefaultsRenderEveryState(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	sim, st := fixture()
	for _, c := range sim.Characters {
		d, err := NewSnapshot(sim, st).IntentionData(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"phase1_intention_system.md", "phase1_intention_user.md"} {
			if out, err := r.Render(n, d); err != nil || strings.Contains(out, "<no value>") {
				t.Errorf("%s for %s: %v\n%s", n, c.ID, err, out)
			}
		}
	}
	for _, l := range sim.Locations {
		d, err := NewSnapshot(sim, st).ResolutionData(l.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []string{"phase2a_resolution_system.md", "phase2a_resolution_user.md"} {
			if out, err := r.Render(n, d); err != nil || strings.Contains(out, "<no value>") {
				t.Errorf("%s for %s: %v\n%s", n, l.ID, err, out)
			}
		}
	}
}

// TestSystemPromptsShareTheirStaticText: the default system prompts of one
// phase are identical up to their last section, the one about the entity
// (who the character is, which place the game master resolves), so that a
// provider's prefix cache serves the premise and the instructions to every
// call of the phase.
func TestSystemPromptsShareTheirStaticText(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	sim, st := fixture()
	w := NewSnapshot(sim, st)
	var intention, resolution []string
	for _, c := range sim.Characters {
		d, err := w.IntentionData(c.ID)
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Render("phase1_intention_system.md", d)
		if err != nil {
			t.Fatal(err)
		}
		intention = append(intention, out)
	}
	for _, l := range sim.Locations {
		d, err := w.ResolutionData(l.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := r.Render("phase2a_resolution_system.md", d)
		if err != nil {
			t.Fatal(err)
		}
		resolution = append(resolution, out)
	}
	for _, tc := range []struct {
		name, last string
		prompts    []string
	}{
		{"intention", "# Who you are", intention},
		{"resolution", "# The place", resolution},
	} {
		if len(tc.prompts) < 2 {
			t.Fatalf("%s: %d prompts, the fixture needs two or more", tc.name, len(tc.prompts))
		}
		shared := SharedPrefix(tc.prompts)
		cut := strings.LastIndex(tc.prompts[0], tc.last)
		if cut < 0 || shared < cut+len(tc.last) {
			t.Errorf("%s: the prompts share %d bytes; want everything before and including %q (%d):\n%s", tc.name, shared, tc.last, cut+len(tc.last), tc.prompts[0][:min(shared, len(tc.prompts[0]))])
		}
	}
}

func TestSharedPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		texts []string
		want  int
	}{
		{nil, 0},
		{[]string{"abc"}, 3},
		{[]string{"abcd", "abxy", "abc"}, 2},
		{[]string{"abc", "ab"}, 2},
		{[]string{"x", "y"}, 0},
	} {
		if got := SharedPrefix(tc.texts); got != tc.want {
			t.Errorf("SharedPrefix(%q) = %d, want %d", tc.texts, got, tc.want)
		}
	}
}

// TestLatest: the template function latest keeps the last n entries, all of
// them when there are fewer, none for n <= 0.
func TestLatest(t *testing.T) {
	t.Parallel()
	m := []world.MemoryEntry{{Tick: 1, Entry: "a"}, {Tick: 2, Entry: "b"}, {Tick: 3, Entry: "c"}}
	for _, c := range []struct {
		n    int
		want []int
	}{{2, []int{2, 3}}, {3, []int{1, 2, 3}}, {5, []int{1, 2, 3}}, {0, nil}, {-1, nil}} {
		var got []int
		for _, e := range latest(c.n, m) {
			got = append(got, e.Tick)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("latest %d: ticks %v, want %v", c.n, got, c.want)
		}
	}
	if got := latest(3, nil); len(got) != 0 {
		t.Errorf("latest of no memories: %v", got)
	}
}

// TestCheckListsEveryProblem: a stray file, a folder, a template that does
// not parse and one that is fine: Check names the first three, each with
// its file, serves the good override and the default in place of the one
// that did not parse, and lists the two files that name a template as
// overrides; New returns the same problems, all of them.
func TestCheckListsEveryProblem(t *testing.T) {
	t.Parallel()
	dir := simWith(t, map[string]string{
		"phase1_intentions_user.md":    "a typo in the name",
		"phase2a_resolution_user.md":   "line one\n{{.Location.Name | shout}}\n",
		"phase1_intention_system.md":   "You are {{.Character.Name}}.",
		"phase2a_resolution_system.md": "{{.Location.Name}}",
	})
	if err := os.Mkdir(filepath.Join(dir, OverrideDir, "drafts"), 0o755); err != nil {
		t.Fatal(err)
	}
	path := func(name string) string { return filepath.Join(dir, OverrideDir, name) }
	r, problems := Check(dir)
	if r == nil || len(problems) != 3 {
		t.Fatalf("Check = %v, %d problems, want a renderer and 3:\n%v", r, len(problems), errors.Join(problems...))
	}
	for i, want := range []string{path("drafts") + ": not a prompt template", path("phase1_intentions_user.md") + ": not a prompt template", path("phase2a_resolution_user.md")} {
		if !strings.Contains(problems[i].Error(), want) {
			t.Errorf("problem %d = %q, want it to name %q", i+1, problems[i], want)
		}
	}
	var te *TemplateError
	if !errors.As(problems[2], &te) || !strings.Contains(te.Error(), "phase2a_resolution_user.md:2:") {
		t.Errorf("problem 3 = %v, want a *TemplateError at line 2", problems[2])
	}
	if r.Source("phase2a_resolution_user.md") != "default" || r.Source("phase1_intention_system.md") != path("phase1_intention_system.md") {
		t.Errorf("sources: %q, %q; want the default for the broken override, the file for the good one",
			r.Source("phase2a_resolution_user.md"), r.Source("phase1_intention_system.md"))
	}
	want := []Override{
		{Template: "phase1_intention_system.md", Path: path("phase1_intention_system.md")},
		{Template: "phase2a_resolution_system.md", Path: path("phase2a_resolution_system.md")},
		{Template: "phase2a_resolution_user.md", Path: path("phase2a_resolution_user.md")},
	}
	if got := r.Overrides(); !reflect.DeepEqual(got, want) {
		t.Errorf("Overrides = %v, want %v", got, want)
	}
	_, err := New(dir)
	for _, p := range problems {
		if err == nil || !strings.Contains(err.Error(), p.Error()) {
			t.Errorf("New = %v; want it to hold %q", err, p)
		}
	}
}

// TestDefaultText: the text of each default is what New serves unless
// overridden; a name that is no template is an error naming it.
func TestDefaultText(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range r.Names() {
		text, err := DefaultText(name)
		if err != nil {
			t.Fatal(err)
		}
		parsed, problems := Check(simWith(t, map[string]string{name: string(text)}))
		if len(problems) > 0 || parsed.Digest(name) != r.Digest(name) {
			t.Errorf("%s: its default text does not make the default template (%v)", name, problems)
		}
	}
	for _, bad := range []string{"nope.md", "../render.go", ""} {
		if _, err := DefaultText(bad); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("DefaultText(%q) = %v, want an error naming it", bad, err)
		}
	}
}
