package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// ticker is a kind whose state counts its ticks; its state at tick badAt
// is not JSON, so the store refuses to commit that tick.
type ticker struct{ badAt int }

func (k *ticker) Kind() string { return "ticker" }

func (k *ticker) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	return (&counter{}).Load(ctx, st, tick) // a number, as the counter's
}

// Step runs one phase of two calls, one of which fails and falls back (a
// recovery told when the tick's fate is known), then enters APPLY.
func (k *ticker) Step(ctx context.Context, t *Tick, s, _ any) (any, error) {
	_, err := t.Phase(ctx, Phase{Name: "guess", Calls: 2, Strategy: "fallback_guess"}, func(context.Context) ([]Call, error) {
		req := llm.Request{EntityKey: "guess:a", Phase: "guess"}
		return []Call{
			{Result: &llm.Result{Request: req, Output: json.RawMessage(`{}`), Raw: `{}`}},
			{Result: &llm.Result{Request: req, Err: &llm.Error{Kind: llm.KindSchema, Message: "off schema"}}, Fallback: true},
		}, nil
	})
	if err != nil {
		return nil, err
	}
	t.Enter(StateApply)
	return s.(int) + 1, nil
}

func (k *ticker) Encode(rec *store.TickRecord, _, s any) error {
	if s.(int) == k.badAt {
		rec.State = json.RawMessage("{")
		return nil
	}
	rec.State, _ = json.Marshal(s)
	return nil
}

func openTicker(t *testing.T, badAt int) *Runner {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &Runner{Stepper: &ticker{badAt: badAt}, Store: st}
}

// TestRunCommitsInOrder: with each commit overlapping the next tick, every
// tick is stored, in order, reported once as it commits, and the report
// holds them all.
func TestRunCommitsInOrder(t *testing.T) {
	r := openTicker(t, 0)
	var told, shown []int
	r.OnTick = func(tr TickReport) { told = append(told, tr.Tick) }
	r.OnEvent = func(e Event) {
		// Nothing of a tick is shown before the tick before it is stored.
		if e.Tick > 1 && (len(told) == 0 || told[len(told)-1] != e.Tick-1) {
			t.Errorf("an event of tick %d shown after ticks %v were told stored", e.Tick, told)
		}
		shown = append(shown, e.Tick)
	}
	r.OnPhase = func(p PhaseProgress) {
		if p.Tick > 1 && (len(told) == 0 || told[len(told)-1] != p.Tick-1) {
			t.Errorf("progress of tick %d shown after ticks %v were told stored", p.Tick, told)
		}
	}
	rep, err := r.Run(t.Context(), 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(shown) < 5 || shown[0] != 1 || shown[len(shown)-1] != 5 {
		t.Errorf("events shown of ticks %v, want each tick's", shown)
	}
	if len(rep.Ticks) != 5 || rep.LastTick != 5 || r.LastTick() != 5 || r.State() != 5 {
		t.Fatalf("report %+v, runner at %d with %v; want 5 ticks", rep, r.LastTick(), r.State())
	}
	for i, tr := range rep.Ticks {
		if tr.Tick != i+1 || told[i] != i+1 {
			t.Errorf("tick %d reported as %d, told as %d", i+1, tr.Tick, told[i])
		}
	}
	if last, err := r.Store.LastTick(t.Context()); err != nil || last != 5 {
		t.Errorf("stored up to %d, %v; want 5", last, err)
	}
}

// TestRunCommitFailureStops: a commit that fails while the next tick is
// played stops the run with commit_failed for its tick; the next tick is
// never stored, the runner is back at the last stored tick and the report
// holds only the stored ticks.
func TestRunCommitFailureStops(t *testing.T) {
	r := openTicker(t, 3)
	var failedAt []int // ticks of the commit_failed entries
	r.OnEvent = func(e Event) {
		if strings.Contains(e.String(), "error_type=commit_failed") {
			failedAt = append(failedAt, e.Tick)
		}
		// Tick 4 was played while tick 3 committed, and dropped with it.
		if e.Tick > 3 {
			t.Errorf("an event of tick %d shown: %s", e.Tick, e)
		}
	}
	r.OnPhase = func(p PhaseProgress) {
		if p.Tick > 3 {
			t.Errorf("progress of tick %d shown: %+v", p.Tick, p)
		}
	}
	var told []int
	r.OnTick = func(tr TickReport) { told = append(told, tr.Tick) }
	rep, err := r.Run(t.Context(), 6)
	if err == nil || !strings.Contains(err.Error(), "commit tick 3") {
		t.Fatalf("Run = %v; want tick 3's commit error", err)
	}
	if rep.Stop != StopError || rep.LastTick != 2 || len(rep.Ticks) != 2 || r.LastTick() != 2 || r.State() != 2 {
		t.Errorf("report %+v, runner at %d with %v; want stopped after tick 2", rep, r.LastTick(), r.State())
	}
	if last, _ := r.Store.LastTick(t.Context()); last != 2 {
		t.Errorf("stored up to %d, want 2", last)
	}
	if len(told) != 2 {
		t.Errorf("ticks told %v, want 1 and 2", told)
	}
	if len(failedAt) != 1 || failedAt[0] != 3 {
		t.Errorf("commit_failed entered at ticks %v, want once at tick 3", failedAt)
	}
	sum, err := r.Store.Summary(t.Context())
	if err != nil || sum.LastStop == nil || sum.LastStop.Tick != 3 || sum.LastStop.Reason != StopError {
		t.Errorf("stop recorded %+v, %v; want an error stop at tick 3", sum.LastStop, err)
	}
	var qe *QuorumError
	if errors.As(err, &qe) {
		t.Errorf("a commit failure reported as %v", err)
	}
}

// TestRunLastCommitFailureStops: the last tick's commit, which Run waits
// for after its loop, fails the run the same way: its error, the ticks
// before it kept and told, an error stop recorded at that tick.
func TestRunLastCommitFailureStops(t *testing.T) {
	r := openTicker(t, 3)
	var told []int
	r.OnTick = func(tr TickReport) { told = append(told, tr.Tick) }
	rep, err := r.Run(t.Context(), 3)
	if err == nil || !strings.Contains(err.Error(), "commit tick 3") {
		t.Fatalf("Run = %v; want tick 3's commit error", err)
	}
	if rep.Stop != StopError || rep.LastTick != 2 || len(rep.Ticks) != 2 || r.LastTick() != 2 {
		t.Errorf("report %+v, runner at %d; want stopped after tick 2", rep, r.LastTick())
	}
	if len(told) != 2 {
		t.Errorf("ticks told %v, want 1 and 2", told)
	}
	if sum, err := r.Store.Summary(t.Context()); err != nil || sum.LastStop == nil || sum.LastStop.Tick != 3 || sum.LastStop.Reason != StopError {
		t.Errorf("stop recorded %+v, %v; want an error stop at tick 3", sum.LastStop, err)
	}
}

// patient is a ticker that waits in each Step for the commit of the tick
// before to end (Tick.Before), as a kind that works ahead does before it
// starts the next tick, and notes the last tick stored by then.
type patient struct {
	ticker
	st     *store.Store
	stored []int // per Step: the last tick stored once Before was closed
}

func (k *patient) Step(ctx context.Context, t *Tick, s, in any) (any, error) {
	<-t.Before()
	last, err := k.st.LastTick(ctx)
	if err != nil {
		return nil, err
	}
	k.stored = append(k.stored, last)
	return k.ticker.Step(ctx, t, s, in)
}

// TestTickBeforeEndsWithTheCommitBefore: Before is closed only once the
// tick before is stored, and also when its commit failed, so a kind that
// waits for it never waits for a tick that will not come.
func TestTickBeforeEndsWithTheCommitBefore(t *testing.T) {
	r := openTicker(t, 0)
	k := &patient{st: r.Store}
	r.Stepper = k
	if _, err := r.Run(t.Context(), 5); err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 1, 2, 3, 4}; !slices.Equal(k.stored, want) {
		t.Errorf("stored when each Step's Before closed: %v, want %v", k.stored, want)
	}

	r = openTicker(t, 3) // tick 3 is not stored
	k = &patient{ticker: ticker{badAt: 3}, st: r.Store}
	r.Stepper = k
	if _, err := r.Run(t.Context(), 5); err == nil {
		t.Fatal("the run went past a commit that failed")
	}
	if want := []int{0, 1, 2, 2}; !slices.Equal(k.stored, want) {
		t.Errorf("stored when each Step's Before closed: %v, want %v (tick 4 played while tick 3's commit failed)", k.stored, want)
	}
}
