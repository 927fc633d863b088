package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/phases"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// perCallUSD is what one call of the test server costs at testPrices:
// 120 prompt tokens at $1000 and 30 completion tokens at $2000 per million.
const perCallUSD = 0.18

var testPrices = map[string]Price{"test-model": {Prompt: 1000, Completion: 2000}}

// TestMaxCostStopsCleanly: run.max_cost is checked before each phase like
// the token budget: tick 2's resolution would pass it, so the run stops
// after tick 2's intentions with budget_exhausted, the spent cost and the
// limit in its message; a new run on the spent budget calls nothing.
func TestMaxCostStopsCleanly(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	limit := 10*perCallUSD - 0.01 // tick 1 (6 calls) and tick 2's intentions (3) fit; its resolution does not
	r, st := h.runner(Config{MaxCost: limit, Prices: testPrices})
	rep, err := r.Run(context.Background(), 5)
	var be *BudgetError
	if !errors.As(err, &be) || !be.Cost {
		t.Fatalf("err = %v, want a cost BudgetError", err)
	}
	if rep.Stop != StopBudget || lastTick(t, st) != 1 || be.Tick != 1 || h.srv.CallCount() != 9 {
		t.Errorf("stop %q, last tick %d, error's tick %d, %d calls; want budget_exhausted after tick 1 and 9 calls", rep.Stop, lastTick(t, st), be.Tick, h.srv.CallCount())
	}
	if want := 6 * perCallUSD; be.Spent < want-1e-9 || be.Spent > want+1e-9 || be.MaxCost != limit {
		t.Errorf("spent %v of %v; want %v of %v", be.Spent, be.MaxCost, want, limit)
	}
	for _, want := range []string{"budget_exhausted: $1.08 spent of run.max_cost $1.79", "tick 2 would bring it to about $2.16", "stopped after tick 1", "raise run.max_cost"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	inOrder(t, h.eventLines(), "EMIT: STATE_ENTRY state=INTENTION", "EMIT: STATE_ENTRY state=ERROR error_type=budget_exhausted", `EMIT: "Cost budget exhausted"`)
	sum, err := st.Summary(context.Background())
	if err != nil || sum.LastStop == nil || sum.LastStop.Reason != StopBudget || !strings.Contains(sum.LastStop.Error, "run.max_cost") {
		t.Errorf("stored stop = %+v, %v; want budget_exhausted naming run.max_cost", sum.LastStop, err)
	}

	// Resumed with a limit below what is spent: the cost in state.db counts,
	// and nothing is called.
	r2, _ := h.runner(Config{MaxCost: 1, Prices: testPrices})
	before := h.srv.CallCount()
	_, err = r2.Run(context.Background(), 1)
	if !errors.As(err, &be) || !be.Cost || h.srv.CallCount() != before || !strings.Contains(err.Error(), "$1.08 spent of run.max_cost $1;") {
		t.Errorf("resumed run: err %v, %d new calls; want a cost BudgetError with $1.08 spent and no call", err, h.srv.CallCount()-before)
	}

	// Raised, the run goes on from where it stopped.
	r3, _ := h.runner(Config{MaxCost: 100, Prices: testPrices})
	if _, err := r3.Run(context.Background(), 1); err != nil || lastTick(t, st) != 2 {
		t.Errorf("run with a raised limit: %v, last tick %d; want tick 2 committed", err, lastTick(t, st))
	}
}

// TestMaxCostUnpricedModel: a call answered by a model without a price
// stops the tick before it commits (what it cost cannot be counted), with
// an error wrapping ErrNoPrice that names the model.
func TestMaxCostUnpricedModel(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{MaxCost: 100, Prices: testPrices})
	r.Stepper.(*phases.Narrative).Resolution.Model = "unpriced-model"
	_, err := r.Run(context.Background(), 1)
	if !errors.Is(err, ErrNoPrice) || !strings.Contains(err.Error(), `model "unpriced-model" (resolution calls) has no price`) || !strings.Contains(err.Error(), "prices:") {
		t.Fatalf("err = %v, want ErrNoPrice naming the model and prices:", err)
	}
	if lastTick(t, st) != 0 {
		t.Errorf("a tick with an unpriced call committed")
	}
}

// TestMaxCostResumeCountsStoredCalls: on resume the calls in state.db are
// priced at their stored model; a stored model without a price is an
// error before any call; a call stored without a model (schema version 2)
// is priced at its phase's configured model.
func TestMaxCostResumeCountsStoredCalls(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{})
	r.Stepper.(*phases.Narrative).Resolution.Model = "other-model"
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}

	r2, _ := h.runner(Config{MaxCost: 100, Prices: testPrices})
	before := h.srv.CallCount()
	_, err := r2.Run(context.Background(), 1)
	if !errors.Is(err, ErrNoPrice) || !strings.Contains(err.Error(), `"other-model"`) || h.srv.CallCount() != before {
		t.Fatalf("resume with a stored model unpriced: %v, %d calls; want ErrNoPrice naming other-model and no call", err, h.srv.CallCount()-before)
	}

	// A tick stored with calls of no model (as schema version 2 left
	// them): priced at the phase's model; 6 calls at $0.18 and 2 at $0.01.
	state, err := st.State(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	json.Unmarshal(state, &s)
	s["tick"] = 2
	state2, _ := json.Marshal(s)
	old := &store.TickRecord{Tick: 2, Kind: "narrative", State: state2, Calls: []store.CallRecord{
		{Phase: "intention", EntityKey: "intention:x", PromptTokens: 10000},
		{Phase: "intention", EntityKey: "intention:y", PromptTokens: 10000},
	}}
	if err := st.CommitTick(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	prices := map[string]Price{"test-model": testPrices["test-model"], "other-model": testPrices["test-model"], "old-model": {Prompt: 1}}
	phaseModel := func(phase string) string { return map[string]string{"intention": "old-model"}[phase] }
	limit := 6*perCallUSD + 0.02
	r3, _ := h.runner(Config{MaxCost: limit, Prices: prices, PhaseModel: phaseModel})
	before = h.srv.CallCount()
	_, err = r3.Run(context.Background(), 1)
	var be *BudgetError
	if !errors.As(err, &be) || h.srv.CallCount() != before || be.Spent < limit-1e-9 || be.Spent > limit+1e-9 {
		t.Errorf("resume over old calls: %v, %d calls; want a cost BudgetError with %v spent and no call", err, h.srv.CallCount()-before, limit)
	}
}
