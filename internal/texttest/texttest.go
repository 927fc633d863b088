// Package texttest checks terminal output in tests.
package texttest

import (
	"strings"
	"testing"
)

// InOrder reports an error unless out holds every part, in that order.
func InOrder(t testing.TB, out string, parts ...string) {
	t.Helper()
	rest := out
	for _, p := range parts {
		i := strings.Index(rest, p)
		if i < 0 {
			t.Errorf("output lacks %q (in order) in:\n%s", p, out)
			return
		}
		rest = rest[i+len(p):]
	}
}
