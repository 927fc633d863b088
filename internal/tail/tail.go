// Package tail keeps the end of a stream: the last bytes a child process
// wrote on its standard error, for the error that reports it died.
package tail

import (
	"strings"
	"sync"
)

// Buffer is an io.Writer that keeps the last Max bytes written to it. It
// is safe for concurrent use.
type Buffer struct {
	Max int

	mu  sync.Mutex
	buf []byte
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if over := len(b.buf) - b.Max; over > 0 {
		b.buf = append(b.buf[:0], b.buf[over:]...)
	}
	return len(p), nil
}

// String is what is kept, trimmed of surrounding white space.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.TrimSpace(string(b.buf))
}
