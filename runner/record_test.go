package runner

import (
	"testing"
	"unsafe"
)

// TestSameOr: a call's parsed output equal to its raw answer is the raw
// answer's string, not a copy of it; otherwise it is its own text, and no
// output is empty, whatever the raw answer.
func TestSameOr(t *testing.T) {
	raw := `{"intention":"I wait."}`
	got := sameOr(raw, []byte(raw))
	if got != raw || unsafe.StringData(got) != unsafe.StringData(raw) {
		t.Errorf("equal output: %q, shared %v; want the raw answer itself", got, unsafe.StringData(got) == unsafe.StringData(raw))
	}
	if got := sameOr("```json\n{}\n```", []byte("{}")); got != "{}" {
		t.Errorf("fenced answer: output %q, want {}", got)
	}
	if got := sameOr("not json", nil); got != "" {
		t.Errorf("no output: %q, want empty", got)
	}
}
