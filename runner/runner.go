package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// Config is what a run needs beyond its parts.
type Config struct {
	Intention    llm.Params    // model settings of phase 1
	Resolution   llm.Params    // model settings of phase 2a
	Depth        int           // history exchanges per entity reloaded on resume
	PhaseTimeout time.Duration // deadline of one phase; 0 = none
	TokenBudget  int           // total tokens of the simulation (all runs); 0 = unlimited
}

// Runner runs the ticks of one simulation.
type Runner struct {
	Sim     *world.Simulation
	Store   *store.Store
	Client  *llm.Client
	Prompts *prompts.Renderer
	Config  Config
	Logger  *slog.Logger
	// OnEvent, when set, sees every event as it is emitted (before commit).
	OnEvent func(Event)
	// OnPhase, when set, is told when a phase starts and ends.
	OnPhase func(PhaseProgress)
	// OnTick, when set, is told of every tick as soon as it commits.
	OnTick func(TickReport)
}

// PhaseProgress reports the start (Done=false) or end of a phase.
type PhaseProgress struct {
	Tick, LastTick int // the tick in flight and the last tick this run will run
	Phase          string
	Calls          int
	Failed         int
	Done           bool
	Elapsed        time.Duration
}

// TickReport sums up one committed tick.
type TickReport struct {
	Tick        int           `json:"tick"`
	Calls       int           `json:"calls"`
	Failed      int           `json:"failed_calls"`
	Repairs     int           `json:"repairs"`
	Fallbacks   int           `json:"fallbacks"`
	ApplyErrors int           `json:"apply_errors"`
	Usage       llm.Usage     `json:"usage"`
	Duration    time.Duration `json:"duration_ns"`
}

// Report sums up a run: the ticks it committed and why it stopped.
type Report struct {
	FirstTick int          `json:"first_tick"` // first tick this run ran (last committed + 1)
	LastTick  int          `json:"last_tick"`  // last committed tick after the run
	Ticks     []TickReport `json:"ticks"`
	Usage     llm.Usage    `json:"usage"`
	Stop      string       `json:"stop"` // completed | quorum_failure | budget_exhausted | interrupted | error
}

// Stop reasons of a run.
const (
	StopCompleted   = "completed"
	StopQuorum      = "quorum_failure"
	StopBudget      = "budget_exhausted"
	StopInterrupted = "interrupted"
	StopError       = "error"
)

// ErrStateMismatch is returned when the last committed state no longer fits
// the simulation's files (a character or location was renamed or removed).
var ErrStateMismatch = errors.New("run state does not fit the simulation files")

// ErrInterrupted is returned when the context was canceled: the run stopped
// between ticks or rolled back the tick in flight.
var ErrInterrupted = errors.New("interrupted")

// QuorumError stops a run when no model call of a tick succeeded. The tick is
// not committed; Cause is the first call's error.
type QuorumError struct {
	Tick   int
	Calls  int
	Cause  error
	Reason string
}

func (e *QuorumError) Error() string {
	return fmt.Sprintf("quorum_failure: tick %d not committed: %s; first error: %v", e.Tick, e.Reason, e.Cause)
}

func (e *QuorumError) Unwrap() error { return e.Cause }

// BudgetError stops a run cleanly when the token budget is spent.
type BudgetError struct {
	Used, Budget int
	Tick         int // last committed tick
}

func (e *BudgetError) Error() string {
	return fmt.Sprintf("budget_exhausted: %d of %d tokens used; stopped after tick %d (raise run.token_budget to go on)", e.Used, e.Budget, e.Tick)
}

// Run runs up to n ticks from the last committed one. It returns the report
// and nil when all n committed; otherwise the report of what did commit and
// an error: ErrInterrupted, *QuorumError, *BudgetError, or a storage, prompt or
// world error that stopped it.
func (r *Runner) Run(ctx context.Context, n int) (*Report, error) {
	// Loading is quick local I/O; it finishes even when ctx is already done so
	// an interrupted run still reports where it stands.
	lctx := context.WithoutCancel(ctx)
	last, err := r.Store.LastTick(lctx)
	if err != nil {
		return nil, err
	}
	st, err := r.loadState(lctx, last)
	if err != nil {
		return nil, err
	}
	if err := r.loadHistory(lctx); err != nil {
		return nil, err
	}
	used, err := r.tokensUsed(lctx)
	if err != nil {
		return nil, err
	}

	rep := &Report{FirstTick: last + 1, LastTick: last, Stop: StopCompleted}
	target := last + n
	for st.Tick < target {
		if ctx.Err() != nil {
			rep.Stop = StopInterrupted
			return rep, ErrInterrupted
		}
		if r.Config.TokenBudget > 0 && used >= r.Config.TokenBudget {
			tick := st.Tick + 1
			var events []Event
			r.emit(&events, errorEntry(tick, StopBudget))
			r.emit(&events, message(tick, "Token budget exhausted"))
			rep.Stop = StopBudget
			err := &BudgetError{Used: used, Budget: r.Config.TokenBudget, Tick: st.Tick}
			r.recordStop(ctx, tick, StopBudget, err, events)
			return rep, err
		}
		next, tr, err := r.tick(ctx, st, target)
		if err != nil {
			switch {
			case errors.Is(err, ErrInterrupted):
				rep.Stop = StopInterrupted
			case errors.As(err, new(*QuorumError)):
				rep.Stop = StopQuorum
			default:
				rep.Stop = StopError
			}
			return rep, err
		}
		st = next
		used += tr.Usage.Total()
		rep.LastTick = st.Tick
		rep.Ticks = append(rep.Ticks, *tr)
		rep.Usage = rep.Usage.Add(tr.Usage)
	}
	return rep, nil
}

func (r *Runner) loadState(ctx context.Context, last int) (*world.State, error) {
	if last == 0 {
		return r.Sim.InitialState(), nil
	}
	st, err := r.Store.State(ctx, last)
	if err != nil {
		return nil, fmt.Errorf("load state of tick %d: %w", last, err)
	}
	if err := st.Validate(r.Sim); err != nil {
		return nil, fmt.Errorf("%w: state of tick %d (edited since the run? `arbiter reset` starts over): %w", ErrStateMismatch, last, err)
	}
	return st, nil
}

func (r *Runner) loadHistory(ctx context.Context) error {
	recs, err := r.Store.History(ctx, r.Config.Depth)
	if err != nil {
		return fmt.Errorf("load history: %w", err)
	}
	hist := make(map[string][]llm.Exchange, len(recs))
	for key, list := range recs {
		for _, h := range list {
			hist[key] = append(hist[key], llm.Exchange{User: h.User, Assistant: h.Assistant})
		}
	}
	r.Client.History().Load(hist)
	return nil
}

func (r *Runner) tokensUsed(ctx context.Context) (int, error) {
	if r.Config.TokenBudget <= 0 {
		return 0, nil
	}
	sum, err := r.Store.Summary(ctx)
	if err != nil {
		return 0, err
	}
	return sum.Total.PromptTokens + sum.Total.CompletionTokens, nil
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// emit records ev in the tick's event list (when non-nil) and shows it.
func (r *Runner) emit(events *[]Event, ev Event) {
	if events != nil {
		*events = append(*events, ev)
	}
	if r.OnEvent != nil {
		r.OnEvent(ev)
	}
}

func (r *Runner) env(params llm.Params) phases.Env {
	return phases.Env{Sim: r.Sim, Prompts: r.Prompts, Model: r.Client, Params: params, Logger: r.logger()}
}

// phaseContext bounds a phase by the configured deadline.
func (r *Runner) phaseContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if r.Config.PhaseTimeout > 0 {
		return context.WithTimeout(ctx, r.Config.PhaseTimeout)
	}
	return context.WithCancel(ctx)
}

// recordStop stores why the run stopped short of committing tick, with the
// tick's events, so status can tell later. It is written even after Ctrl-C;
// a failure to write it is logged, not returned: the stop itself stands.
func (r *Runner) recordStop(ctx context.Context, tick int, reason string, cause error, events []Event) {
	lines := make([]string, len(events))
	for i, ev := range events {
		lines[i] = ev.String()
	}
	stop := store.Stop{Tick: tick, Reason: reason, Error: cause.Error(), Events: lines}
	if err := r.Store.RecordStop(context.WithoutCancel(ctx), stop); err != nil {
		r.logger().Error("could not record why the run stopped", "error", err)
	}
}

func callRecord(res llm.Result, fallback bool) store.CallRecord {
	msgs, _ := json.Marshal(res.Messages)
	rec := store.CallRecord{
		Phase:            res.Request.Phase,
		EntityKey:        res.Request.EntityKey,
		Request:          string(msgs),
		Raw:              res.Raw,
		Output:           string(res.Output),
		LatencyMS:        res.Latency.Milliseconds(),
		PromptTokens:     res.Usage.PromptTokens,
		CompletionTokens: res.Usage.CompletionTokens,
		CachedTokens:     res.Usage.CachedTokens,
		Attempts:         res.Attempts,
		Repairs:          res.Repairs,
		Fallback:         fallback,
	}
	if res.Err != nil {
		rec.ErrorKind = llm.KindOf(res.Err).String()
		rec.Error = res.Err.Error()
	}
	return rec
}
