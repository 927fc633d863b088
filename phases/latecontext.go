package phases

import (
	"context"
	"sync"
	"time"
)

// lateContext is a context whose deadline is set after it is made: the
// calls of a phase that start before it (a round's, see round.go) run
// under the deadline of the phase, which starts later. It ends when its
// parent does or when cancelled (by resolve, with DeadlineExceeded when the
// phase's deadline passes).
type lateContext struct {
	context.Context // the parent, for its values

	done chan struct{} // closed once, by cancel; set before start
	once sync.Once
	stop func() bool // stops watching the parent; set before start

	mu       sync.Mutex
	err      error           // guarded by mu
	deadline time.Time       // guarded by mu
	phase    context.Context // the phase's context, once it began (endWith); guarded by mu
}

func newLateContext(parent context.Context) *lateContext {
	c := &lateContext{Context: parent, done: make(chan struct{})}
	c.stop = context.AfterFunc(parent, func() { c.cancel(parent.Err()) })
	return c
}

func (c *lateContext) Done() <-chan struct{} { return c.done }

func (c *lateContext) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Value looks in the phase's context first once the phase has begun, so
// that what the runner gives a phase's calls (the llm.Watch that emits
// their failures as they happen) reaches the calls started before it.
func (c *lateContext) Value(key any) any {
	c.mu.Lock()
	phase := c.phase
	c.mu.Unlock()
	if phase != nil {
		if v := phase.Value(key); v != nil {
			return v
		}
	}
	return c.Context.Value(key)
}

func (c *lateContext) Deadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.deadline, !c.deadline.IsZero()
}

// setDeadline says when the context will end: it ends then because the
// phase context whose deadline it is ends (resolve cancels it with that
// context's cause), never before it, so the runner always sees the phase's
// deadline passed when its late calls fail for it. Contexts made from this
// one see the deadline and need no timer of their own.
func (c *lateContext) setDeadline(d time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.deadline.IsZero() {
		c.deadline = d
	}
}

// endWith makes the context end when phase context pctx does, with its
// deadline and cause, and not before: then the runner sees the deadline
// passed when calls started early fail for it; and gives it pctx's values.
// It returns the function that stops watching pctx.
func (c *lateContext) endWith(pctx context.Context) func() bool {
	if d, ok := pctx.Deadline(); ok {
		c.setDeadline(d)
	}
	c.mu.Lock()
	c.phase = pctx
	c.mu.Unlock()
	return context.AfterFunc(pctx, func() { c.cancel(context.Cause(pctx)) })
}

// cancel ends the context with err, once.
func (c *lateContext) cancel(err error) {
	c.once.Do(func() {
		c.mu.Lock()
		c.err = err
		c.mu.Unlock()
		close(c.done)
	})
}

// release stops watching the parent.
func (c *lateContext) release() { c.stop() }
