package duel

import (
	"maps"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// Reseated returns a copy of g that plays from seed, its model seats asking
// client, with seats (p1, p2 -> model or bot; arena.Seats checks them)
// replacing the simulation's: one game of an arena. The model seats of
// models play with their own configuration: the templates and model
// parameters of their Game (a duel opened with their templates and
// settings), asking their client.
func (g *Game) Reseated(seed uint64, seats map[string]string, client *llm.Client, models map[string]arena.Model) runner.Stepper {
	c := *g
	c.Client = client
	c.Seed = seed
	c.Seats = maps.Clone(g.Seats)
	maps.Copy(c.Seats, seats)
	c.seated = map[string]*Game{}
	for p, m := range models {
		own := *m.Game.(*Game)
		own.Client = m.Client
		c.seated[p] = &own
	}
	return &c
}

// seat is the game whose client, model parameters and templates play
// seat's model: g, or the seat's own configuration in an arena.
func (g *Game) seat(seat string) *Game {
	if own, ok := g.seated[seat]; ok {
		return own
	}
	return g
}

// Winner is the winner of the finished duel in state s, "" for a draw or a
// duel not over.
func (g *Game) Winner(s any) string {
	if st := s.(*State); st.Result != "draw" {
		return st.Result
	}
	return ""
}

// Players are the duel's seats, in order.
func (g *Game) Players() []string { return []string{P1, P2} }

// Seat returns how player is seated: bot, model or person.
func (g *Game) Seat(player string) string { return g.Seats[player] }
