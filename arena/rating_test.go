package arena

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arbiter-sim/arbiter/runner"
)

// TestBradleyTerryFits: the ratings are the maximum-likelihood fit with
// the prior (one drawn game between every two): each configuration's
// wins equal the wins the fitted strengths expect of it. They average
// 1500, follow the results (a beats b beats c), and stay finite for a
// configuration that won every game.
func TestBradleyTerryFits(t *testing.T) {
	wins := [][]float64{
		{0, 7, 9},
		{3, 0, 6},
		{0, 4, 0}, // c never beat a
	}
	r := bradleyTerry(wins)
	if !(r[0] > r[1] && r[1] > r[2]) {
		t.Fatalf("ratings %v: want a > b > c", r)
	}
	if mean := (r[0] + r[1] + r[2]) / 3; math.Abs(mean-1500) > 1e-6 {
		t.Errorf("ratings %v average %v, want 1500", r, mean)
	}
	p := make([]float64, 3)
	for i := range r {
		p[i] = math.Pow(10, (r[i]-1500)/400)
	}
	for i := range 3 {
		var won, expected float64
		for j := range 3 {
			if i != j {
				won += wins[i][j] + 0.5
				expected += (wins[i][j] + wins[j][i] + 1) * p[i] / (p[i] + p[j])
			}
		}
		if math.Abs(won-expected) > 1e-6 {
			t.Errorf("configuration %d won %v, the fit expects %v", i, won, expected)
		}
	}
	sweep := bradleyTerry([][]float64{{0, 20, 20}, {0, 0, 0}, {0, 0, 0}})
	if math.IsInf(sweep[0], 0) || math.IsNaN(sweep[0]) || sweep[1] != sweep[2] || sweep[0] <= sweep[1] {
		t.Errorf("a sweep: %v, want a finite first and the two others equal", sweep)
	}
	if even := bradleyTerry([][]float64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}); slices.ContainsFunc(even, func(x float64) bool { return math.Abs(x-1500) > 1e-9 }) {
		t.Errorf("no games: %v, want 1500 each", even)
	}
}

// TestRatingIgnoresOrder: the same games in another order (as shards or
// parallel games give them) rate the same; a game's winner beats every
// other configuration, a draw is half each way, players of one
// configuration and unfinished games compare nothing.
func TestRatingIgnoresOrder(t *testing.T) {
	rows := []Row{{Player: "p1", Seat: "model:terse"}, {Player: "p2", Seat: "model"}, {Player: "p3", Seat: "bot"}, {Player: "p4", Seat: "bot"}}
	var results []GameResult
	for k, w := range []string{"p1", "p1", "p2", "p3", "", "p4", "p1"} {
		results = append(results, GameResult{Seed: uint64(k), Stop: runner.StopGameOver, Winner: w})
	}
	results = append(results, GameResult{Seed: 99, Stop: runner.StopCompleted})
	of := []int{0, 1, 2, 2}
	got := pairwise(rows, of, 3, results)
	want := [][]float64{
		{0, 3 + 0.5, 2*3 + 1}, // terse won 3 games: over model, and over both bots each time
		{1 + 0.5, 0, 2 + 1},
		{2 + 1, 2 + 1, 0}, // each bot win beats terse and model once; the draw is half of a game for each bot
	}
	for i := range want {
		for j := range want[i] {
			if got[i][j] != want[i][j] {
				t.Fatalf("pairwise %v, want %v", got, want)
			}
		}
	}
	first := configurationsOf(rows, results, 10, map[string]int{})
	shuffled := slices.Clone(results)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	again := configurationsOf(rows, shuffled, 10, map[string]int{})
	for i := range first {
		if first[i].Rating == nil || *first[i].Rating != *again[i].Rating {
			t.Errorf("configuration %s: rating %v, then %v in another order", first[i].Seat, first[i].Rating, again[i].Rating)
		}
	}
}
