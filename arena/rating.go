package arena

import (
	"math"

	"github.com/arbiter-sim/arbiter/internal/stats"
	"github.com/arbiter-sim/arbiter/runner"
)

// Configuration sums up one seat configuration (bot, model, model:<name>)
// over every seat it held in every game.
type Configuration struct {
	Seat    string   `json:"seat"`
	Players []string `json:"players"` // the players it sat as, in the kind's order
	// Finished counts the finished games it played, once for each seat it
	// held in them: its wins, losses and draws.
	Finished int `json:"finished"`
	Wins     int `json:"wins"`
	Losses   int `json:"losses"`
	Draws    int `json:"draws"`
	// WinRate is Wins/Finished (0 with no finished game); WinLow and
	// WinHigh are its 95% Wilson interval ([0, 1] with none).
	WinRate float64 `json:"win_rate"`
	WinLow  float64 `json:"win_rate_low"`
	WinHigh float64 `json:"win_rate_high"`
	// InvalidByTurn is its invalid orders or choices per turn of a seat.
	InvalidByTurn float64 `json:"invalid_per_turn"`
	// Rating is its Bradley-Terry strength on the Elo scale, over every
	// finished game, the ratings of an arena averaging 1500; set when the
	// arena has three or more configurations.
	Rating *float64 `json:"rating,omitempty"`
}

// MinRated is how many seat configurations an arena needs for a rating:
// with two, the win rates say it all.
const MinRated = 3

// configurationsOf sums the players' rows up by seat configuration;
// invalid holds each player's invalid orders over turns turns.
func configurationsOf(rows []Row, results []GameResult, turns int, invalid map[string]int) []Configuration {
	var out []Configuration
	index := map[string]int{} // configuration -> its place in out
	of := make([]int, len(rows))
	counted := map[int]int{}
	for r, row := range rows {
		i, ok := index[row.Seat]
		if !ok {
			i = len(out)
			index[row.Seat] = i
			out = append(out, Configuration{Seat: row.Seat})
		}
		of[r] = i
		c := &out[i]
		c.Players = append(c.Players, row.Player)
		c.Wins, c.Losses, c.Draws = c.Wins+row.Wins, c.Losses+row.Losses, c.Draws+row.Draws
		counted[i] += invalid[row.Player]
	}
	for i := range out {
		c := &out[i]
		c.Finished = c.Wins + c.Losses + c.Draws
		if c.Finished > 0 {
			c.WinRate = float64(c.Wins) / float64(c.Finished)
		}
		c.WinLow, c.WinHigh = stats.Wilson(c.Wins, c.Finished)
		if turns > 0 {
			c.InvalidByTurn = float64(counted[i]) / float64(turns*len(c.Players))
		}
	}
	if len(out) >= MinRated {
		for i, r := range bradleyTerry(pairwise(rows, of, len(out), results)) {
			out[i].Rating = &r
		}
	}
	return out
}

// pairwise counts, for every two configurations i and j, the games in
// which i beat j: in a finished game the winner's configuration beats the
// configuration of every other player, and a draw counts half a win each
// way between every two players; players of one configuration compare
// nothing, nor do the losers of a game among themselves. of gives each
// row's configuration, of n.
func pairwise(rows []Row, of []int, n int, results []GameResult) [][]float64 {
	wins := make([][]float64, n)
	for i := range wins {
		wins[i] = make([]float64, n)
	}
	for _, res := range results {
		if res.Stop != runner.StopGameOver {
			continue
		}
		for a, ra := range rows {
			for b := range rows {
				switch i, j := of[a], of[b]; {
				case i == j:
				case res.Winner == "" && a < b:
					wins[i][j] += 0.5
					wins[j][i] += 0.5
				case res.Winner == ra.Player:
					wins[i][j]++
				}
			}
		}
	}
	return wins
}

// bradleyTerry fits the Bradley-Terry model to wins (wins[i][j]: the games
// i won over j) by Hunter's MM algorithm and returns the strengths on the
// Elo scale (400 points: 10 to 1 odds), averaging 1500. One drawn game
// between every two configurations is added first, as a prior: it keeps
// the rating of a configuration that won (or lost) every game finite, and
// rates configurations that never met. Unlike Elo's updates, the fit does
// not depend on the order of the games, which an arena played in parallel
// or in shards does not have.
func bradleyTerry(wins [][]float64) []float64 {
	n := len(wins)
	p := make([]float64, n)
	for i := range p {
		p[i] = 1
	}
	for range 10000 {
		next := make([]float64, n)
		var logSum float64
		for i := range n {
			var won, weight float64
			for j := range n {
				if i != j {
					won += wins[i][j] + 0.5
					weight += (wins[i][j] + wins[j][i] + 1) / (p[i] + p[j])
				}
			}
			next[i] = won / weight
			logSum += math.Log(next[i])
		}
		scale := math.Exp(logSum / float64(n)) // geometric mean 1
		var moved float64
		for i := range next {
			next[i] /= scale
			moved = math.Max(moved, math.Abs(math.Log(next[i]/p[i])))
		}
		p = next
		if moved < 1e-12 {
			break
		}
	}
	out := make([]float64, n)
	for i, s := range p {
		out[i] = 1500 + 400*math.Log10(s)
	}
	return out
}
