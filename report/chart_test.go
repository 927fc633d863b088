package report

import (
	"math"
	"strings"
	"testing"
)

func TestNiceCeilAndNumber(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want float64 }{{0, 0.25}, {1, 1}, {1.1, 2}, {3, 5}, {2.2, 2.5}, {225, 250}, {0.3, 0.5}, {7000, 10000}} {
		if got := niceCeil(tc.in); got != tc.want {
			t.Errorf("niceCeil(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   float64
		want string
	}{{0, "0"}, {250, "250"}, {0.25, "0.25"}, {2.333, "2.33"}, {25000, "25k"}, {12500, "12.5k"}} {
		if got := number(tc.in); got != tc.want {
			t.Errorf("number(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestChartGrid: the grid has four round steps over the largest value;
// counts step by whole calls; a value sits at its height.
func TestChartGrid(t *testing.T) {
	t.Parallel()
	labels := func(v chartView) string {
		var out []string
		for _, g := range v.Grid {
			out = append(out, g.Label)
		}
		return strings.Join(out, " ")
	}
	tokens := Chart{Ticks: []int{1, 2}, Series: []Series{{Name: "a", Values: []float64{900, 450}}}}.view()
	if got := labels(tokens); got != "0 250 500 750 1000" {
		t.Errorf("grid of 900 tokens = %s", got)
	}
	if d := tokens.Series[0].Dots; len(d) != 2 || math.Abs(d[0].Y-(tokens.Bot-(tokens.Bot-tokens.Top)*0.9)) > 1e-9 || d[0].Title != "a, tick 1: 900 " {
		t.Errorf("dots = %+v", d)
	}
	calls := Chart{Bars: true, Ticks: []int{1, 2, 3}, Series: []Series{{Name: "f", Values: []float64{1, 0, 2}}}}.view()
	if got := labels(calls); got != "0 1 2 3 4" {
		t.Errorf("grid of 2 calls = %s", got)
	}
	if b := calls.Series[0].Bars; len(b) != 2 {
		t.Errorf("bars = %+v, want 2 (none for a zero)", b)
	}
	empty := Chart{Ticks: []int{1}, Series: []Series{{Name: "z", Values: []float64{0}}}}.view()
	if !empty.Empty {
		t.Error("a chart of zeros is not marked empty")
	}
	many := make([]int, 100)
	for i := range many {
		many[i] = i + 1
	}
	if v := (Chart{Ticks: many}).view(); len(v.XLabels) > 14 || v.XLabels[len(v.XLabels)-1].Text != "100" {
		t.Errorf("%d tick labels for 100 ticks (last %v), want at most 14 ending at 100", len(v.XLabels), v.XLabels[len(v.XLabels)-1])
	}
}
