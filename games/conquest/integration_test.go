//go:build integration

package conquest

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/localmodel"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
)

func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }

// TestIntegrationModelSeatPlaysATurn: a real model plays p1 against the
// bot for one turn through the tool loop. A small local model's orders may
// be nonsense: the test checks that the loop ran, every call was stored,
// the seat either submitted or passed (recorded), every order error has the
// seed's form, and the turn committed.
func TestIntegrationModelSeatPlaysATurn(t *testing.T) {
	url, key, modelName := localmodel.ForTest(t)
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Timeout = url, key, 2*time.Minute
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(simulation(map[string]any{"seed": 7, "seats": map[string]any{"p1": SeatModel, "p2": SeatBot}}), pr)
	if err != nil {
		t.Fatal(err)
	}
	g.Client, g.MaxIterations = client, 3
	g.Params = llm.Params{Model: modelName, MaxTokens: 200, Temperature: 0.01}
	// Small local models need the call's shape forced (see llm.ToolRequest).
	g.ForceShape = os.Getenv("OPENAI_BASE_URL") == "" && os.Getenv("OPENAI_API_KEY") == "" ||
		strings.Contains(url, "127.0.0.1") || strings.Contains(url, "localhost")
	r, st := openRunner(t, t.TempDir(), g, client)
	rep, err := r.Run(context.Background(), 1)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	if rep.LastTick != 1 {
		t.Fatalf("last tick %d, want 1", rep.LastTick)
	}
	calls, err := st.Calls(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) == 0 || len(calls) > 3 {
		t.Errorf("%d calls stored, want 1 to 3 (MaxIterations)", len(calls))
	}
	for _, c := range calls {
		t.Logf("%s %s: raw %q error %q", c.Phase, c.EntityKey, c.Raw, c.Error)
		if c.Phase != PhaseOrders || c.EntityKey != "conquest:p1" {
			t.Errorf("stored call %s %s", c.Phase, c.EntityKey)
		}
	}
	s := r.State().(*State)
	t.Logf("passed %+v, errors %+v, fleets %+v", s.Passed, s.Errors, s.Fleets)
	for _, e := range s.ErrorsOf("p1", 1) {
		if !strings.HasPrefix(e.Error, "Order ") && !strings.HasPrefix(e.Error, "Invalid orders: ") {
			t.Errorf("order error %q", e.Error)
		}
	}
	for _, p := range s.Passed {
		if p.Player != "p1" || p.Reason == "" {
			t.Errorf("pass %+v", p)
		}
	}
}
