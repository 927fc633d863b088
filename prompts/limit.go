package prompts

import (
	"fmt"
	"strings"
)

// MaxRenderedSize bounds the text one template renders: 1 MiB is about
// 250,000 tokens, past any model's context, so a template writing more
// (`{{range 2000000000}}...{{end}}` in an override) is a mistake, stopped
// before it grows memory.
const MaxRenderedSize = 1 << 20

// ErrTooLong is the cause of a *TemplateError whose rendering was stopped at
// MaxRenderedSize.
var ErrTooLong = fmt.Errorf("rendered text passes %d bytes, stopped there", MaxRenderedSize)

// limitedBuffer is a strings.Builder (its String does not copy the text)
// that refuses to grow past limit bytes: the write that would pass it fails
// with ErrTooLong, which stops text/template's Execute.
type limitedBuffer struct {
	strings.Builder
	limit int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > b.limit {
		return 0, ErrTooLong
	}
	return b.Builder.Write(p)
}

// WriteString is what text/template calls for the text between actions.
func (b *limitedBuffer) WriteString(s string) (int, error) {
	if b.Len()+len(s) > b.limit {
		return 0, ErrTooLong
	}
	return b.Builder.WriteString(s)
}
