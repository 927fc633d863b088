package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/telemetry"
)

// The states of a tick besides its phases.
const (
	StateApply  = "APPLY"
	StateCommit = "COMMIT"
)

// Call is one model call of a phase, and what the kind made of a failure:
// Fallback when it kept the entity's state as it was (seed 004), Recovered
// when it used what the failed call did return (a chronicle message cut at
// max_tokens, kept as written), so the tick has something to commit.
//
// Result points to the result the kind holds: a phase of a large world
// ends with a hundred thousand of them, and a copy of each beside the
// kind's own was tens of megabytes (the runner reads it, never writes it).
type Call struct {
	Result    *llm.Result
	Fallback  bool
	Recovered bool
	// Remembered is set when the kind has already put the call's exchange
	// in the client's history: a kind that works ahead of the tick being
	// played (a narrative's out-of-order ticks) does so as soon as the
	// entity's next call may need it, before the tick commits. The runner
	// then stores the exchange with the tick but does not add it again.
	Remembered bool
}

// Phase describes one phase of model calls of a tick.
type Phase struct {
	Name string // e.g. "intention"; its state is the name in capitals
	// Calls is how many calls the phase will make, for progress.
	Calls int
	// Strategy names the recovery of a failed call, e.g. "fallback_intention".
	Strategy string
	// Final is set on the last phase of model calls of the tick: when no
	// call of the whole tick succeeded by its end, the tick is dropped
	// (quorum_failure). Any phase, the last included, drops the tick when
	// all its calls failed in a way that says the endpoint is unusable.
	Final bool
}

// Tick is the tick (or turn) in flight, as a Stepper's Step sees it.
type Tick struct {
	N int // the tick being played: the last committed + 1
	// Record collects the kind's own rows of the tick (intentions, outputs,
	// apply errors, ...); the runner adds each phase's calls and their
	// exchanges as the phase ends, and the state and events when it
	// commits.
	Record *store.TickRecord

	r       *Runner
	target  int
	stopped bool            // a handler already ran and recorded the stop
	before  <-chan struct{} // closed when the commit of the tick before has ended (Before)

	// Each call is put in its stored form (Record.Calls, Record.History)
	// as its phase ends; the tick keeps only what its calls came to
	// besides, so that it holds each call once until its commit ends.
	sum   tally
	usdOf float64           // the dollars of the calls so far, when MaxCost is set
	times map[string]*spell // per phase: the calls' latencies, for the tick's ideal time
	fresh []int             // the exchanges of Record.History the client's history does not hold yet
	tr    TickReport        // the counts of the calls so far

	// mu guards what the goroutines of a phase's calls add to while the
	// phase runs: the events, the held recoveries, and the failures told
	// as they happened.
	mu     sync.Mutex
	events []Event
	held   []string // strategies of the recoveries whose success the tick's end tells
	live   bool     // a phase's calls are running: their failures are emitted as they happen
	told   map[*llm.Error]bool
	ended  map[*llm.Error]bool // failures whose retry or repair was told ended
}

// ended is a channel already closed: no commit in flight.
var ended = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Before returns a channel closed once the commit of the tick before t has
// ended, stored or failed: Run overlaps each commit with the next tick's
// calls, and a kind that works ahead (Ahead) starts the tick after t only
// then, so that it never holds more than the tick it plays and the next
// one besides the tick committing. The channel is closed already when no
// commit was in flight as t began.
func (t *Tick) Before() <-chan struct{} {
	if t.before == nil {
		return ended
	}
	return t.before
}

// usage is the tokens of the tick's calls so far.
func (t *Tick) usage() int { return t.tr.Usage.Total() }

// usd is the dollars of the tick's calls so far.
func (t *Tick) usd() float64 { return t.usdOf }

// tally is what the quorum rule needs of a tick's calls so far.
type tally struct {
	calls    int
	answered bool  // a call succeeded or was recovered
	first    error // the first call's error, in the calls' order
}

func (k *tally) add(calls ...Call) {
	for _, c := range calls {
		k.calls++
		k.answered = k.answered || c.Result.Err == nil || c.Recovered
		if k.first == nil {
			k.first = c.Result.Err
		}
	}
}

// spell is the latencies of a phase's calls: their sum and the longest.
type spell struct{ sum, longest time.Duration }

// keep puts the calls of a phase that ended in the tick's record, and
// counts them: what the tick holds of them from then on.
func (t *Tick) keep(calls []Call) {
	rec := t.Record
	t.sum.add(calls...)
	if t.times == nil {
		t.times = map[string]*spell{}
	}
	rec.Calls = slices.Grow(rec.Calls, len(calls))
	for _, c := range calls {
		res := c.Result
		t.tr.add(c)
		if t.r.Config.MaxCost > 0 {
			t.usdOf += t.r.callUSD(c)
		}
		sp := t.times[res.Request.Phase]
		if sp == nil {
			sp = &spell{}
			t.times[res.Request.Phase] = sp
		}
		sp.sum += res.Latency
		sp.longest = max(sp.longest, res.Latency)
		rec.Calls = append(rec.Calls, callRecord(c))
		if ex, ok := res.Exchange(); ok {
			if !c.Remembered {
				t.fresh = append(t.fresh, len(rec.History))
			}
			rec.History = append(rec.History, store.HistoryRecord{EntityKey: res.Request.EntityKey, User: ex.User, Assistant: ex.Assistant})
		}
	}
}

// settle emits the held recoveries, which held when the tick goes on to
// commit (success) and did not when it is dropped.
func (t *Tick) settle(success bool) {
	t.mu.Lock()
	held := t.held
	t.held = nil
	t.mu.Unlock()
	for _, s := range held {
		t.emit(recovery(t.N, s, success))
	}
}

// Enter emits the entry into state (a step of the tick that is not a phase
// of model calls, e.g. APPLY).
func (t *Tick) Enter(state string) { t.emit(stateEntry(t.N, state)) }

// Budgeted reports whether a token or cost budget is checked before each
// phase: a kind then makes no call of a phase before that phase begins.
func (t *Tick) Budgeted() bool { return t.r.Config.TokenBudget > 0 || t.r.Config.MaxCost > 0 }

// Last is the last tick the run in progress will play (the tick itself
// for a turn): a kind that works ahead stops there.
func (t *Tick) Last() int { return t.target }

// Log is the runner's logger, for what a kind logs during a tick.
func (t *Tick) Log() *slog.Logger { return t.r.logger() }

func (t *Tick) emit(ev Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.r.emit(&t.events, ev)
}

// Recover runs a kind's own ERROR handler, for a failure that is not a
// failed call (a model seat that spent its model turns without an answer):
// STATE_ENTRY state=ERROR error_type=errorType, then text, as the runner's
// handlers emit them; the recovery strategy is told with its success when
// the tick's fate is known, as a fallback's is. It may be called from the
// goroutines of a phase's calls.
func (t *Tick) Recover(errorType, text, strategy string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.r.emit(&t.events, errorEntry(t.N, errorType))
	t.r.emit(&t.events, message(t.N, text))
	t.held = append(t.held, strategy)
}

// watch is the llm.Watch of a phase's calls: each failure is emitted as it
// happens, before its retry or repair begins (TOOL_FAILURE), and each retry
// or repair as it ends (RECOVERY_ATTEMPT), while the phase runs; failures
// told after it are left to failures.
func (t *Tick) watch() llm.Watch {
	return llm.Watch{
		Failed: func(entity string, err *llm.Error) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.live && !t.told[err] {
				t.told[err] = true
				t.r.emit(&t.events, toolFailure(t.N, entity, err))
			}
		},
		Recovered: func(_ string, rc llm.Recovery) {
			t.mu.Lock()
			defer t.mu.Unlock()
			if t.live && t.told[rc.Err] && !t.ended[rc.Err] {
				t.ended[rc.Err] = true
				t.r.emit(&t.events, recovery(t.N, rc.Strategy, rc.Success))
			}
		},
	}
}

// watched runs a phase's calls with their failures emitted as they happen.
func (t *Tick) watched(ctx context.Context, run func(ctx context.Context) ([]Call, error)) ([]Call, error) {
	live := func(on bool) {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.live = on
		if on && t.told == nil {
			t.told, t.ended = map[*llm.Error]bool{}, map[*llm.Error]bool{}
		}
	}
	live(true)
	defer live(false)
	return run(llm.WithWatch(ctx, t.watch()))
}

// holdRecoveries keeps the recovery strategy of each failed call of calls, to be told
// when the tick's fate is known.
func (t *Tick) holdRecoveries(calls []Call, strategy string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range calls {
		if c.Result.Err != nil {
			t.held = append(t.held, strategy)
		}
	}
}

// Phase runs one phase of model calls: run makes them (under the phase
// deadline) and returns one Call per entity, a failed call as a Call with
// Result.Err set and the kind's fallback applied. The failures are emitted,
// then their recoveries. Phase returns an error when the tick must stop; the
// stop is then already handled and recorded (interrupt, quorum, a prompt
// that cannot be built), and Step should return the error as it is.
func (t *Tick) Phase(ctx context.Context, p Phase, run func(ctx context.Context) ([]Call, error)) ([]Call, error) {
	r := t.r
	if over := r.overBudget(t, p); over != nil {
		t.settle(false)
		err := r.budgetExhausted(ctx, t.N, &t.events, over)
		t.stopped = true
		return nil, err
	}
	pctx, cancel := r.phaseContext(r.spans.Begin(ctx, t.N, p.Name))
	t.emit(stateEntry(t.N, strings.ToUpper(p.Name)))
	r.phase(PhaseProgress{Tick: t.N, LastTick: t.target, Phase: p.Name, Calls: p.Calls})
	start := time.Now()
	calls, err := t.watched(pctx, run)
	deadline := pctx.Err() != nil
	cancel()
	if ctx.Err() != nil {
		// Interrupted: whatever the phase returned (a Batch API job's wait
		// cut short is an error), the tick is rolled back.
		return nil, t.rollback(ctx)
	}
	if errors.Is(err, ErrSchemaInvalid) {
		return nil, t.schemaInvalid(ctx, err)
	}
	if err != nil {
		return nil, t.fail(ctx, "prompt_invalid", err)
	}
	if r.Config.MaxCost > 0 {
		for _, c := range calls {
			if _, err := r.Config.price(c.Result.Request.Params.Model, c.Result.Request.Phase, callUsage(c.Result)); err != nil {
				return nil, t.fail(ctx, "step_failed", err)
			}
		}
	}
	failed := t.failures(calls, deadline)
	t.endPhase(ctx, p, calls, failed)
	t.truncated(p.Name, calls)
	r.phase(PhaseProgress{Tick: t.N, LastTick: t.target, Phase: p.Name, Calls: len(calls), Failed: failed, Done: true, Elapsed: time.Since(start)})
	t.keep(calls)
	for _, c := range calls {
		if errors.Is(c.Result.Err, ErrSchemaInvalid) {
			return nil, t.schemaInvalid(ctx, c.Result.Err)
		}
	}

	reason, down := quorum(p, calls, t.sum)
	// A fallback holds only if the tick commits: those of an earlier phase
	// are told when the tick's fate is known (settle), with this phase's.
	t.holdRecoveries(calls, p.Strategy)
	if down != nil || p.Final {
		t.settle(down == nil)
	}
	if down != nil {
		return nil, t.quorum(ctx, t.sum.calls, down, reason)
	}
	return calls, nil
}

// tick plays one tick from r.state and commits it; it returns the new state.
// Nothing of the tick is stored unless it commits whole.
func (r *Runner) tick(ctx context.Context, in any, target int) (any, *TickReport, error) {
	start := time.Now()
	t := &Tick{N: r.last + 1, r: r, target: target, Record: &store.TickRecord{Tick: r.last + 1, Kind: r.Stepper.Kind()}}
	if c := r.inflight; c != nil {
		t.before = c.done
	}
	ctx = r.spans.Tick(ctx, t.N)
	next, err := r.Stepper.Step(llm.WithKeep(ctx, r.keep), t, r.state, in)
	switch {
	case err == nil:
	case t.stopped:
		return nil, nil, err
	case errors.Is(err, ErrRefused):
		return nil, nil, err
	case ctx.Err() != nil:
		return nil, nil, t.rollback(ctx)
	default:
		return nil, nil, t.fail(ctx, "step_failed", err)
	}

	// COMMIT. The tick before may still be committing (Run overlaps each
	// commit with the next tick's calls): this one waits for it, so ticks
	// commit in order and none is stored after one that failed.
	if err := r.awaitCommit(ctx); err != nil {
		t.held = nil // this tick goes unshown with the one before (release)
		return nil, nil, err
	}
	t.settle(true)
	t.Enter(StateCommit)
	tr, err := t.complete(next)
	if err != nil {
		return nil, nil, t.fail(ctx, "commit_failed", err)
	}
	if ctx.Err() != nil {
		return nil, nil, t.rollback(ctx)
	}
	r.spent(t.Record.Calls)
	// The next tick's calls send this tick's exchanges: they enter the
	// history now; should the commit fail, the run stops before any later
	// tick commits (and Turn's caller stops too).
	if r.Client != nil {
		h := r.Client.History()
		for _, i := range t.fresh {
			x := t.Record.History[i]
			h.Append(x.EntityKey, llm.Exchange{User: x.User, Assistant: x.Assistant})
		}
	}
	r.startCommit(ctx, t, tr, time.Since(start))
	return next, tr, nil
}

// complete fills the tick's record for its commit: the kind's encoding of
// the step from r.state to next, then the events (the calls and their
// exchanges are in it since their phases ended). It returns the tick's
// report.
func (t *Tick) complete(next any) (*TickReport, error) {
	rec := t.Record
	if err := t.r.Stepper.Encode(rec, t.r.state, next); err != nil {
		return nil, fmt.Errorf("encode tick %d: %w", t.N, err)
	}
	tr := t.tr
	tr.Tick, tr.ApplyErrors = t.N, len(rec.ApplyErrors)
	for _, ev := range t.events {
		rec.Events = append(rec.Events, ev.String())
	}
	return &tr, nil
}

// startCommit commits the tick's record on its own goroutine, as the
// runner's commit in flight (awaitCommit waits for it); played is how long
// the tick took until then. What the next tick shows meanwhile is held
// until the commit has ended. A Ctrl-C from here on stops the run after
// this tick, which is whole, rather than during its transaction.
func (r *Runner) startCommit(ctx context.Context, t *Tick, tr *TickReport, played time.Duration) {
	c := &inflight{t: t, tr: tr, done: make(chan struct{}), last: r.last, state: r.state}
	rec := t.Record
	r.hold()
	told := r.tickDone(ctx, t)
	go func() {
		defer close(c.done)
		begin := time.Now()
		cctx, span := telemetry.Start(context.WithoutCancel(ctx), "commit")
		c.err = r.Store.CommitTick(cctx, rec)
		telemetry.End(span, c.err)
		tr.Commit = time.Since(begin)
		tr.Duration = played + tr.Commit
		if told != nil {
			told(c.err, tr)
		}
		if c.err != nil {
			return // the next tick's events stay held: awaitCommit drops them and reports this failure
		}
		// Stored: nothing of the tick but its report is needed any more,
		// so its prompts and answers need not stay in memory until the
		// next tick ends. Told as soon as it is stored, then the next
		// tick's events held meanwhile.
		c.t = nil
		r.release(true, tr)
	}()
	r.inflight = c
}

// inflight is a tick whose commit runs while the next tick's calls are
// made; last and state are the runner's before it, restored if it fails.
type inflight struct {
	t     *Tick
	tr    *TickReport
	done  chan struct{}
	err   error
	last  int
	state any
}

// awaitCommit waits for the commit in flight, if any (which reported its
// tick to OnTick once stored), and collects its report. A commit that
// failed runs the commit_failed handler of its tick, whose error is
// returned, and the runner is back at the tick before.
func (r *Runner) awaitCommit(ctx context.Context) error {
	c := r.inflight
	if c == nil {
		return nil
	}
	r.inflight = nil
	<-c.done
	if c.err != nil {
		r.last, r.state = c.last, c.state
		r.release(false, nil) // the next tick's events go with it
		return c.t.fail(ctx, "commit_failed", c.err)
	}
	r.committed = append(r.committed, *c.tr)
	return nil
}

// failures emits, call by call, what of the calls' failures was not
// emitted as it happened (see watch): every failure the client recovered
// from or tried to (TOOL_FAILURE, then RECOVERY_ATTEMPT
// strategy=retry|repair) and the failure that ended a failed call
// (TOOL_FAILURE, its kind as detail; Phase emits its fallback next): seed
// 002's emit before recovery. When the phase deadline passed, the timeout
// handler then runs once: the partial results are used. It returns how
// many calls failed.
func (t *Tick) failures(calls []Call, deadline bool) int {
	failed := 0
	for _, c := range calls {
		key := c.Result.Request.EntityKey
		for _, rc := range c.Result.Recoveries {
			if !t.told[rc.Err] {
				t.emit(toolFailure(t.N, key, rc.Err))
			}
			if !t.ended[rc.Err] {
				t.emit(recovery(t.N, rc.Strategy, rc.Success))
			}
		}
		if err := c.Result.Err; err != nil {
			failed++
			if le := (*llm.Error)(nil); !errors.As(err, &le) || !t.told[le] {
				t.emit(toolFailure(t.N, key, err))
			}
		}
	}
	if deadline && failed > 0 {
		t.emit(errorEntry(t.N, StopTimeout))
		t.emit(message(t.N, fmt.Sprintf("Phase deadline reached, using partial results (%d of %d calls answered)", len(calls)-failed, len(calls))))
	}
	return failed
}

// truncated warns, once for the phase, when the prompt of any of its calls
// filled the model's context: the server cut it to fit and the model
// answered what was left, which nothing else would show. It names the
// first such call; status counts them all.
func (t *Tick) truncated(phase string, calls []Call) {
	n, first := 0, -1
	for i, c := range calls {
		if c.Result.PromptTruncated {
			n++
			if first < 0 {
				first = i
			}
		}
	}
	if n == 0 {
		return
	}
	res := calls[first].Result
	window := "a context the server did not give (it said it truncated the prompt)"
	if res.ContextTokens > 0 {
		window = fmt.Sprintf("the model's context of %d", res.ContextTokens)
	}
	t.r.logger().Warn(fmt.Sprintf("tick %d %s: the prompt of %s filled %s (%d prompt tokens): the server cut it and the model answered the rest; %d of %d calls of the phase; shorten the prompts (llm.depth, the world's texts, lower max_tokens) or give the model a larger context",
		t.N, phase, res.Request.EntityKey, window, res.Usage.PromptTokens, n, len(calls)),
		"phase", phase, "tick", t.N)
}

// quorum runs the quorum_failure handler: the tick is dropped and the run
// returns with the last committed tick kept.
func (t *Tick) quorum(ctx context.Context, calls int, cause error, reason string) error {
	t.emit(errorEntry(t.N, StopQuorum))
	t.emit(message(t.N, "Insufficient model data"))
	err := &QuorumError{Tick: t.N, Calls: calls, Cause: cause, Reason: reason}
	t.stop(ctx, StopQuorum, err)
	return err
}

// schemaInvalid runs the schema_invalid handler: a request's schema cannot
// be built or the server refused it, so no call of the tick can succeed; the
// tick is dropped and the run returns with the schema's error.
func (t *Tick) schemaInvalid(ctx context.Context, cause error) error {
	t.emit(errorEntry(t.N, StopSchema))
	t.emit(message(t.N, "Invalid schema, cannot proceed"))
	err := &SchemaError{Tick: t.N, Cause: cause}
	t.stop(ctx, StopSchema, err)
	return err
}

// rollback drops the tick in flight after an interrupt.
func (t *Tick) rollback(ctx context.Context) error {
	t.emit(errorEntry(t.N, StopInterrupted))
	t.emit(message(t.N, fmt.Sprintf("Interrupted: tick %d rolled back", t.N)))
	t.stop(ctx, StopInterrupted, ErrInterrupted)
	return ErrInterrupted
}

// fail is the DEFAULT handler: an unrecoverable error returns with a summary.
func (t *Tick) fail(ctx context.Context, errorType string, err error) error {
	t.emit(errorEntry(t.N, errorType))
	t.emit(message(t.N, "Unrecoverable error: "+errorType))
	t.stop(ctx, StopError, err)
	return err
}

func (t *Tick) stop(ctx context.Context, reason string, err error) {
	t.settle(false)
	t.stopped = true
	t.r.recordStop(ctx, t.N, reason, err, t.events)
}

func (r *Runner) phase(p PhaseProgress) {
	if r.OnPhase != nil {
		r.callbacks.Lock()
		defer r.callbacks.Unlock()
		if r.holding {
			r.held = append(r.held, func() { r.OnPhase(p) })
			return
		}
		r.OnPhase(p)
	}
}

func (tr *TickReport) add(c Call) {
	tr.Calls++
	tr.Repairs += c.Result.Repairs
	tr.Usage = tr.Usage.Add(c.Result.Usage)
	tr.BatchUsage = tr.BatchUsage.Add(c.Result.BatchUsage)
	if c.Result.Err != nil {
		tr.Failed++
	}
	if c.Fallback {
		tr.Fallbacks++
	}
}

// quorum is seed 002's quorum rule at the end of phase p, whose calls are
// phase; tick is every call of the tick so far, phase's included. It
// returns why the tick is dropped, nil when it goes on, and the reason
// told with it:
//   - a call the replay cassette failed (it stands in for the endpoint:
//     without its answer the run cannot be the recorded one);
//   - every call of the phase, any phase, the last too, failed in a way
//     that says the endpoint is unusable (a tick whose every resolution
//     fell back because the endpoint refused the key is no tick);
//   - at the end of the final phase, no call of the tick succeeded or was
//     recovered.
func quorum(p Phase, phase []Call, tick tally) (reason string, down error) {
	if miss := cassetteFailure(phase); miss != nil {
		return "the cassette failed the call of " + miss.Result.Request.EntityKey, miss.Result.Err
	}
	if err := endpointFailure(phase); err != nil {
		return fmt.Sprintf("every %s call failed and the endpoint is unusable", p.Name), err
	}
	if p.Final && tick.calls > 0 && !tick.answered {
		return "no model call of the tick succeeded", tick.first
	}
	return "", nil
}

// endpointFailure returns the first error when there are calls and every
// one failed in a way that says the endpoint itself is unusable
// (unreachable, unauthorised, out of quota), so the rest of the tick would
// fail the same way.
func endpointFailure(calls []Call) error {
	if len(calls) == 0 {
		return nil
	}
	for _, c := range calls {
		var le *llm.Error
		if !errors.As(c.Result.Err, &le) {
			return nil
		}
		switch le.Kind {
		case llm.KindConnection, llm.KindAuth, llm.KindQuota:
		default:
			return nil
		}
	}
	return firstError(calls)
}

// cassetteFailure returns the first call the replay cassette had no answer
// for, or could not record (llm.ErrCassette), nil when there is none.
func cassetteFailure(calls []Call) *Call {
	for i := range calls {
		if errors.Is(calls[i].Result.Err, llm.ErrCassette) {
			return &calls[i]
		}
	}
	return nil
}

func firstError(calls []Call) error {
	for _, c := range calls {
		if c.Result.Err != nil {
			return c.Result.Err
		}
	}
	return nil
}

// BatchJob is how phase's calls of the tick go as one Batch API job
// (llm.Client.CompleteBatch): the job stored for the phase and tick when a
// run that stopped while it was in flight submitted one, to be polled
// rather than submitted again; else a tag stored before the job is created
// (its row in batch_jobs, without an id yet) that the job is created with,
// so that a run stopped before it stored the id looks for the job by its
// tag (BatchJob.Find) rather than paying for another; a Submitted that
// stores the job's id before the run waits for it, a Forget that drops a
// job that failed as a whole (the next run submits anew), and a Progress
// that tells OnPhase the job's counts at each poll. The tick's commit
// forgets the job.
func (t *Tick) BatchJob(ctx context.Context, phase string) (llm.BatchJob, error) {
	st := t.r.Store
	j, ok, err := st.BatchJob(ctx, phase, t.N)
	if err != nil {
		return llm.BatchJob{}, err
	}
	if !ok {
		// Stored before the job is created, its time names the job on the
		// server (BatchJob.Tag): a run killed before it stores the job's id
		// finds the job by it.
		j = store.BatchJob{Phase: phase, Tick: t.N, SubmittedAt: time.Now()}
		if err := st.SaveBatchJob(ctx, j); err != nil {
			return llm.BatchJob{}, err
		}
	}
	job := llm.BatchJob{
		Tag: fmt.Sprintf("%s/%d/%d", phase, t.N, j.SubmittedAt.UnixNano()),
		Submitted: func(ctx context.Context, id, endpoint string) error {
			return st.SaveBatchJob(ctx, store.BatchJob{Phase: phase, Tick: t.N, JobID: id, Endpoint: endpoint, SubmittedAt: j.SubmittedAt})
		},
		Forget: func(ctx context.Context) error { return st.DeleteBatchJob(ctx, phase, t.N) },
		Progress: func(b llm.BatchStatus) {
			t.r.phase(PhaseProgress{Tick: t.N, LastTick: t.target, Phase: phase, Calls: b.Total,
				Batch: &BatchProgress{Job: b.ID, Status: b.Status, Total: b.Total, Completed: b.Completed, Failed: b.Failed}})
		},
	}
	switch {
	case ok && j.JobID != "":
		job.ID, job.Endpoint = j.JobID, j.Endpoint
		t.Log().Info("polling the batch job a stopped run left in flight", "phase", phase, "tick", t.N, "job", j.JobID,
			"submitted", j.SubmittedAt.Format(time.RFC3339))
	case ok:
		job.Find = true // stopped between submitting and storing the id, maybe
	}
	return job, nil
}
