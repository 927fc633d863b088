package eval

import (
	"math"
	"testing"
)

func TestPercentile(t *testing.T) {
	xs := []int64{5, 1, 4, 2, 3, 10, 9, 8, 7, 6}
	if p50, p95 := percentile(xs, 0.5), percentile(xs, 0.95); p50 != 5 || p95 != 10 {
		t.Errorf("p50 %d p95 %d, want 5 and 10", p50, p95)
	}
	if percentile(nil, 0.5) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestSummarizeComparesPairedCases(t *testing.T) {
	pass, fail := true, false
	r := &Result{Variants: []VariantInfo{{Name: Baseline}, {Name: "terse"}},
		Assertions: []AssertionInfo{{Name: "short", Phase: "intention", Kind: "length", MinPassRate: 0.5}, {Name: "judged", Phase: "intention", Kind: "judge", MinPassRate: 0.5}}}
	score := func(f float64) *float64 { return &f }
	for i := range 10 {
		r.Cases = append(r.Cases, Case{Tick: 1, Phase: "intention", Entity: string(rune('a' + i))})
		terse := &pass
		if i == 0 {
			terse = &fail
		}
		r.Answers = append(r.Answers,
			Answer{Case: i, Variant: Baseline, Outcomes: []Outcome{{Assertion: "short", Pass: &fail}, {Assertion: "judged", Pass: &pass, Score: score(0.5)}}},
			Answer{Case: i, Variant: "terse", Outcomes: []Outcome{{Assertion: "short", Pass: terse}, {Assertion: "judged", JudgeError: "unreadable"}}})
	}
	summarize(r)
	c := r.Comparisons[0]
	if c.Wins != 9 || c.Losses != 0 || c.Ties != 1 || math.Abs(c.P-0.003906) > 1e-5 {
		t.Errorf("comparison = %+v, want 9 wins, 1 tie, p 0.0039", c)
	}
	terse := r.Summaries[1].Rates[1]
	if terse.N != 0 || terse.JudgeErrors != 10 {
		t.Errorf("judge errors counted as passes or fails: %+v", terse)
	}
	// The baseline fails "short" (0%), terse cannot be judged: neither
	// meets its threshold, and the eval fails.
	if r.Passed || r.Thresholds[0].Passed || !r.Thresholds[1].Passed || r.Thresholds[3].Passed {
		t.Errorf("thresholds = %+v, passed %v", r.Thresholds, r.Passed)
	}
	// A threshold of 0 asks for nothing: met even with nothing judged.
	r.Assertions[1].MinPassRate = 0
	summarize(r)
	if !r.Thresholds[3].Passed {
		t.Errorf("a 0%% threshold with no answer judged is not met: %+v", r.Thresholds[3])
	}
}

func TestLineDiff(t *testing.T) {
	d := lineDiff("a\nb\nc", "a\nB\nc\nd")
	got := ""
	for _, l := range d {
		got += l.Op + l.Text + " "
	}
	if got != "=a -b +B =c +d " {
		t.Errorf("lineDiff = %q", got)
	}
}
