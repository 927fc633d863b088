package duel

import (
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// FuzzOverflowSettings: settings out of their bounds are refused naming
// the key (health 9223372036854775807 was accepted and wrapped to
// -9223372036854775806), and a game of settings within them, its lines at
// any count, plays turns without a count wrapping or leaving its range.
func FuzzOverflowSettings(f *testing.F) {
	for _, v := range [][4]int64{{30, 30, 1, 0}, {math.MaxInt64, 30, 7, 0}, {MaxHealth, MaxMaxTurns, math.MaxInt64, math.MaxInt64},
		{1, 1, 0, math.MaxInt64 - 3}, {0, -1, -1, -1}, {MaxHealth + 1, MaxMaxTurns + 1, math.MinInt64, math.MinInt64}} {
		f.Add(v[0], v[1], v[2], v[3])
	}
	pr, err := prompts.New("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, health, maxTurns, seed, lines int64) {
		dir := t.TempDir()
		set := map[string]any{"health": int(health), "max_turns": int(maxTurns), "seed": int(seed), "seats": people("bot", "bot")}
		g, err := Open(&world.Simulation{Dir: dir, ID: "t", Kind: KindName, Settings: set}, pr)
		inBounds := health >= 1 && health <= MaxHealth && maxTurns >= 1 && maxTurns <= MaxMaxTurns && seed >= 0
		if !inBounds {
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "simulation.yaml")+": settings.") {
				t.Fatalf("settings %v: Open = %v, want a refusal naming simulation.yaml and the key", set, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("settings %v: %v", set, err)
		}
		st := g.Initial()
		st.Board.Player(P1).Lines = int(max(0, lines))
		for range 3 {
			if st.Over() {
				break
			}
			st = turn(t, g, st, nil)
			if err := checkCounts(st.Board); err != nil {
				t.Fatalf("after turn %d: %v", st.Board.Turn, err)
			}
		}
	})
}
