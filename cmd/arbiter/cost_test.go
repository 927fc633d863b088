package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// priced writes a configuration pricing test-model at $1000 per million
// prompt and $2000 per million completion tokens: a call of the test server
// (120 + 30 tokens) costs $0.18, a tick of demo-sim (11 calls) $1.98.
func priced(t *testing.T, extra string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	body := "prices:\n  - {model: test-model, prompt: 1000, completion: 2000}\n" + extra
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestMaxCostStopsRun: run.max_cost stops a run with budget_exhausted and
// exit 4, saying what was spent and the limit; a resumed run counts what
// state.db holds. The key comes from the file, ARBITER_RUN_MAX_COST or
// --max-cost.
func TestMaxCostStopsRun(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	cfg := priced(t, "run:\n  max_cost: 3\n")
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "5", "--config", cfg)
	if code != ExitBudget {
		t.Fatalf("run: exit %d, want %d\n%s\n%s", code, ExitBudget, out, errOut)
	}
	for _, want := range []string{"budget_exhausted: $1.98 spent of run.max_cost $3", "stopped after tick 1", "raise run.max_cost"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "budget_exhausted; last committed tick 1") {
		t.Errorf("stdout lacks the stop:\n%s", out)
	}
	// Tick 2's intentions (6 calls) would bring it to $3.06: it never starts.
	if srv.CallCount() != 11 {
		t.Errorf("%d calls, want the 11 of tick 1", srv.CallCount())
	}
	_, status, _ := arbiter(t, "status", sim, "--config", cfg)
	if !strings.Contains(status, "budget_exhausted") {
		t.Errorf("status does not tell the budget stop:\n%s", status)
	}

	// Resumed under a lower limit from the environment: what is spent counts.
	t.Setenv("ARBITER_RUN_MAX_COST", "1.5")
	code, _, errOut = arbiter(t, "run", sim, "--config", cfg)
	if code != ExitBudget || !strings.Contains(errOut, "$1.98 spent of run.max_cost $1.5;") || srv.CallCount() != 11 {
		t.Errorf("resumed run under ARBITER_RUN_MAX_COST=1.5: exit %d, %d calls\n%s", code, srv.CallCount(), errOut)
	}
	// The flag over the environment: room for one more tick.
	code, _, errOut = arbiter(t, "run", sim, "--config", cfg, "--max-cost", "4")
	if code != 0 || srv.CallCount() != 22 {
		t.Errorf("run --max-cost 4: exit %d, %d calls; want tick 2 committed\n%s", code, srv.CallCount(), errOut)
	}
}

// TestMaxCostConfigErrors: a limit without a price for a configured model,
// or a negative one, is a configuration error (exit 2) before anything runs.
func TestMaxCostConfigErrors(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	for _, tc := range []struct {
		name, cfg string
		want      []string
	}{
		{"no prices", "run:\n  max_cost: 2\n", []string{`config run.max_cost: model "test-model" (llm.model) has no price`, "under prices:"}},
		{"phase model unpriced", "phases:\n  resolution: {model: big-1}\nrun:\n  max_cost: 2\nprices:\n  - {model: test-model, prompt: 1}\n",
			[]string{`model "big-1" (phases.resolution.model) has no price`}},
		{"negative", "run:\n  max_cost: -1\n", []string{"config run.max_cost: must not be negative, got -1"}},
	} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(cfg, []byte(tc.cfg), 0o644)
		code, _, errOut := arbiter(t, "run", sim, "--config", cfg)
		if code != ExitUsage {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, ExitUsage, errOut)
		}
		for _, want := range tc.want {
			if !strings.Contains(errOut, want) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, want, errOut)
			}
		}
	}
	if srv.CallCount() != 0 || exists(filepath.Join(sim, "state.db")) {
		t.Errorf("a configuration error called the model (%d calls) or left state.db", srv.CallCount())
	}
}

// TestMaxCostStoredModelUnpriced: a resumed run whose stored calls were
// answered by a model without a price cannot count what was spent: exit 2
// naming the model, before any call.
func TestMaxCostStoredModelUnpriced(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--model", "old-model"); code != 0 {
		t.Fatalf("first run: exit %d\n%s", code, errOut)
	}
	code, _, errOut := arbiter(t, "run", sim, "--config", priced(t, "run:\n  max_cost: 100\n"))
	if code != ExitUsage || !strings.Contains(errOut, `model "old-model"`) || !strings.Contains(errOut, "prices:") || srv.CallCount() != 11 {
		t.Errorf("resume with an unpriced stored model: exit %d, %d calls\n%s", code, srv.CallCount(), errOut)
	}
}
