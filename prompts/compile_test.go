package prompts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"github.com/arbiter-sim/arbiter/world"
)

// bothWays renders text on data compiled and with text/template, and
// reports whether it compiled.
func bothWays(t *testing.T, text string, data any) (compiledText, templateText string, compiledOK bool) {
	t.Helper()
	tmpl, err := template.New("t").Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		t.Fatal(err)
	}
	var want limitedBuffer
	want.limit = MaxRenderedSize
	if err := tmpl.Execute(&want, data); err != nil {
		templateText = "error: " + err.Error()
	} else {
		templateText = want.String()
	}
	p := new(compiled).program(tmpl, reflect.TypeOf(data))
	if p == nil {
		return "", templateText, false
	}
	var got limitedBuffer
	got.limit = MaxRenderedSize
	if !p(&got, reflect.ValueOf(data), nil) {
		return "", templateText, false
	}
	return got.String(), templateText, true
}

// TestDefaultTemplatesCompile: the narrative's default templates compile
// for their data and render what text/template renders.
func TestDefaultTemplatesCompile(t *testing.T) {
	t.Parallel()
	sim, st := fixture()
	w := NewSnapshot(sim, st)
	id, err := w.IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := w.IntentionData("cy")
	if err != nil {
		t.Fatal(err)
	}
	rd, err := w.ResolutionData("cottage", map[string]string{"ada": "I lock the oil store."})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := w.ResolutionData("jetty", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		file string
		data any
	}{
		{"phase1_intention_system.md", id}, {"phase1_intention_user.md", id}, {"phase1_intention_user.md", alone},
		{"phase2a_resolution_system.md", rd}, {"phase2a_resolution_user.md", rd}, {"phase2a_resolution_user.md", empty},
	} {
		text, err := defaults.ReadFile(tt.file)
		if err != nil {
			t.Fatal(err)
		}
		got, want, ok := bothWays(t, string(text), tt.data)
		if !ok {
			t.Errorf("%s does not compile for %T", tt.file, tt.data)
		} else if got != want {
			t.Errorf("%s compiled renders\n%s\nwant (text/template)\n%s", tt.file, got, want)
		}
	}
}

// TestCompiledAsTextTemplate: each construct a program handles renders as
// text/template renders it, and what it does not handle is not compiled,
// or not rendered, so that text/template renders it.
func TestCompiledAsTextTemplate(t *testing.T) {
	t.Parallel()
	data := ResolutionData{
		Simulation: SimulationData{ID: "s", Title: "T <&>", Tick: 0},
		Location:   LocationData{ID: "l", Name: "Hall", Connections: []Link{{"a", "A"}, {"b", "B"}}},
		Characters: []PresentCharacter{
			{ID: "ada", Name: "Ada", Memory: []world.MemoryEntry{{Tick: 1, Entry: "one"}, {Tick: 2, Entry: "two"}, {Tick: 3, Entry: "three"}, {Tick: 4, Entry: "four"}}, Intention: ""},
			{ID: "bo", Name: "Bo", InternalState: "calm"},
		},
		Present: []string{"ada", "bo"},
	}
	compiles := []string{
		"{{.Simulation.Title}} {{.Simulation.Tick}} {{.Location.Name}}",
		"{{range $i, $l := .Location.Connections}}{{if $i}}, {{end}}{{$l.Name}}({{$i}}){{else}}none{{end}}",
		"{{range $c := .Characters}}{{$c.Name}}/{{$.Location.Name}}{{end}}",
		"{{range .Characters}}{{.Name}}:{{range latest 3 .Memory}}[{{.Tick}} {{.Entry}}]{{else}} nothing{{end}}{{end}}",
		"{{range .Characters}}{{or .Intention .InternalState \"nothing\"}};{{end}}",
		"{{with .Location.Moment}}moment {{.}}{{else}}no moment{{end}}|{{with .Location.Name}}{{.}}{{end}}",
		"{{if .Present}}{{join .Present \", \"}}{{else}}nobody{{end}} {{if .Simulation.Tick}}t{{else}}zero{{end}}",
		"{{range .Present}}{{.}} {{end}}{{range .Reachable}}x{{else}}none{{end}}",
		"{{range latest 0 (index .Characters 0).Memory}}{{end}}",
		"{{with .Location}}{{.ID}}{{with .Connections}}{{len .}}{{end}}{{end}}",
		"{{range $x := .Present}}{{range $y := $.Reachable}}{{$y}}{{else}}[{{$x}}]{{end}}{{end}}",
		"{{range $i, $c := .Characters}}{{$i}}{{else}}{{end}}{{0x10}} {{'a'}} {{-3}}",
	}
	for i, text := range compiles {
		got, want, ok := bothWays(t, text, data)
		if i < 8 && !ok {
			t.Errorf("%q does not compile", text)
		}
		if ok && got != want {
			t.Errorf("%q compiled renders %q, want %q", text, got, want)
		}
	}
	for _, text := range []string{
		"{{.Location}}",                        // a struct printed by fmt
		"{{.Characters}}",                      // a slice printed by fmt
		"{{printf \"%d\" .Simulation.Tick}}",   // another function
		"{{if eq .Location.ID \"l\"}}x{{end}}", // a comparison
		"{{$x := .Location}}{{$x.Name}}",       // a variable assigned
		"{{.Location.Name | len}}",             // a pipeline
		"{{.Nope}}",                            // no such field: text/template's error
		"{{range .Location.Name}}{{end}}",      // a range over a string
		"{{template \"t\"}}",                   // another template
		"{{1e6}} {{or 0 1000000.0}}",           // numbers text/template reads as float64
		"{{range $x := .Present}}{{range $x := $.Reachable}}{{$x}}{{else}}[{{$x}}]{{end}}{{end}}", // the else's $x is the empty slice
	} {
		if got, want, ok := bothWays(t, text, data); ok {
			t.Errorf("%q compiled (rendering %q; text/template: %q); want it left to text/template", text, got, want)
		}
	}
}

// TestRenderFallsBack: Render gives text/template's text, or its error,
// where a template does not compile or its program stops.
func TestRenderFallsBack(t *testing.T) {
	t.Parallel()
	const user = "phase1_intention_user.md"
	r, err := New(simWith(t, map[string]string{user: "{{.Character.Name}} {{printf \"%03d\" .Simulation.Tick}}"}))
	if err != nil {
		t.Fatal(err)
	}
	sim, st := fixture()
	d, err := NewSnapshot(sim, st).IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Render(user, d); err != nil || got != "Ada Marsh 013" {
		t.Errorf("Render = %q, %v; want text/template's %q", got, err, "Ada Marsh 013")
	}
	// A program that runs past the size limit stops; text/template then
	// reports the limit.
	d.Character.Name = strings.Repeat("x", MaxRenderedSize)
	if _, err := r.Render(user, d); err == nil || !strings.Contains(err.Error(), ErrTooLong.Error()) {
		t.Errorf("over the limit: %v; want %v", err, ErrTooLong)
	}
	r2, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Render("phase1_intention_system.md", d); err == nil || !strings.Contains(err.Error(), ErrTooLong.Error()) {
		t.Errorf("compiled default over the limit: %v; want %v", err, ErrTooLong)
	}
}

// FuzzCompiledTemplates: the default narrative templates render, compiled,
// what text/template renders, whatever the world holds.
func FuzzCompiledTemplates(f *testing.F) {
	f.Add("Ada", "A keeper <of> \"lights\" & such\n", "", "Rain.", 3, 2, 7)
	f.Add("", "", "calm", "", 0, 0, 0)
	f.Add(" Ada ", "\n spaced \n", " ", "\t", 2, 12, 1)
	f.Add("\u2028é", "\x00\xff", "\t", "x", 12, 11, -1)
	texts := map[string]string{}
	for _, name := range []string{"phase1_intention_system.md", "phase1_intention_user.md", "phase2a_resolution_system.md", "phase2a_resolution_user.md"} {
		text, err := defaults.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		texts[name] = string(text)
	}
	f.Fuzz(func(t *testing.T, name, description, state, moment string, others, memories, tick int) {
		others, memories = min(max(others, 0), 12), min(max(memories, 0), 12)
		mem := make([]world.MemoryEntry, memories)
		for i := range mem {
			mem[i] = world.MemoryEntry{Tick: i + tick, Entry: fmt.Sprint(description, i)}
		}
		loc := LocationData{ID: "l", Name: name, Description: description, Moment: moment, Scene: state}
		for i := range others % 4 {
			loc.Connections = append(loc.Connections, Link{fmt.Sprint("c", i), fmt.Sprint(name, i)})
		}
		id := IntentionData{Simulation: SimulationData{"s", name, description, tick},
			Character: CharacterData{ID: "me", Name: name, Description: description, InternalState: state, ExternalIntent: moment, Memory: mem},
			Location:  loc}
		rd := ResolutionData{Simulation: id.Simulation, Location: loc, Present: []string{}, Reachable: []string{"l"}}
		for i := range others {
			id.Others = append(id.Others, Other{ID: fmt.Sprint("o", i), Name: fmt.Sprint(name, i), ExternalIntent: moment[:min(i, len(moment))]})
			rd.Characters = append(rd.Characters, PresentCharacter{ID: fmt.Sprint("o", i), Name: name, Description: description,
				InternalState: state[:min(i, len(state))], Memory: mem[:min(i, len(mem))], Intention: moment})
			rd.Present = append(rd.Present, fmt.Sprint("o", i))
		}
		for file, text := range texts {
			data := any(id)
			if strings.HasPrefix(file, "phase2a") {
				data = rd
			}
			got, want, ok := bothWays(t, text, data)
			if !ok {
				t.Fatalf("%s did not compile or render", file)
			}
			if got != want {
				t.Fatalf("%s compiled renders\n%q\nwant (text/template)\n%q", file, got, want)
			}
		}
	})
}
