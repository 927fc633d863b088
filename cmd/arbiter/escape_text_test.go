package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds what a model, a server or a shared file may write to take
// over a terminal.
var hostile = []struct{ name, in, want string }{
	{"plain", "tick 3: Ada waits\n\tby the door", "tick 3: Ada waits\n\tby the door"},
	{"ESC", "a\x1bb", `a\x1bb`},
	{"OSC 52 clipboard", "\x1b]52;c;cm0gLXJmIH4=\a", `\x1b]52;c;cm0gLXJmIH4=\a`},
	{"OSC 0 title", "\x1b]0;pwned\x1b\\", `\x1b]0;pwned\x1b\`},
	{"CSI 2J", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
	{"NUL", "a\x00b", `a\x00b`},
	{"DEL", "a\x7fb", `a\u007fb`},
	{"C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
	{"C1 OSC", "\u009d0;t\u009c", `\u009d0;t\u009c`},
	{"carriage return", "safe\rEVIL", `safe\rEVIL`},
	{"line ending", "one\r\ntwo", "one\r\ntwo"},
	{"backspace", "rm\b\b", `rm\b\b`},
	{"not UTF-8", "a\x9bb\xff", `a\x9bb\xff`},
	{"UTF-8 kept", "⚖️ café — ok", "⚖️ café — ok"},
}

func TestEscaped(t *testing.T) {
	for _, tc := range hostile {
		t.Run(tc.name, func(t *testing.T) {
			got := escaped(tc.in)
			if got != tc.want {
				t.Errorf("escaped(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if !utf8.ValidString(got) || strings.ContainsFunc(got, func(r rune) bool { return isControl(r) && r != '\r' }) {
				t.Errorf("escaped(%q) = %q still holds a control character", tc.in, got)
			}
		})
	}
}

func TestEscapedLine(t *testing.T) {
	if got, want := escapedLine("a\nb\tc\x1b\r\n"), `a\nb\tc\x1b\n`; got != want {
		t.Errorf("escapedLine = %q, want %q", got, want)
	}
}

// TestWriterSplitWrites: a character or a line ending split between two
// writes is seen whole, whatever the split.
func TestEscapeWriterSplitWrites(t *testing.T) {
	for _, tc := range hostile {
		for cut := 0; cut <= len(tc.in); cut++ {
			var out bytes.Buffer
			w := newEscapeWriter(&out)
			w.Write([]byte(tc.in[:cut]))
			w.Write([]byte(tc.in[cut:]))
			w.Flush()
			if out.String() != tc.want {
				t.Errorf("%s cut at %d: wrote %q, want %q", tc.name, cut, out.String(), tc.want)
			}
		}
	}
}

// TestWriterKeepsJSON: a JSON document written through a escapeWriter is still
// one, with the same values: encoding/json escapes C0 itself, and DEL and C1
// are written as JSON escapes.
func TestEscapeWriterKeepsJSON(t *testing.T) {
	in := map[string]string{"text": "a\x1b]52;c;eA==\a\x7f\u009b2J\x00z"}
	var out bytes.Buffer
	if err := json.NewEncoder(newEscapeWriter(&out)).Encode(in); err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsFunc(out.Bytes(), isControl) {
		t.Errorf("raw control in %q", out.String())
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["text"] != in["text"] {
		t.Errorf("decoded %q (%v), want %q", back["text"], err, in["text"])
	}
}

// TestControlAndStyled: arbiter's own escapes pass a escapeWriter; writeStyled lets
// colour through and nothing else.
func TestControlAndStyled(t *testing.T) {
	var out bytes.Buffer
	w := newEscapeWriter(&out)
	writeControl(w, "\x1b]52;c;eA==\a")
	writeStyled(w, "\x1b[1;31mERROR\x1b[0m \x1b[2J\x1b]0;t\a")
	if want := "\x1b]52;c;eA==\a\x1b[1;31mERROR\x1b[0m " + `\x1b[2J\x1b]0;t\a`; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}

func FuzzEscapeWriter(f *testing.F) {
	for _, tc := range hostile {
		f.Add(tc.in, 3)
	}
	f.Fuzz(func(t *testing.T, s string, cut int) {
		var out bytes.Buffer
		w := newEscapeWriter(&out)
		cut = min(max(cut, 0), len(s))
		w.Write([]byte(s[:cut]))
		w.Write([]byte(s[cut:]))
		w.Flush()
		if got := out.String(); got != escaped(s) {
			t.Errorf("escapeWriter %q, escaped %q", got, escaped(s))
		}
		for _, r := range strings.ReplaceAll(out.String(), "\r\n", "\n") {
			if isControl(r) {
				t.Fatalf("raw control %U in %q", r, out.String())
			}
		}
	})
}

// TestColourWriter: a colour writer lets colour and arbiter's own escapes
// through, nothing else.
func TestColourWriter(t *testing.T) {
	var out bytes.Buffer
	w := colourPassing(newEscapeWriter(&out))
	writeControl(w, "\x1b[H\x1b[2J")
	w.Write([]byte("\x1b[33mProblem:\x1b[0m \x1b]52;c;eA==\a"))
	if want := "\x1b[H\x1b[2J\x1b[33mProblem:\x1b[0m " + `\x1b]52;c;eA==\a`; out.String() != want {
		t.Errorf("wrote %q, want %q", out.String(), want)
	}
}
