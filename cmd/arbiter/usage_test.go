package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
)

func TestUsage(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, out, _ := arbiter(t, "usage", sim); code != 0 || !strings.Contains(out, "no model calls committed yet") {
		t.Errorf("usage before a run: exit %d\n%s", code, out)
	}
	// The run: intention on test-model, resolution on a model of its own.
	runCfg := filepath.Join(t.TempDir(), "run.yaml")
	os.WriteFile(runCfg, []byte("phases:\n  resolution: {model: \"big-3.5\"}\n"), 0o644)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2", "--config", runCfg); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}

	checkUsageUnpriced(t, sim)

	// Priced by the model stored with each call: the configuration now
	// puts resolution on another model, which must not change the price.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte(`
phases:
  resolution: {model: "other-1"}
prices:
  - {model: test-model, prompt: 1, completion: 2}
  - {model: "big-3.5", prompt: 10, completion: 20}
`), 0o644)
	code, out, errOut := arbiter(t, "usage", sim, "--json", "--config", cfg)
	if code != 0 {
		t.Fatalf("usage --json: exit %d\n%s", code, errOut)
	}
	var rep session.UsageReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("usage --json: %v\n%s", err, out)
	}
	u := openaitest.DefaultUsage
	perCall := u.PromptTokens + u.CompletionTokens
	intention := float64(12*u.PromptTokens*1+12*u.CompletionTokens*2) / 1e6
	resolution := float64(10*u.PromptTokens*10+10*u.CompletionTokens*20) / 1e6
	if !rep.Priced || rep.Assumed || len(rep.ByModel) != 2 || len(rep.ByPhase) != 2 || len(rep.ByTick) != 2 || len(rep.ByEntity) != 11 {
		t.Fatalf("usage --json: %+v", rep)
	}
	if rep.Total.Calls != 22 || rep.Total.PromptTokens+rep.Total.CompletionTokens != 22*perCall {
		t.Errorf("total = %+v", rep.Total)
	}
	for _, c := range []struct {
		line session.UsageLine
		want float64
	}{{rep.ByPhase[0], intention}, {rep.ByPhase[1], resolution}, {rep.ByModel[0], resolution}, {rep.ByModel[1], intention},
		{rep.Total, intention + resolution}, {rep.ByTick[1], (intention + resolution) / 2}} {
		if c.line.CostUSD == nil || !near(*c.line.CostUSD, c.want) {
			t.Errorf("%s%d: cost %v, want %g", c.line.Key, c.line.Tick, c.line.CostUSD, c.want)
		}
	}
	if rep.ByPhase[1].Model != "big-3.5" || rep.ByModel[0].Key != "big-3.5" || rep.ByTick[0].Tick != 1 {
		t.Errorf("by phase %+v, by model %+v, by tick %+v", rep.ByPhase, rep.ByModel, rep.ByTick)
	}
	_, out, _ = arbiter(t, "usage", sim, "--config", cfg)
	total := fmt.Sprintf("cost $%.4f\n", intention+resolution)
	if !strings.Contains(out, total) || !strings.Contains(out, "latency (per call)  cost\n") || strings.Contains(out, "unknown") || strings.Contains(out, "no price") ||
		strings.Contains(out, "other-1") {
		t.Errorf("usage with prices lacks %q and a cost column, or names the configured model no call used:\n%s", total, out)
	}
}

// checkUsageUnpriced checks usage of TestUsage's run of sim with no prices
// configured: tokens only, the cost unknown and the models named, and no
// cost column.
func checkUsageUnpriced(t *testing.T, sim string) {
	t.Helper()
	code, out, errOut := arbiter(t, "usage", sim)
	if code != 0 {
		t.Fatalf("usage: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{"demo-sim: 22 calls over 2 ticks, 0 failed;", "cost unknown", "no price configured for [big-3.5 test-model]",
		"intention (test-model)", "resolution (big-3.5)", "resolution:wharf", "\n2 "} {
		if !strings.Contains(out, want) {
			t.Errorf("usage lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "stored without their model") {
		t.Errorf("usage says models were assumed, but every call stored its own:\n%s", out)
	}

	if header, _, _ := strings.Cut(out[strings.Index(out, "phase (model)"):], "\n"); strings.Contains(header, "cost") {
		t.Errorf("a cost column with no price configured: %q", header)
	}
}

// TestUsageSaysModelsWereAssumed: the text says when calls were priced at
// their phase's configured model, and names the models of each phase.
func TestUsageSaysModelsWereAssumed(t *testing.T) {
	t.Parallel()
	cost := 6.0
	line := session.UsageLine{Usage: store.Usage{Calls: 2, PromptTokens: 2e6}, CostUSD: &cost}
	rep := &session.UsageReport{Simulation: "s", Priced: true, Assumed: true, Total: line,
		ByPhase: []session.UsageLine{line}, ByTick: []session.UsageLine{line, line}}
	rep.ByPhase[0].Key, rep.ByPhase[0].Model = "intention", "cheap, dear"
	var b strings.Builder
	if err := writeUsage(&IOStreams{Out: &b}, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "stored without their model") || !strings.Contains(b.String(), "intention (cheap, dear)") {
		t.Errorf("usage text does not say the model was assumed:\n%s", b.String())
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

func TestPricesConfig(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct{ yaml, want string }{
		{"prices:\n  - {prompt: 1}\n", "prices[0].model: must not be empty"},
		{"prices:\n  - {model: a, prompt: 1}\n  - {model: a, prompt: 2}\n", `prices[1]: model "a" is priced twice`},
		{"prices:\n  - {model: a, completion: -1}\n", "prices must not be negative"},
	} {
		cfg := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(cfg, []byte(tc.yaml), 0o644)
		code, _, errOut := arbiter(t, "config", "show", "--config", cfg)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d\n%s", tc.yaml, code, errOut)
		}
	}
}
