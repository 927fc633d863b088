// Package texttest checks terminal output in tests.
package texttest

import (
	"strings"
	"sync"
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

// Buffer collects what a command or a logger writes from several
// goroutines while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String is what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
