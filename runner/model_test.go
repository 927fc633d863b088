package runner_test

import (
	"context"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/phases"
	. "github.com/arbiter-sim/arbiter/runner"
)

// TestCallsStoreTheirModel: every stored call names the model its request
// named, so a run whose phases use different models is priced per model.
func TestCallsStoreTheirModel(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{})
	r.Stepper.(*phases.Narrative).Resolution.Model = "big-model"
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	calls, err := st.Calls(context.Background(), 1)
	if err != nil || len(calls) == 0 {
		t.Fatalf("calls of tick 1: %d, %v", len(calls), err)
	}
	for _, c := range calls {
		want := map[string]string{"intention": "test-model", "resolution": "big-model"}[c.Phase]
		if c.Model != want {
			t.Errorf("%s call of %s stored model %q, want %q", c.Phase, c.EntityKey, c.Model, want)
		}
	}
}
