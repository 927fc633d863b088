package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// The states of a tick.
const (
	StateIntention  = "INTENTION"
	StateResolution = "RESOLUTION"
	StateApply      = "APPLY"
	StateCommit     = "COMMIT"
)

// tick runs one tick from st and commits it; it returns the new state.
// Nothing of the tick is stored unless it commits whole.
func (r *Runner) tick(ctx context.Context, st *world.State, target int) (*world.State, *TickReport, error) {
	start := time.Now()
	tick := st.Tick + 1
	var events []Event
	emit := func(ev Event) { r.emit(&events, ev) }

	// INTENTION
	emit(stateEntry(tick, StateIntention))
	r.phase(PhaseProgress{Tick: tick, LastTick: target, Phase: phases.PhaseIntention, Calls: len(r.Sim.Characters)})
	pctx, cancel := r.phaseContext(ctx)
	phaseStart := time.Now()
	ir, err := phases.Intention(pctx, r.env(r.Config.Intention), st)
	deadline := pctx.Err() != nil
	cancel()
	if err != nil {
		return nil, nil, r.fail(ctx, tick, &events, "prompt_invalid", err)
	}
	if ctx.Err() != nil {
		return nil, nil, r.rollback(ctx, tick, &events)
	}
	failed := r.failures(tick, &events, ir.Calls, deadline)
	r.phase(PhaseProgress{Tick: tick, LastTick: target, Phase: phases.PhaseIntention, Calls: len(ir.Calls), Failed: failed, Done: true, Elapsed: time.Since(phaseStart)})
	var endpointDown error
	if failed > 0 && failed == len(ir.Calls) {
		endpointDown = endpointFailure(ir.Calls)
	}
	r.recoveries(tick, &events, ir.Calls, "fallback_intention", endpointDown == nil)
	if endpointDown != nil {
		return nil, nil, r.quorum(ctx, tick, &events, len(ir.Calls), endpointDown, "every intention call failed and the endpoint is unusable")
	}

	// RESOLUTION
	emit(stateEntry(tick, StateResolution))
	r.phase(PhaseProgress{Tick: tick, LastTick: target, Phase: phases.PhaseResolution, Calls: len(r.Sim.Locations)})
	pctx, cancel = r.phaseContext(ctx)
	phaseStart = time.Now()
	rr, err := phases.Resolution(pctx, r.env(r.Config.Resolution), st, ir.Intentions)
	deadline = pctx.Err() != nil
	cancel()
	if err != nil {
		return nil, nil, r.fail(ctx, tick, &events, "prompt_invalid", err)
	}
	if ctx.Err() != nil {
		return nil, nil, r.rollback(ctx, tick, &events)
	}
	rfailed := r.failures(tick, &events, rr.Calls, deadline)
	r.phase(PhaseProgress{Tick: tick, LastTick: target, Phase: phases.PhaseResolution, Calls: len(rr.Calls), Failed: rfailed, Done: true, Elapsed: time.Since(phaseStart)})

	calls := append(append([]llm.Result{}, ir.Calls...), rr.Calls...)
	noQuorum := failed+rfailed == len(calls) && len(calls) > 0
	r.recoveries(tick, &events, rr.Calls, "fallback_resolution", !noQuorum)
	if noQuorum {
		return nil, nil, r.quorum(ctx, tick, &events, len(calls), firstError(calls), "no model call of the tick succeeded")
	}

	// APPLY
	emit(stateEntry(tick, StateApply))
	next, applyErrs := phases.Apply(r.Sim, st, rr.Outputs)
	for _, ae := range applyErrs {
		r.logger().Error("update skipped: "+ae.Error(), "phase", "apply",
			"tick", ae.Tick, "location", ae.LocationID, "character", ae.CharacterID, "reason", ae.Reason)
	}

	// COMMIT
	emit(stateEntry(tick, StateCommit))
	rec, tr := r.record(next, ir, rr, applyErrs, events)
	if ctx.Err() != nil {
		return nil, nil, r.rollback(ctx, tick, &events)
	}
	if err := r.Store.CommitTick(ctx, rec); err != nil {
		if ctx.Err() != nil {
			return nil, nil, r.rollback(ctx, tick, &events)
		}
		return nil, nil, r.fail(ctx, tick, &events, "commit_failed", fmt.Errorf("commit tick %d: %w", tick, err))
	}
	// Only now, with the tick stored, do its exchanges enter the history.
	r.Client.History().Commit(calls...)
	tr.Duration = time.Since(start)
	if r.OnTick != nil {
		r.OnTick(*tr)
	}
	return next, tr, nil
}

// failures emits every failed call (seed 002: emit before recovery) and
// returns how many failed. When the phase deadline passed it first runs the
// timeout handler: the partial results are used.
func (r *Runner) failures(tick int, events *[]Event, calls []llm.Result, deadline bool) int {
	failed := 0
	for _, c := range calls {
		if c.Err != nil {
			failed++
		}
	}
	if deadline && failed > 0 {
		r.emit(events, errorEntry(tick, "timeout"))
		r.emit(events, message(tick, fmt.Sprintf("Phase deadline reached, using partial results (%d of %d calls answered)", len(calls)-failed, len(calls))))
	}
	for _, c := range calls {
		if c.Err != nil {
			r.emit(events, toolFailure(tick, c.Request.EntityKey, c.Err))
			r.emit(events, errorEntry(tick, llm.KindOf(c.Err).String()))
		}
	}
	return failed
}

// recoveries emits the fallback of every failed call; success is false when
// the tick is dropped anyway (no quorum), so the log never claims a recovery
// that did not hold.
func (r *Runner) recoveries(tick int, events *[]Event, calls []llm.Result, strategy string, success bool) {
	for _, c := range calls {
		if c.Err != nil {
			r.emit(events, recovery(tick, strategy, success))
		}
	}
}

// quorum runs the quorum_failure handler: the tick is dropped and the run
// returns with the last committed tick kept.
func (r *Runner) quorum(ctx context.Context, tick int, events *[]Event, calls int, cause error, reason string) error {
	r.emit(events, errorEntry(tick, StopQuorum))
	r.emit(events, message(tick, "Insufficient model data"))
	err := &QuorumError{Tick: tick, Calls: calls, Cause: cause, Reason: reason}
	r.recordStop(ctx, tick, StopQuorum, err, *events)
	return err
}

// rollback drops the tick in flight after an interrupt.
func (r *Runner) rollback(ctx context.Context, tick int, events *[]Event) error {
	r.emit(events, errorEntry(tick, StopInterrupted))
	r.emit(events, message(tick, fmt.Sprintf("Interrupted: tick %d rolled back", tick)))
	r.recordStop(ctx, tick, StopInterrupted, ErrInterrupted, *events)
	return ErrInterrupted
}

// fail is the DEFAULT handler: an unrecoverable error returns with a summary.
func (r *Runner) fail(ctx context.Context, tick int, events *[]Event, errorType string, err error) error {
	r.emit(events, errorEntry(tick, errorType))
	r.emit(events, message(tick, "Unrecoverable error: "+errorType))
	r.recordStop(ctx, tick, StopError, err, *events)
	return err
}

func (r *Runner) phase(p PhaseProgress) {
	if r.OnPhase != nil {
		r.OnPhase(p)
	}
}

// record builds the storage record of a tick and its report.
func (r *Runner) record(next *world.State, ir *phases.IntentionResult, rr *phases.ResolutionResult, applyErrs []phases.ApplyError, events []Event) (*store.TickRecord, *TickReport) {
	tick := next.Tick
	rec := &store.TickRecord{Tick: tick, State: next}
	tr := &TickReport{Tick: tick, ApplyErrors: len(applyErrs)}

	for i, c := range r.Sim.Characters {
		res := ir.Calls[i]
		rec.Intentions = append(rec.Intentions, store.IntentionRecord{CharacterID: c.ID, Intention: ir.Intentions[c.ID], Fallback: ir.Fallback[c.ID]})
		rec.Calls = append(rec.Calls, callRecord(res, ir.Fallback[c.ID]))
		tr.add(res, ir.Fallback[c.ID])
		if ex, ok := res.Exchange(); ok {
			rec.History = append(rec.History, store.HistoryRecord{EntityKey: res.Request.EntityKey, User: ex.User, Assistant: ex.Assistant})
		}
	}
	for i, loc := range r.Sim.Locations {
		res := rr.Calls[i]
		out, _ := json.Marshal(rr.Outputs[loc.ID])
		rec.Outputs = append(rec.Outputs, store.OutputRecord{LocationID: loc.ID, Output: string(out), Fallback: rr.Fallback[loc.ID]})
		rec.Calls = append(rec.Calls, callRecord(res, rr.Fallback[loc.ID]))
		tr.add(res, rr.Fallback[loc.ID])
		if ex, ok := res.Exchange(); ok {
			rec.History = append(rec.History, store.HistoryRecord{EntityKey: res.Request.EntityKey, User: ex.User, Assistant: ex.Assistant})
		}
	}
	for _, ae := range applyErrs {
		rec.ApplyErrors = append(rec.ApplyErrors, store.ApplyError{LocationID: ae.LocationID, CharacterID: ae.CharacterID, Reason: ae.Reason})
	}
	for _, ev := range events {
		rec.Events = append(rec.Events, ev.String())
	}
	return rec, tr
}

func (tr *TickReport) add(res llm.Result, fallback bool) {
	tr.Calls++
	tr.Repairs += res.Repairs
	tr.Usage = tr.Usage.Add(res.Usage)
	if res.Err != nil {
		tr.Failed++
	}
	if fallback {
		tr.Fallbacks++
	}
}

// endpointFailure returns the first error when every call failed in a way that
// says the endpoint itself is unusable (unreachable, unauthorised, out of
// quota), so the rest of the tick would fail the same way.
func endpointFailure(calls []llm.Result) error {
	for _, c := range calls {
		var le *llm.Error
		if !errors.As(c.Err, &le) {
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

func firstError(calls []llm.Result) error {
	for _, c := range calls {
		if c.Err != nil {
			return c.Err
		}
	}
	return nil
}
