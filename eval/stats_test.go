package eval

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		pass, n   int
		low, high float64
	}{
		{10, 10, 0.7225, 1},
		{0, 10, 0, 0.2775},
		{31, 40, 0.6251, 0.8765},
	} {
		low, high := wilson(c.pass, c.n)
		if math.Abs(low-c.low) > 1e-3 || math.Abs(high-c.high) > 1e-3 {
			t.Errorf("wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.pass, c.n, low, high, c.low, c.high)
		}
	}
}

func TestSignTest(t *testing.T) {
	for _, c := range []struct {
		wins, losses int
		p            float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		{9, 1, 0.02148},
		{31, 9, 0.000737},
		{10, 0, 0.001953},
		{600, 400, 2.6e-10},
	} {
		if p := signTest(c.wins, c.losses); math.Abs(p-c.p) > 1e-4*math.Max(1, c.p*10) && math.Abs(p-c.p)/c.p > 0.01 {
			t.Errorf("signTest(%d, %d) = %g, want %g", c.wins, c.losses, p, c.p)
		}
	}
}

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
