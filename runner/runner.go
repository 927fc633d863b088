package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/telemetry"
)

// Config bounds a run, whatever its kind.
type Config struct {
	PhaseTimeout time.Duration // deadline of one phase; 0 = none
	TokenBudget  int           // total tokens of the simulation (all runs); 0 = unlimited
	// MaxCost is the US dollars the simulation may spend (all runs); 0 =
	// unlimited. It is checked like TokenBudget, each call priced at its
	// model's Prices entry; a call stored without its model (before
	// schema version 3) at PhaseModel of its phase.
	MaxCost    float64
	Prices     map[string]Price
	PhaseModel func(phase string) string
}

// Price is what a model costs in US dollars per million tokens; cached
// prompt tokens are priced as prompt tokens. BatchDiscount is the part of
// the price taken off the tokens a Batch API job answered (0.5: half
// price, as OpenAI's Batch API; 0: none).
type Price struct{ Prompt, Completion, BatchDiscount float64 }

// Cost is what a call of prompt and completion tokens costs at p, in dollars.
func (p Price) Cost(prompt, completion int) float64 {
	return (float64(prompt)*p.Prompt + float64(completion)*p.Completion) / 1e6
}

// CostOf is what usage u costs at p, in dollars: its batch tokens at the
// batch discount, the rest at the live price.
func (p Price) CostOf(u store.Usage) float64 {
	live := p.Cost(u.PromptTokens-u.BatchPromptTokens, u.CompletionTokens-u.BatchCompletionTokens)
	return live + (1-p.BatchDiscount)*p.Cost(u.BatchPromptTokens, u.BatchCompletionTokens)
}

// ErrNoPrice is returned when Config.MaxCost is set and a call's model has
// no price, so what was spent cannot be counted.
var ErrNoPrice = errors.New("no price for the model")

// price is what calls of model in phase with usage u cost, in dollars.
func (c Config) price(model, phase string, u store.Usage) (float64, error) {
	if model == "" && c.PhaseModel != nil {
		model = c.PhaseModel(phase)
	}
	p, ok := c.Prices[model]
	if !ok {
		return 0, fmt.Errorf("run.max_cost is set, and model %q (%s calls) has no price: add it under prices: in the configuration (USD per million tokens): %w",
			model, phase, ErrNoPrice)
	}
	return p.CostOf(u), nil
}

// callUsage is the tokens of a call as the prices read them.
func callUsage(res *llm.Result) store.Usage {
	return store.Usage{PromptTokens: res.Usage.PromptTokens, CompletionTokens: res.Usage.CompletionTokens,
		BatchPromptTokens: res.BatchUsage.PromptTokens, BatchCompletionTokens: res.BatchUsage.CompletionTokens}
}

// Runner runs the ticks (or turns) of one simulation. Open loads where the
// simulation stands; Run and Turn then go on from there. A Runner is not
// safe for concurrent use.
type Runner struct {
	Stepper Stepper
	Store   *store.Store
	Client  *llm.Client // its history is reloaded on Open and grows as ticks commit
	Config  Config
	Logger  *slog.Logger
	// OnEvent, when set, sees every event as it is emitted, before its tick
	// commits; an event emitted while the tick before commits waits until
	// that tick is stored (and is dropped with its tick if it is not).
	OnEvent func(Event)
	// OnPhase, when set, is told when a phase starts and ends; while the
	// tick before commits, once that tick is stored, as OnEvent.
	OnPhase func(PhaseProgress)
	// OnTick, when set, is told of every tick as soon as it commits. The
	// callbacks are never called at once.
	OnTick func(TickReport)

	opened bool
	keep   func([]llm.Message) any // puts a call's request in its stored form (llm.WithKeep)
	last   int                     // last committed tick (or, while its commit runs, the tick committing)
	state  any                     // the state after last
	// inflight is the commit running (each tick's commit runs while the
	// next tick's calls are made), committed the reports of the ticks
	// stored since Run or Turn last collected them.
	inflight  *inflight
	committed []TickReport
	// callbacks serialises OnEvent, OnPhase and OnTick: a commit reports
	// its tick from its own goroutine, as soon as it is stored.
	callbacks sync.Mutex
	// holding is set while a tick commits under the next one's calls: the
	// next tick's events and phase progress wait in held, under callbacks,
	// until the commit is over, so that nothing of a tick is shown before
	// the tick before it is stored. They are shown then, after the stored
	// tick's report, or dropped with the tick if that commit fails.
	holding bool
	held    []func()
	used    int // tokens spent by all runs, counted when a budget is set
	// usd is the dollars spent by all runs, counted when MaxCost is set.
	usd float64
	// cost is the calls, tokens and dollars of the committed ticks per
	// phase, from which a phase's expected cost is estimated when a budget
	// is set.
	cost map[string]*phaseCost
	// spans are the tick spans of the Run or Turn in progress (nil: not
	// traced).
	spans *telemetry.Ticks
}

type phaseCost struct {
	calls, tokens int
	usd           float64
}

// expectedUSD estimates what n calls of phase will cost in dollars, as
// expected does in tokens.
func (r *Runner) expectedUSD(phase string, n int) float64 {
	c := r.cost[phase]
	if c == nil || c.calls == 0 {
		return 0
	}
	return float64(n) * c.usd / float64(c.calls)
}

// callUSD is what call c cost; Tick.Phase has already checked that its
// model has a price.
func (r *Runner) callUSD(c Call) float64 {
	usd, _ := r.Config.price(c.Result.Request.Params.Model, c.Result.Request.Phase, callUsage(c.Result))
	return usd
}

// expected estimates what n calls of phase will cost: n times the average
// call of that phase so far, 0 when none was made yet.
func (r *Runner) expected(phase string, n int) int {
	c := r.cost[phase]
	if c == nil || c.calls == 0 {
		return 0
	}
	return (n*c.tokens + c.calls - 1) / c.calls
}

// spent counts the calls of a committed tick into the per-phase costs.
func (r *Runner) spent(calls []store.CallRecord) {
	if r.cost == nil {
		r.cost = map[string]*phaseCost{}
	}
	for _, c := range calls {
		p := r.cost[c.Phase]
		if p == nil {
			p = &phaseCost{}
			r.cost[c.Phase] = p
		}
		p.calls++
		p.tokens += c.PromptTokens + c.CompletionTokens
		if r.Config.MaxCost > 0 {
			usd, _ := r.Config.price(c.Model, c.Phase, recordUsage(c)) // Tick.Phase has checked that its model has a price
			p.usd += usd
			r.usd += usd
		}
	}
}

// recordUsage is the tokens of a stored call as the prices read them.
func recordUsage(c store.CallRecord) store.Usage {
	return store.Usage{PromptTokens: c.PromptTokens, CompletionTokens: c.CompletionTokens,
		BatchPromptTokens: c.BatchPromptTokens, BatchCompletionTokens: c.BatchCompletionTokens}
}

// PhaseProgress reports the start (Done=false) or end of a phase.
type PhaseProgress struct {
	Tick, LastTick int // the tick in flight and the last tick this run will run
	Phase          string
	Calls          int
	Failed         int
	Done           bool
	Elapsed        time.Duration
	// Batch is the phase's Batch API job as its last poll found it, while
	// the run waits for it; nil for a phase of live calls.
	Batch *BatchProgress
}

// BatchProgress is a Batch API job in flight: its id and status as the
// server reports them, and its counts of calls.
type BatchProgress struct {
	Job, Status              string
	Total, Completed, Failed int
}

// TickReport sums up one committed tick.
type TickReport struct {
	Tick        int       `json:"tick"`
	Calls       int       `json:"calls"`
	Failed      int       `json:"failed_calls"`
	Repairs     int       `json:"repairs"`
	Fallbacks   int       `json:"fallbacks"`
	ApplyErrors int       `json:"apply_errors"`
	Usage       llm.Usage `json:"usage"`
	// BatchUsage is the part of Usage answered through Batch API jobs.
	BatchUsage llm.Usage     `json:"batch_usage,omitzero"`
	Duration   time.Duration `json:"duration_ns"`
	Commit     time.Duration `json:"commit_ns"` // time inside Store.CommitTick
}

// Report sums up a run: the ticks it committed and why it stopped.
type Report struct {
	FirstTick int          `json:"first_tick"` // first tick this run ran (last committed + 1)
	LastTick  int          `json:"last_tick"`  // last committed tick after the run
	Ticks     []TickReport `json:"ticks"`
	Usage     llm.Usage    `json:"usage"`
	// BatchUsage is the part of Usage answered through Batch API jobs.
	BatchUsage llm.Usage `json:"batch_usage,omitzero"`
	Stop       string    `json:"stop"`            // completed | game_over | quorum_failure | budget_exhausted | interrupted | error
	Ended      string    `json:"ended,omitempty"` // how the game ended, when Stop is game_over
	// RateLimited is the 429s the model server answered during the run,
	// each waited out (llm.rate_limit_waits); LowestConcurrency the fewest
	// calls in flight adaptive concurrency went down to (0: no client).
	RateLimited       int64 `json:"rate_limited"`
	LowestConcurrency int   `json:"lowest_concurrency,omitempty"`
	// Endpoints are each endpoint's figures since the client was made,
	// when it has more than one (llm.endpoints).
	Endpoints []llm.EndpointStats `json:"endpoints,omitempty"`
}

// Stop reasons of a run.
const (
	StopCompleted   = "completed"
	StopQuorum      = "quorum_failure"
	StopBudget      = "budget_exhausted"
	StopInterrupted = "interrupted"
	StopError       = "error"
	// StopGameOver: the game has ended (won or drawn); there is no next turn.
	StopGameOver = "game_over"
	StopSchema   = "schema_invalid"
)

// Error types of seed 002's handlers that do not stop a run.
const (
	StopTimeout = "timeout" // a phase deadline passed: the partial results are used
)

// ErrStateMismatch is returned when the last committed state no longer fits
// the simulation's files (a character or location was renamed or removed).
var ErrStateMismatch = errors.New("run state does not fit the simulation files")

// ErrInterrupted is returned when the context was canceled: the run stopped
// between ticks or rolled back the tick in flight.
var ErrInterrupted = errors.New("interrupted")

// QuorumError stops a run when no model call of a tick succeeded, or every
// call of one of its phases found the endpoint unusable (unreachable, 401,
// out of quota). The tick is not committed; Cause is the first call's error.
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

// ErrSchemaInvalid marks a schema that cannot be built; a kind wraps it in
// the error of a phase's run. It is llm.ErrSchemaInvalid, which also matches
// a call whose schema did not compile or was refused by the server.
var ErrSchemaInvalid = llm.ErrSchemaInvalid

// SchemaError stops a run whose request schema is invalid (seed 002's
// schema_invalid): the tick is not committed.
type SchemaError struct {
	Tick  int
	Cause error
}

func (e *SchemaError) Error() string {
	return fmt.Sprintf("schema_invalid: tick %d not committed: %v", e.Tick, e.Cause)
}

func (e *SchemaError) Unwrap() error { return e.Cause }

// BudgetError stops a run cleanly when the token budget (or, with Cost,
// the cost limit) is spent.
type BudgetError struct {
	Used, Budget int
	Tick         int // last committed tick
	// Needed is what the tick stopped in flight would have brought Used to,
	// as estimated before its next phase; 0 when it never started.
	Needed int
	// Cost: the limit reached is run.max_cost; Spent, MaxCost and
	// NeededUSD are in US dollars, as Used, Budget and Needed are in tokens.
	Cost                      bool
	Spent, MaxCost, NeededUSD float64
}

func (e *BudgetError) Error() string {
	if e.Cost {
		if e.NeededUSD > e.Spent {
			return fmt.Sprintf("budget_exhausted: %s spent of run.max_cost %s, and tick %d would bring it to about %s; stopped after tick %d (raise run.max_cost to go on)",
				dollars(e.Spent), dollars(e.MaxCost), e.Tick+1, dollars(e.NeededUSD), e.Tick)
		}
		return fmt.Sprintf("budget_exhausted: %s spent of run.max_cost %s; stopped after tick %d (raise run.max_cost to go on)", dollars(e.Spent), dollars(e.MaxCost), e.Tick)
	}
	if e.Needed > e.Used {
		return fmt.Sprintf("budget_exhausted: %d of %d tokens used, and tick %d would need about %d in all; stopped after tick %d (raise run.token_budget to go on)", e.Used, e.Budget, e.Tick+1, e.Needed, e.Tick)
	}
	return fmt.Sprintf("budget_exhausted: %d of %d tokens used; stopped after tick %d (raise run.token_budget to go on)", e.Used, e.Budget, e.Tick)
}

// Open reads the last committed tick, its state, the history of every
// entity and the tokens spent so far. Run and Turn call it when it was not
// called; it is quick local I/O and finishes even when ctx is already done,
// so an interrupted run still reports where it stands.
func (r *Runner) Open(ctx context.Context) error {
	if r.opened {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	last, err := r.Store.LastTick(ctx)
	if err != nil {
		return err
	}
	if last > 0 {
		kind, err := r.Store.Kind(ctx)
		if err != nil {
			return err
		}
		if kind != "" && kind != r.Stepper.Kind() {
			return fmt.Errorf("%w: the run state is of a %s simulation, and this one is a %s (`arbiter reset` starts over)", ErrStateMismatch, kind, r.Stepper.Kind())
		}
	}
	st, err := r.Stepper.Load(ctx, r.Store, last)
	if err != nil {
		return err
	}
	if err := r.loadHistory(ctx, last); err != nil {
		return err
	}
	if r.Config.TokenBudget > 0 || r.Config.MaxCost > 0 {
		if err := r.loadSpent(ctx); err != nil {
			return err
		}
	}
	r.last, r.state, r.opened = last, st, true
	// Each call's request is put in this run's stored form as soon as the
	// call is over, in its own goroutine: a tick then holds that until its
	// commit, not the prompts, and the commit only writes.
	db := r.Store
	r.keep = func(msgs []llm.Message) any { return db.PrepareRequest(storeMessages(msgs)) }
	return nil
}

// LastTick is the last committed tick (0 before the first); State is the
// state after it. Both are valid once Open has returned.
func (r *Runner) LastTick() int { return r.last }

// State returns the kind's state after the last committed tick.
func (r *Runner) State() any { return r.state }

// Run runs up to n ticks from the last committed one. It returns the report
// and nil when all n committed; otherwise the report of what did commit and
// an error: ErrInterrupted, *QuorumError, *BudgetError, or a storage, prompt or
// world error that stopped it.
func (r *Runner) Run(ctx context.Context, n int) (_ *Report, err error) {
	if err := r.Open(ctx); err != nil {
		return nil, err
	}
	ctx, untrace := r.traced(ctx)
	defer func() { untrace(err) }()
	rep := &Report{FirstTick: r.last + 1, LastTick: r.last, Stop: StopCompleted}
	target := r.last + n
	// Each tick's commit runs while the next tick's calls are made; still
	// one transaction per tick, in order, and nothing of a tick is stored
	// before the tick before it is.
	defer func() { r.committed = nil }()
	var limited int64 // the client's 429s before this run
	if r.Client != nil {
		limited = r.Client.Stats().RateLimited
	}
	var stop error
	for r.last < target && stop == nil {
		if e, ok := r.Stepper.(Ender); ok {
			if over, how := e.Over(r.state); over {
				rep.Stop, rep.Ended = StopGameOver, how
				break
			}
		}
		_, stop = r.step(ctx, nil, target)
	}
	if a, ok := r.Stepper.(Ahead); ok {
		a.DropAhead() // nothing past the last tick played is of use
	}
	if err := r.awaitCommit(ctx); err != nil {
		stop = err // the tick before the stop is not stored: that is what the run ended on
	}
	rep.LastTick = r.last
	if r.Client != nil {
		st := r.Client.Stats()
		rep.RateLimited, rep.LowestConcurrency = st.RateLimited-limited, st.LowestConcurrency
		if len(st.Endpoints) > 1 {
			rep.Endpoints = st.Endpoints
		}
	}
	rep.Ticks = append(rep.Ticks, r.committed...)
	for _, tr := range r.committed {
		rep.Usage = rep.Usage.Add(tr.Usage)
		rep.BatchUsage = rep.BatchUsage.Add(tr.BatchUsage)
	}
	if stop != nil {
		rep.Stop, rep.Ended = stopReason(stop), ""
		return rep, stop
	}
	return rep, nil
}

// Turn plays one turn with the move of an interactive seat and commits it.
// A move the rules refuse returns an error wrapping ErrRefused and changes
// nothing; the other errors are Run's.
func (r *Runner) Turn(ctx context.Context, in any) (_ *TickReport, err error) {
	if err := r.Open(ctx); err != nil {
		return nil, err
	}
	ctx, untrace := r.traced(ctx)
	defer func() { untrace(err) }()
	defer func() { r.committed = nil }()
	tr, err := r.step(ctx, in, r.last+1)
	if err != nil {
		return nil, err
	}
	if err := r.awaitCommit(ctx); err != nil {
		return nil, err
	}
	return tr, nil
}

// step checks the budget, then plays and commits the next tick.
func (r *Runner) step(ctx context.Context, in any, target int) (*TickReport, error) {
	if ctx.Err() != nil {
		return nil, ErrInterrupted
	}
	tick := r.last + 1
	if over := r.overBudget(nil, Phase{}); over != nil {
		var events []Event
		return nil, r.budgetExhausted(ctx, tick, &events, over)
	}
	next, tr, err := r.tick(ctx, in, target)
	if err != nil {
		return nil, err
	}
	r.last, r.state = tick, next
	r.used += tr.Usage.Total()
	return tr, nil
}

// overBudget is the limit, the token budget then run.max_cost, that the
// spending so far passes, or would pass with tick t's calls and what phase p
// is expected to cost (t nil: no tick in flight), as the error that stops
// the run; nil when neither is reached.
func (r *Runner) overBudget(t *Tick, p Phase) *BudgetError {
	if b := r.Config.TokenBudget; b > 0 {
		need := r.used
		if t != nil {
			need += t.usage() + r.expected(p.Name, p.Calls)
		}
		if need > b || r.used >= b {
			return &BudgetError{Used: r.used, Budget: b, Tick: r.last, Needed: need}
		}
	}
	if m := r.Config.MaxCost; m > 0 {
		need := r.usd
		if t != nil {
			need += t.usd() + r.expectedUSD(p.Name, p.Calls)
		}
		if need > m || r.usd >= m {
			return &BudgetError{Cost: true, Spent: r.usd, MaxCost: m, NeededUSD: need, Tick: r.last}
		}
	}
	return nil
}

// budgetExhausted runs the budget_exhausted handler for over: the tick in
// flight, if any, is dropped, and the run stops cleanly after the last
// committed tick.
func (r *Runner) budgetExhausted(ctx context.Context, tick int, events *[]Event, over *BudgetError) error {
	what := "Token budget exhausted"
	if over.Cost {
		what = "Cost budget exhausted"
	}
	r.emit(events, errorEntry(tick, StopBudget))
	r.emit(events, message(tick, what))
	r.recordStop(ctx, tick, StopBudget, over, *events)
	return over
}

// loadSpent reads what all runs spent so far, in tokens and (when MaxCost
// is set) dollars, in all and per phase.
func (r *Runner) loadSpent(ctx context.Context) error {
	rows, err := r.Store.Totals(ctx)
	if err != nil {
		return err
	}
	r.used, r.usd, r.cost = 0, 0, map[string]*phaseCost{}
	for _, row := range rows {
		p := r.cost[row.Phase]
		if p == nil {
			p = &phaseCost{}
			r.cost[row.Phase] = p
		}
		tokens := row.PromptTokens + row.CompletionTokens
		p.calls += row.Calls
		p.tokens += tokens
		r.used += tokens
		if r.Config.MaxCost > 0 {
			usd, err := r.Config.price(row.Model, row.Phase, row.Usage)
			if err != nil {
				return fmt.Errorf("counting the cost already spent (%s): %w", row.EntityKey, err)
			}
			p.usd += usd
			r.usd += usd
		}
	}
	return nil
}

// dollars writes an amount of US dollars to the micro-dollar, without
// trailing zeros: $0.0123, $2.
func dollars(usd float64) string {
	return "$" + strconv.FormatFloat(math.Round(usd*1e6)/1e6, 'f', -1, 64)
}

func stopReason(err error) string {
	switch {
	case errors.Is(err, ErrInterrupted):
		return StopInterrupted
	case errors.As(err, new(*QuorumError)):
		return StopQuorum
	case errors.As(err, new(*BudgetError)):
		return StopBudget
	case errors.As(err, new(*SchemaError)):
		return StopSchema
	default:
		return StopError
	}
}

func (r *Runner) loadHistory(ctx context.Context, last int) error {
	if r.Client == nil {
		return nil
	}
	h := r.Client.History()
	recs, err := r.Store.History(ctx, h.Depth(), last)
	if err != nil {
		return fmt.Errorf("load history: %w", err)
	}
	hist := make(map[string][]llm.Exchange, len(recs))
	for key, list := range recs {
		for _, x := range list {
			hist[key] = append(hist[key], llm.Exchange{User: x.User, Assistant: x.Assistant})
		}
	}
	h.Load(hist)
	return nil
}

func (r *Runner) logger() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Logger
}

// emit records ev in the tick's event list (when non-nil) and shows it,
// or holds it while the tick before commits (see holding).
func (r *Runner) emit(events *[]Event, ev Event) {
	if events != nil {
		*events = append(*events, ev)
	}
	r.spanEvent(ev)
	if r.OnEvent != nil {
		r.callbacks.Lock()
		defer r.callbacks.Unlock()
		if r.holding {
			r.held = append(r.held, func() { r.OnEvent(ev) })
			return
		}
		r.OnEvent(ev)
	}
}

// hold starts holding events while a commit runs under the next tick.
func (r *Runner) hold() {
	r.callbacks.Lock()
	defer r.callbacks.Unlock()
	r.holding = true
}

// release ends the hold: what was held is shown when stored is true (the
// commit they waited for stored its tick, whose report is then told first,
// when tr is not nil) and dropped otherwise, with the tick they belong to.
func (r *Runner) release(stored bool, tr *TickReport) {
	r.callbacks.Lock()
	defer r.callbacks.Unlock()
	if stored && tr != nil && r.OnTick != nil {
		r.OnTick(*tr)
	}
	held := r.held
	r.holding, r.held = false, nil
	if stored {
		for _, show := range held {
			show()
		}
	}
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

// storeMessages is msgs as the store takes them.
func storeMessages(msgs []llm.Message) []store.Message {
	out := make([]store.Message, len(msgs))
	for i, m := range msgs {
		out[i] = store.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) > 0 {
			out[i].ToolCalls, _ = json.Marshal(m.ToolCalls) // names and raw JSON always marshal
		}
	}
	return out
}

// sameOr is b as a string, s itself when they are equal: a valid answer
// is most often its raw text as is, and a tick holds every record until
// its commit, so the two share one copy.
func sameOr(s string, b []byte) string {
	if string(b) == s { // compared without a copy
		return s
	}
	return string(b)
}

func callRecord(c Call) store.CallRecord {
	res := c.Result
	rec := store.CallRecord{
		Phase:                 res.Request.Phase,
		EntityKey:             res.Request.EntityKey,
		Model:                 res.Request.Params.Model,
		Endpoint:              res.Endpoint,
		EndpointFailures:      res.EndpointFailures,
		Raw:                   res.Raw,
		Output:                sameOr(res.Raw, res.Output),
		LatencyMS:             res.Latency.Milliseconds(),
		PromptTokens:          res.Usage.PromptTokens,
		CompletionTokens:      res.Usage.CompletionTokens,
		CachedTokens:          res.Usage.CachedTokens,
		BatchPromptTokens:     res.BatchUsage.PromptTokens,
		BatchCompletionTokens: res.BatchUsage.CompletionTokens,
		Attempts:              res.Attempts,
		Repairs:               res.Repairs,
		Fallback:              c.Fallback,
		PromptTruncated:       res.PromptTruncated,
	}
	if p, ok := res.Kept.(*store.PreparedRequest); ok {
		rec.Prepared = p
	} else {
		rec.Messages = storeMessages(res.Messages)
	}
	if res.Err != nil {
		rec.ErrorKind = llm.ErrorKindOf(res.Err).String()
		rec.Error = res.Err.Error()
	}
	return rec
}
