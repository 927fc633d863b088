package report_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/report"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// TestBuildGameEnding: a game's report opens with how it ended: the
// result, the turns played, each player's holdings at the end and their
// invalid orders; conquest adds each player's ships and stars over the
// turns, the duel the last thing its final turn did. A game not over says
// where it stands, with no winner. Bots make no model calls: the figures
// lead with what the rules refused and say the calls were none, last.
func TestBuildGameEnding(t *testing.T) {
	for _, tc := range []struct {
		demo       string
		turns      int
		over       bool
		holds, bad string
	}{
		{"conquest-demo", 40, true, " stars, ", "order errors"},
		{"conquest-demo", 3, false, " stars, ", "order errors"},
		{"duel-demo", 30, true, "health ", "refused choices"},
	} {
		t.Run(fmt.Sprint(tc.demo, tc.turns), func(t *testing.T) {
			r, err := report.Build(context.Background(), open(t, gameRun(t, tc.demo, tc.turns)))
			if err != nil {
				t.Fatal(err)
			}
			e := r.Ending
			if e == nil || e.Over != tc.over || e.Turns != r.LastTick || len(e.Players) != 2 {
				t.Fatalf("ending %+v of a game of %d turns, want over %v", e, r.LastTick, tc.over)
			}
			last := r.Turns[len(r.Turns)-1].Board.Fields
			winners := 0
			for i, p := range e.Players {
				if p.Winner {
					winners++
				}
				if p.Player != r.Players[i].Player || !strings.Contains(p.Holds, tc.holds) || p.InvalidNoun != tc.bad ||
					p.Invalid != len(r.Players[i].Errors) || !boardSays(last, p.Player, p.Holds, tc.demo) {
					t.Errorf("player %+v; the last board says %v; errors %d", p, last, len(r.Players[i].Errors))
				}
			}
			if tc.over != (winners == 1 || strings.Contains(e.Result, "draw")) || !tc.over && (winners != 0 || !strings.HasPrefix(e.Result, "not over: played to turn 3 of")) {
				t.Errorf("result %q with %d winners", e.Result, winners)
			}
			if f := r.Figures; f[len(f)-1] != (runner.Field{Key: "model calls", Value: "none"}) || tc.demo == "conquest-demo" && f[0].Key != "order errors" {
				t.Errorf("figures %v: want what the rules refused first, the calls none and last", f)
			}
			switch tc.demo {
			case "conquest-demo":
				if len(r.Trends) != 2 || r.Trends[0].Title != "Ships per player" || r.Trends[0].Axis != "turn" || len(r.Trends[0].Ticks) != r.LastTick {
					t.Fatalf("trends %+v", r.Trends)
				}
				for i, p := range e.Players {
					ships := r.Trends[0].Series[i].Values[r.LastTick-1]
					if !strings.Contains(p.Holds, fmt.Sprintf(", %d ship", int(ships))) {
						t.Errorf("%s holds %q at the end; the ships chart ends at %v", p.Player, p.Holds, ships)
					}
				}
			case "duel-demo":
				if !strings.HasPrefix(e.Final, fmt.Sprintf("The last of turn %d: ", r.LastTick)) || !strings.Contains(e.Result, fmt.Sprintf("at turn %d", r.LastTick)) || len(r.Trends) != 0 {
					t.Errorf("result %q, final %q, trends %d", e.Result, e.Final, len(r.Trends))
				}
				// The last line is the blow that ended it: the fallen
				// player's health going to 0.
				for _, p := range e.Players {
					if strings.HasPrefix(p.Holds, "health 0/") && !strings.Contains(e.Final, p.Player+"'s health") {
						t.Errorf("%s fell; the final line %q does not tell it", p.Player, e.Final)
					}
				}
			}
		})
	}
}

// boardSays reports whether the last board's field of player says what
// the ending says the player holds: conquest's stars and ships as they
// are, the duel's health.
func boardSays(fields []runner.Field, player, holds, demo string) bool {
	if demo == "duel-demo" {
		holds, _, _ = strings.Cut(holds, ", ")
	}
	for _, f := range fields {
		if f.Key == player {
			return strings.Contains(f.Value, holds)
		}
	}
	return false
}

// TestTickRuns: each tick of a narrative is marked with the run that
// committed it and the template set it rendered: the defaults, then a
// simulation's own override (by its folder, prompts/), then an eval
// variant's folder laid over it, by the variant's name.
func TestTickRuns(t *testing.T) {
	dir := worldtest.Copy(t, "../simulations/demo-sim")
	srv := openaitest.New(t, storyteller())
	set := session.Settings{Depth: 1, Model: "test-model", Override: session.PhaseOverride{MaxTokens: 500}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.MaxAttempts, cfg.RepairAttempts, cfg.BackoffBase = srv.URL, 1, 0, time.Millisecond
		return cfg, nil
	}}
	run(t, dir, set, 2)
	override(t, filepath.Join(dir, "prompts"), "phase1_intention_system.md")
	run(t, dir, set, 1)
	variant := filepath.Join(t.TempDir(), "terse")
	override(t, variant, "phase2a_resolution_system.md")
	set.Templates = []string{variant}
	run(t, dir, set, 1)

	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]string{
		1: "run 1 · default templates",
		2: "run 1 · default templates",
		3: "run 2 · templates: prompts/ (phase1_intention_system.md)",
		4: "run 3 · templates: prompts/ (phase1_intention_system.md); terse/ (phase2a_resolution_system.md)",
	}
	for tick, w := range want {
		if got := r.TickRuns[tick]; got != w {
			t.Errorf("tick %d: %q, want %q", tick, got, w)
		}
	}
	page := render(t, r)
	if !strings.Contains(page, `<h3>Tick 4<span class="run">`+want[4]+`</span></h3>`) {
		t.Errorf("the page does not mark tick 4 with its run")
	}
}

// override writes the default template name into folder with a line
// added: a template set of its own.
func override(t *testing.T, folder, name string) {
	t.Helper()
	text, err := prompts.DefaultText(name)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folder, name), append(text, "\nBe brief.\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
}
