package phases

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// overlap lets the game master of a location start as soon as the intentions of
// the characters there are in, while the other characters' intention calls
// are still being made: the two phases of a tick overlap, and one slow
// intention delays its own location only. Each location still sees every
// intention of its characters (a failed call's fallback included). The
// runner's view is unchanged: the resolution phase begins when the
// intention phase ends (its events, budget check and deadline), and its
// calls are those that phase waits for; its deadline then bounds the calls
// already under way.
type overlap struct {
	env   Env // of the resolution phase
	st    *world.State
	w     *prompts.Snapshot
	early bool // start a location's call during the intention phase
	ctx   *lateContext

	mu       sync.Mutex
	pending  []int             // per location: intentions still to come
	fellBack []bool            // per location: one of its intentions is a fallback
	answered bool              // an intention call has succeeded: the endpoint works
	intents  map[string]string // character -> intention (or its fallback)
	started  []bool
	groups   [][]Group               // per location: its calls, one per group of its crowd
	first    []int                   // per location: the index of its first call; then len(calls)
	parts    []Outcome[MasterOutput] // per call: written by the worker that made it
	logs     [][]heldRecord          // per call: its log, held until resolve
	buildErr error
	index    map[string]int      // location id -> index
	asks     []map[string]string // per location started: the intentions its calls carry
	ready    chan int            // the calls of the locations started, for the workers
	closed   sync.Once           // of ready
	wg       sync.WaitGroup      // the workers
}

// newOverlap prepares the resolution of every location of the tick after
// st; with early set, locations start as their intentions come in.
func newOverlap(ctx context.Context, env Env, st *world.State, w *prompts.Snapshot, early bool, workers int) *overlap {
	locs := env.Sim.Locations
	o := &overlap{env: env, st: st, w: w, early: early, ctx: newLateContext(ctx),
		pending: make([]int, len(locs)), fellBack: make([]bool, len(locs)), intents: make(map[string]string, len(env.Sim.Characters)),
		started: make([]bool, len(locs)), groups: make([][]Group, len(locs)), first: make([]int, len(locs)+1), index: make(map[string]int, len(locs))}
	per := env.perCall()
	for i, l := range locs {
		o.index[l.ID] = i
		o.pending[i] = len(w.Present(l.ID))
		o.groups[i] = Groups(w.Present(l.ID), per)
		o.first[i+1] = o.first[i] + len(o.groups[i])
	}
	n := o.first[len(locs)]
	o.parts, o.logs = make([]Outcome[MasterOutput], n), make([][]heldRecord, n)
	o.asks, o.ready = make([]map[string]string, len(locs)), make(chan int, n)
	// As many workers as a batch of calls runs (twice the calls in flight,
	// see llm.Client.Workers): a call's prompt is rendered when a worker
	// takes it, and is ready when a slot frees.
	for range max(1, min(workers, n)) {
		o.wg.Add(1)
		go o.work()
	}
	return o
}

// arrived takes a character's intention. A location starts early once it
// has them all, none a fallback, and some intention call has succeeded (an
// empty location waits for that too): when the endpoint fails every call,
// or a cassette has no answer, no game master call is made before the runner
// has judged the intention phase.
func (o *overlap) arrived(out Outcome[string]) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.intents[out.ID] = out.Value
	i, ok := o.index[o.st.Characters[out.ID].Location]
	if ok {
		o.pending[i]--
		o.fellBack[i] = o.fellBack[i] || out.Fallback
	}
	if !o.early {
		return
	}
	if !out.Fallback && !o.answered {
		o.answered = true
		for j := range o.pending {
			o.startReady(j)
		}
		return
	}
	if ok {
		o.startReady(i)
	}
}

// startReady starts location i early if it may; o.mu is held.
func (o *overlap) startReady(i int) {
	if o.answered && o.pending[i] == 0 && !o.fellBack[i] {
		o.start(i)
	}
}

// start queues location i's calls for the workers; o.mu is held.
func (o *overlap) start(i int) {
	if o.started[i] {
		return
	}
	o.started[i] = true
	o.asks[i] = IntentionsAt(o.intents, o.w.Present(o.env.Sim.Locations[i].ID))
	for c := o.first[i]; c < o.first[i+1]; c++ {
		o.ready <- c // never blocks: room for every call, each queued once
	}
}

// calls is how many calls the phase makes: one per location, more for a
// crowd.
func (o *overlap) calls() int { return len(o.parts) }

// work makes the calls queued, one at a time.
func (o *overlap) work() {
	defer o.wg.Done()
	for c := range o.ready {
		i, _ := slices.BinarySearch(o.first, c+1) // the location of call c: first[i-1] <= c < first[i]
		i--
		g := o.groups[i][c-o.first[i]]
		o.mu.Lock()
		asks, failed := o.asks[i], o.buildErr != nil
		o.mu.Unlock()
		if failed {
			continue // no game master call is of use any more
		}
		// What the location's work logs is held until resolve, so that the
		// phase's log reads in the simulation's order and after the phase
		// began, though the call may be made during the intention phase.
		var held []heldRecord
		env := o.env
		env.Logger = slog.New(holdLog{next: o.env.logger().Handler(), held: &held})
		loc := o.env.Sim.Locations[i]
		req, err := partRequest(env, o.w, loc, asks, g)
		if err != nil {
			o.mu.Lock()
			if o.buildErr == nil {
				o.buildErr = err
			}
			o.logs[c] = held
			o.mu.Unlock()
			o.ctx.cancel(context.Canceled)
			continue
		}
		// The answer is read here, while other calls wait on the server,
		// not after the phase, when the tick waits for it.
		out := resolutionOutcome(o.ctx, env, o.st, loc, g, o.env.Model.Complete(o.ctx, req))
		o.mu.Lock()
		o.parts[c], o.logs[c] = out, held
		o.mu.Unlock()
	}
}

// resolve is the resolution phase: pctx's deadline now bounds every call,
// those under way included; the locations not started yet start; their
// outcomes come back in the simulation's order once all have ended. Only a
// request that cannot be built is an error.
func (o *overlap) resolve(pctx context.Context) ([]Outcome[MasterOutput], error) {
	defer o.ctx.endWith(pctx)()
	o.mu.Lock()
	for i := range o.env.Sim.Locations {
		o.start(i)
	}
	o.mu.Unlock()
	o.closed.Do(func() { close(o.ready) })
	o.wg.Wait()
	lctx := context.WithoutCancel(pctx)
	for _, held := range o.logs {
		for _, h := range held {
			h.next.Handle(lctx, h.r) // a log handler's failure is not the tick's
		}
	}
	if o.buildErr != nil {
		return nil, o.buildErr
	}
	outs := make([]Outcome[MasterOutput], len(o.env.Sim.Locations))
	for i, l := range o.env.Sim.Locations {
		outs[i] = mergeParts(o.st, l.ID, o.parts[o.first[i]:o.first[i+1]:o.first[i+1]])
	}
	return outs, nil
}

// stop cancels the calls still under way (the tick ends without its
// resolution phase) and waits for them.
func (o *overlap) stop() {
	o.ctx.cancel(context.Canceled)
	o.closed.Do(func() { close(o.ready) })
	o.wg.Wait()
	o.ctx.release()
}

// holdLog is a slog.Handler that keeps the records of one location's work,
// each with the handler (attributes included) it was meant for, instead of
// writing them; resolve writes them. Only the worker of that location uses
// it.
type holdLog struct {
	next slog.Handler
	held *[]heldRecord
}

type heldRecord struct {
	next slog.Handler
	r    slog.Record
}

func (l holdLog) Enabled(ctx context.Context, level slog.Level) bool {
	return l.next.Enabled(ctx, level)
}

func (l holdLog) Handle(_ context.Context, r slog.Record) error {
	*l.held = append(*l.held, heldRecord{l.next, r.Clone()})
	return nil
}

func (l holdLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return holdLog{next: l.next.WithAttrs(attrs), held: l.held}
}

func (l holdLog) WithGroup(name string) slog.Handler {
	return holdLog{next: l.next.WithGroup(name), held: l.held}
}

// lateContext is a context whose deadline is set after it is made: the
// resolution calls that start during the intention phase run under the
// deadline of the resolution phase, which starts later. It ends when its
// parent does or when cancelled (by resolve, with DeadlineExceeded when the
// phase's deadline passes).
type lateContext struct {
	context.Context // the parent, for its values

	done     chan struct{}
	once     sync.Once
	mu       sync.Mutex
	err      error
	deadline time.Time
	phase    context.Context // the phase's context, once it began (endWith)
	stop     func() bool
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
