package duel

import (
	"context"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// newGame opens a duel with these settings (seats default to two bots).
func newGame(t testing.TB, set map[string]any) *Game {
	t.Helper()
	if set == nil {
		set = map[string]any{}
	}
	if set["seats"] == nil {
		set["seats"] = map[string]any{"p1": "bot", "p2": "bot"}
	}
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(&world.Simulation{Dir: t.TempDir(), ID: "t", Kind: KindName, Settings: set}, pr)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func people(p1, p2 string) map[string]any { return map[string]any{"p1": p1, "p2": p2} }

// give puts a ship of def in play for player, built before turn 1.
func give(st *State, player, def string, health, charges int) *engine.Ship {
	st.Board.Seq++
	sh := &engine.Ship{ID: player + "-" + itoa(st.Board.Seq), Def: def, Owner: player, Health: health, Charges: charges}
	st.Board.Ships = append(st.Board.Ships, sh)
	return sh
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// chooser is a person's seat scripted by functions; nil ones build or
// fire nothing.
type chooser struct {
	build   func(BuildView) BuildChoice
	charges func(ChargeView) ChargeChoice
}

func (c chooser) Build(_ context.Context, v BuildView) (BuildChoice, error) {
	if c.build == nil {
		return BuildChoice{}, nil
	}
	return c.build(v), nil
}

func (c chooser) Charges(_ context.Context, v ChargeView) (ChargeChoice, error) {
	if c.charges == nil {
		return ChargeChoice{}, nil
	}
	return c.charges(v), nil
}

// turn plays one turn of g from st with the people's choosers, outside the
// runner.
func turn(t testing.TB, g *Game, st *State, ppl Seats) *State {
	t.Helper()
	next, err := g.play(context.Background(), st, &seats{g: g, people: ppl})
	if err != nil {
		t.Fatal(err)
	}
	return next
}
