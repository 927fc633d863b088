package main

import (
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// TestOneIsSingular: counts of one read "1 tick", "1 call", never "1 ticks".
func TestOneIsSingular(t *testing.T) {
	t.Parallel()
	ios, out, _ := TestStreams("")
	one := runner.TickReport{Tick: 1, Calls: 1, Fallbacks: 1, Repairs: 1, ApplyErrors: 1, Usage: llm.Usage{PromptTokens: 1}}
	writeTickLine(ios, one)
	writeReport(ios, &globals{}, "sim", &runner.Report{LastTick: 1, Ticks: []runner.TickReport{one}, Usage: one.Usage, Stop: "completed"})
	writeArena(ios, "sim", &arena.Table{Kind: "conquest", Games: 1, Seed: 7, Turns: 1, Draws: 1})
	want := []string{
		"tick 1 committed: 1 call, 0 failed, 1 fallback, 1 repair, 1 apply error, 1 token, 0s\n",
		"sim: completed; last committed tick 1 (1 tick this run, 1 token)\n",
		"sim arena (conquest): 1 game, seed 7, 1 turn; 1 draw, 0 unfinished\n",
	}
	for _, w := range want {
		if !strings.Contains(out.String(), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
}
