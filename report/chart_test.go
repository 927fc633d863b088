package report

import (
	"fmt"
	"math"
	"slices"
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

// TestLineStyles: each line of a chart and each path has its own dashes
// and markers besides its colour, so lines lying on one another stay
// told apart; lines equal at every tick get a note naming them. Bars get
// neither.
func TestLineStyles(t *testing.T) {
	t.Parallel()
	series := []Series{{Name: "a", Values: []float64{1, 2}}, {Name: "b", Values: []float64{1, 2}}, {Name: "c", Values: []float64{2, 1}}, {Name: "d", Values: []float64{1, 2}}}
	v := Chart{Ticks: []int{1, 2}, Series: series}.view()
	dashes, marks := map[string]bool{}, map[string]bool{}
	for _, s := range v.Series {
		dashes[s.Dash] = true
		marks[s.marker(0, 0)] = true // the shape, drawn at one place
		if s.Sample == "" {
			t.Errorf("series %s has no legend sample", s.Name)
		}
	}
	if len(dashes) != 4 || len(marks) != 4 {
		t.Errorf("4 lines drawn with %d dash patterns and %d marker shapes, want 4 of each", len(dashes), len(marks))
	}
	want := []string{"a, b and d have the same value at every tick: their lines lie on one another (told apart by dashes and markers)."}
	if !slices.Equal(v.Notes, want) {
		t.Errorf("notes = %q, want %q", v.Notes, want)
	}
	bars := Chart{Bars: true, Ticks: []int{1, 2}, Series: series}.view()
	if len(bars.Notes) != 0 || bars.Series[0].Dash != "" || bars.Series[1].Dash != "" {
		t.Errorf("bars: notes %q, dashes %q %q; want none", bars.Notes, bars.Series[0].Dash, bars.Series[1].Dash)
	}
	if empty := (Chart{Ticks: []int{1}, Series: []Series{{Name: "x", Values: []float64{0}}, {Name: "y", Values: []float64{0}}}}).view(); len(empty.Notes) != 0 {
		t.Errorf("an empty chart has notes %q", empty.Notes)
	}

	pc := &PathChart{Locations: []Place{{ID: "hall", Name: "Hall"}, {ID: "yard", Name: "Yard"}}, Ticks: []int{0, 1},
		Paths: []Path{{ID: "ada", Name: "Ada", At: []string{"hall", "yard"}}, {ID: "bo", Name: "Bo", At: []string{"yard", "yard"}}, {ID: "cy", Name: "Cy", At: []string{"hall", "yard"}}}}
	pv := pc.view()
	if want := []string{"Ada and Cy were at the same place at every tick: their paths are drawn side by side."}; !slices.Equal(pv.Notes, want) {
		t.Errorf("path notes = %q, want %q", pv.Notes, want)
	}
	if a, c := pv.Paths[0], pv.Paths[2]; a.Dash == c.Dash || a.Dots[0].Mark == c.Dots[0].Mark || a.Dots[0].Y == c.Dots[0].Y {
		t.Errorf("Ada and Cy's paths look alike: dashes %q %q, marks %q %q", a.Dash, c.Dash, a.Dots[0].Mark, c.Dots[0].Mark)
	}
}

func TestAnd(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b and c"}} {
		if got := and(tc.in); got != tc.want {
			t.Errorf("and(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestPathsSharingAPlaceStayApart: characters at the same place at the
// same tick are drawn more than a marker's width (8 pixels) apart, however
// many share it, each in a lane of its own, and the row grows to hold
// them all.
func TestPathsSharingAPlaceStayApart(t *testing.T) {
	t.Parallel()
	for _, n := range []int{2, 6, 12} {
		pc := &PathChart{Locations: []Place{{ID: "a", Name: "A"}, {ID: "b", Name: "B"}}, Ticks: []int{0, 1}}
		for i := range n {
			pc.Paths = append(pc.Paths, Path{ID: fmt.Sprint("c", i), Name: fmt.Sprint("C", i), At: []string{"a", "a"}})
		}
		v := pc.view()
		var ys []float64
		for _, p := range v.Paths {
			ys = append(ys, p.Dots[0].Y)
		}
		slices.Sort(ys)
		for i := 1; i < len(ys); i++ {
			if ys[i]-ys[i-1] <= 8 {
				t.Errorf("%d characters at one place: markers %.1f and %.1f overlap", n, ys[i-1], ys[i])
			}
		}
		rowTop, rowBot := v.Top, v.Top+(v.Bot-v.Top)/2 // the first row, A's
		if ys[0] < rowTop || ys[len(ys)-1] > rowBot {
			t.Errorf("%d characters: lanes %.1f..%.1f leave A's row %.1f..%.1f", n, ys[0], ys[len(ys)-1], rowTop, rowBot)
		}
	}
}
