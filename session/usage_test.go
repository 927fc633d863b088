package session

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// TestBuildUsageAssumesModelOfOldCalls: a call stored without its model
// (schema version 2) is priced at its phase's configured model, and the
// report says so; a call with a model is priced at it whatever the phase.
func TestBuildUsageAssumesModelOfOldCalls(t *testing.T) {
	t.Parallel()
	rows := []store.CallUsage{
		{Tick: 1, Phase: "intention", EntityKey: "intention:ada", Usage: store.Usage{Calls: 1, PromptTokens: 1e6}},
		{Tick: 2, Phase: "intention", EntityKey: "intention:ada", Model: "dear", Usage: store.Usage{Calls: 1, PromptTokens: 1e6}},
	}
	rep := buildUsage("s", rows, func(string) string { return "cheap" }, map[string]runner.Price{"cheap": {Prompt: 1}, "dear": {Prompt: 5}})
	if !rep.Assumed || !rep.Priced {
		t.Fatalf("assumed %v, priced %v; want both", rep.Assumed, rep.Priced)
	}
	if c := rep.Total.CostUSD; c == nil || *c != 6 {
		t.Errorf("total cost %v, want 6 (1 at cheap, 5 at dear)", c)
	}
	if rep.ByPhase[0].Model != "cheap, dear" || len(rep.ByModel) != 2 {
		t.Errorf("by phase %+v, by model %+v", rep.ByPhase, rep.ByModel)
	}
}

// TestBuildUsagePartlyPriced: a line whose calls include an unpriced model
// has an unknown cost; the others keep theirs.
func TestBuildUsagePartlyPriced(t *testing.T) {
	t.Parallel()
	rows := []store.CallUsage{
		{Tick: 1, Phase: "intention", EntityKey: "intention:ada", Usage: store.Usage{Calls: 1, PromptTokens: 1e6}},
		{Tick: 1, Phase: "resolution", EntityKey: "resolution:hall", Usage: store.Usage{Calls: 1, CompletionTokens: 1e6}},
		{Tick: 2, Phase: "intention", EntityKey: "intention:ada", Usage: store.Usage{Calls: 1, PromptTokens: 2e6}},
	}
	model := map[string]string{"intention": "cheap", "resolution": "secret"}
	rep := buildUsage("s", rows, func(p string) string { return model[p] }, map[string]runner.Price{"cheap": {Prompt: 0.5, Completion: 9}})
	if rep.Priced || strings.Join(rep.Unpriced, ",") != "secret" {
		t.Errorf("priced %v, unpriced %v", rep.Priced, rep.Unpriced)
	}
	if rep.Total.CostUSD != nil || rep.ByTick[0].CostUSD != nil || rep.ByPhase[1].CostUSD != nil {
		t.Error("a line with unpriced calls has a cost")
	}
	if c := rep.ByTick[1].CostUSD; c == nil || *c != 1 {
		t.Errorf("tick 2 cost %v, want 1", c)
	}
	if c := rep.ByEntity[0].CostUSD; c == nil || *c != 1.5 {
		t.Errorf("intention:ada cost %v, want 1.5", c)
	}
}

// Every endpoint the latest run configured has a row, in name order, one
// that was sent nothing included; the rows stored keep their figures.
func TestConfiguredEndpointsEachHaveARow(t *testing.T) {
	t.Parallel()
	stored := []store.GroupUsage{{Key: "gpu-b", Usage: store.Usage{Calls: 4}}, {Key: "gpu-c", Usage: store.Usage{EndpointFailures: 3}}}
	got := configuredEndpoints(stored, []string{"gpu-c", "gpu-a", "gpu-b"})
	want := []store.GroupUsage{{Key: "gpu-a"}, stored[0], stored[1]}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rows %+v, want %+v", got, want)
	}
	if stored[0].Key != "gpu-b" || len(stored) != 2 {
		t.Errorf("the stored rows were changed: %+v", stored)
	}
}
