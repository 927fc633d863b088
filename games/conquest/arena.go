package conquest

import (
	"maps"
	"slices"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// Reseated returns a copy of g that plays from seed, its model seats asking
// client, with seats (player -> model or bot; arena.Seats checks them)
// replacing the simulation's: one game of an arena.
func (g *Game) Reseated(seed uint64, seats map[string]string, client *llm.Client) runner.Stepper {
	c := *g
	c.Client = client
	c.Setup.Seed = seed
	c.Setup.Seats = maps.Clone(g.Setup.Seats)
	maps.Copy(c.Setup.Seats, seats)
	return &c
}

// Winner is the winner of the finished game in state s, "" for a draw or
// a game not over.
func (g *Game) Winner(s any) string {
	if st := s.(*State); st.Result != nil {
		return st.Result.Winner
	}
	return ""
}

// Players are the game's player ids, in order.
func (g *Game) Players() []string { return slices.Clone(g.Setup.Players) }
