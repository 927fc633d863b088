package prompts

import (
	"fmt"
	"strings"
	"time"
)

// MaxRenderedSize bounds the text one template renders: 1 MiB is about
// 250,000 tokens, past any model's context, so a template writing more
// (`{{range 2000000000}}...{{end}}` in an override) is a mistake, stopped
// before it grows memory.
const MaxRenderedSize = 1 << 20

// ErrTooLong is the cause of a *TemplateError whose rendering was stopped at
// MaxRenderedSize.
var ErrTooLong = fmt.Errorf("rendered text passes %d bytes, stopped there", MaxRenderedSize)

// limitedBuffer is the writer text/template renders into: a strings.Builder
// (its String does not copy the text) that refuses to grow past limit bytes.
// The write that would pass it fails with ErrTooLong, which stops Execute.
// The builder is a field, not embedded, so that no promoted WriteString
// gets around the limit.
//
// It also counts the writes, the steps guard put into the template among
// them, failing the one past MaxSteps with ErrTooManySteps, and every 64th
// looks at the clock, failing once the rendering has taken MaxRenderTime
// since start with ErrTooSlow.
type limitedBuffer struct {
	text  strings.Builder
	limit int
	steps int
	start time.Time
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.steps++; b.steps > MaxSteps {
		return 0, ErrTooManySteps
	}
	if b.steps%64 == 0 && time.Since(b.start) > MaxRenderTime {
		return 0, ErrTooSlow
	}
	if b.text.Len()+len(p) > b.limit {
		return 0, ErrTooLong
	}
	return b.text.Write(p)
}
