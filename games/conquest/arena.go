package conquest

import (
	"maps"
	"slices"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// Reseated returns a copy of g that plays from seed, its model seats asking
// client, with seats (player -> model or bot; arena.Seats checks them)
// replacing the simulation's: one game of an arena. The model seats of
// models play with their own configuration: the system prompt and model
// parameters of their Game (a conquest opened with their templates and
// settings), asking their client.
func (g *Game) Reseated(seed uint64, seats map[string]string, client *llm.Client, models map[string]arena.Model) runner.Stepper {
	c := *g
	c.Client = client
	c.Setup.Seed = seed
	c.Setup.Seats = maps.Clone(g.Setup.Seats)
	maps.Copy(c.Setup.Seats, seats)
	c.seated = map[string]*Game{}
	for p, m := range models {
		own := *m.Game.(*Game)
		own.Client = m.Client
		c.seated[p] = &own
	}
	return &c
}

// seat is the game whose client, model parameters and system prompt play
// player's model seat: g, or the seat's own configuration in an arena.
func (g *Game) seat(player string) *Game {
	if own, ok := g.seated[player]; ok {
		return own
	}
	return g
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
