package prompts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnclosedBlockNamesItsLine: issue 25 item 10. A block opened and never
// closed is reported at the line that opened it, not at the end of the file
// where text/template noticed.
func TestUnclosedBlockNamesItsLine(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"hello\n{{if .A}}\nfoo\n{{range .B}}\nbar\n{{end}}\nbaz\n", `x.md:2: {{if .A}} is never closed`},
		{"a\n{{- range $i, $c := .B -}}\n{{ \"}}\" }}{{/* {{end}} */}}\n", `x.md:2: {{- range $i, $c := .B -}} is never closed`},
		{"{{with .A}}{{if .B}}{{else}}{{end}}\n\n", `x.md:1: {{with .A}} is never closed`},
		{"{{define \"t\"}}x\n{{block \"u\" .}}y{{end}}", `x.md:1: {{define "t"}} is never closed`},
	} {
		dir := t.TempDir()
		os.MkdirAll(filepath.Join(dir, OverrideDir), 0o755)
		path := filepath.Join(dir, OverrideDir, "phase1_intention_user.md")
		os.WriteFile(path, []byte(tc.text), 0o644)
		_, err := New(dir)
		want := strings.Replace(tc.want, "x.md", "phase1_intention_user.md", 1)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "add {{end}}") {
			t.Errorf("%q: %v; want %q", tc.text, err, want)
		}
	}
	// Other parse errors keep text/template's words.
	for _, text := range []string{"{{if .A}}x{{end}}{{end}}", "{{.A", "{{if}}{{end}}"} {
		if _, line, ok := unclosed(text); ok {
			t.Errorf("unclosed(%q) = line %v: every block is closed", text, line)
		}
	}
}

// FuzzUnclosed: the scanner of actions never panics, and a line it names is
// one of the text's.
func FuzzUnclosed(f *testing.F) {
	for _, s := range []string{"{{if .A}}", "{{\"}}\"}}{{range .}}", "{{/*", "{{'}'}}{{with .}}", "{{-  if 1 -}}\n\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		line, _, ok := unclosed(text)
		if ok && (line < 1 || line > 1+strings.Count(text, "\n")) {
			t.Fatalf("line %d of a text of %d lines", line, 1+strings.Count(text, "\n"))
		}
	})
}
