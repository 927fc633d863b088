package prompts

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// override writes text as the simulation's phase1_intention_system.md in a
// new folder and returns the folder and the file's path.
func override(t *testing.T, text string) (dir, path string) {
	t.Helper()
	dir = t.TempDir()
	os.Mkdir(filepath.Join(dir, OverrideDir), 0o755)
	path = filepath.Join(dir, OverrideDir, "phase1_intention_system.md")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, path
}

// TestHostileTemplateRefused: loops over numbers repeating their text more
// than MaxRepeat times, nested or not, and templates calling themselves are
// refused when parsed, naming the file and the line.
func TestHostileTemplateRefused(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, text, line string }{
		{"issue 24", "{{range 100000}}{{range 100000}}{{end}}{{end}}x\n", ":1: {{range 100000}}"},
		{"nested", "intro\n{{range 1000}}\n{{range $i := 1000}}{{$i}}{{end}}{{end}}", ":3: {{range $i := 1000}} repeats its text 1000 x 1000 times"},
		{"huge", "{{if true}}\n{{range (9223372036854775807)}}.{{end}}{{end}}", ":2:"},
		{"recursion", "a\n{{define \"r\"}}{{template \"r\" .}}{{end}}{{template \"r\" .}}", `:2: template "r" calls itself (r -> r)`},
		{"mutual", "{{define \"a\"}}{{template \"b\"}}{{end}}\n{{define \"b\"}}{{if true}}{{template \"a\"}}{{end}}{{end}}", `:2: template "a" calls itself (a -> b -> a)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, path := override(t, tt.text)
			_, err := New(dir)
			te, ok := errors.AsType[*TemplateError](err)
			if !ok || !errors.Is(err, ErrUnbounded) || te.Source != path || !strings.Contains(err.Error(), path+tt.line) {
				t.Errorf("New = %v, want a *TemplateError of ErrUnbounded with %s%s", err, path, tt.line)
			}
		})
	}
}

// TestBoundedTemplateAccepted: loops over numbers within MaxRepeat, and a
// template called by others, render as text/template renders them.
func TestBoundedTemplateAccepted(t *testing.T) {
	t.Parallel()
	text := `{{define "dot"}}.{{end}}{{range 100}}{{range 100}}{{template "dot"}}{{end}}{{end}}|{{range $i := 3}}{{$i}}{{end}}`
	dir, _ := override(t, text)
	r, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := r.Render("phase1_intention_system.md", nil)
	if want := strings.Repeat(".", 10000) + "|012"; err != nil || out != want {
		t.Errorf("Render = %d bytes, %v; want %d bytes", len(out), err, len(want))
	}
}

// TestHostileTemplateCannotHang: loops the parse-time check cannot count
// (over computed numbers) are stopped at MaxSteps, and steps that are each
// slow at MaxRenderTime (which may come first under the race detector); a
// template so stopped then fails at once. The test's own deadline, not a
// timing assertion, is what fails a hang.
func TestHostileTemplateCannotHang(t *testing.T) {
	t.Parallel()
	long := `(printf "%0100000d" 0)`
	for _, tt := range []struct {
		name, text string
		want       []error
	}{
		{"empty loops", fmt.Sprintf("{{range len %s}}{{range len %[1]s}}{{end}}{{end}}x", long), []error{ErrTooManySteps, ErrTooSlow}},
		{"silent actions", fmt.Sprintf("{{range len %s}}{{$x := 1}}{{range len %[1]s}}{{$x = 2}}{{end}}{{end}}", long), []error{ErrTooManySteps, ErrTooSlow}},
		{"slow actions", fmt.Sprintf(`{{range len %s}}{{range len %[1]s}}{{$x := printf "%%01000000d" 0}}{{end}}{{end}}`, long), []error{ErrTooSlow}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir, path := override(t, tt.text)
			r, err := New(dir)
			if err != nil {
				t.Fatal(err)
			}
			for i := range 2 {
				done := make(chan error, 1)
				go func() {
					_, err := r.Render("phase1_intention_system.md", nil)
					done <- err
				}()
				select {
				case err := <-done:
					te, ok := errors.AsType[*TemplateError](err)
					if !ok || !slices.ContainsFunc(tt.want, func(e error) bool { return errors.Is(err, e) }) || te.Source != path {
						t.Errorf("rendering %d: %v, want a *TemplateError of %v naming %s", i+1, err, tt.want, path)
					}
				case <-time.After(time.Minute):
					t.Fatalf("rendering %d still running after a minute", i+1)
				}
			}
		})
	}
}
