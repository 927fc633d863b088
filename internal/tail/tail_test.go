package tail

import "testing"

func TestBufferKeepsTheEnd(t *testing.T) {
	t.Parallel()
	b := &Buffer{Max: 5}
	for _, s := range []string{"ab", "cdef", "g"} {
		if n, err := b.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if got := b.String(); got != "cdefg" {
		t.Errorf("tail = %q, want %q", got, "cdefg")
	}
	if got := (&Buffer{Max: 10}).String(); got != "" {
		t.Errorf("empty tail = %q", got)
	}
}
