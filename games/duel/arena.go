package duel

import (
	"fmt"
	"maps"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// Reseated returns a copy of g that plays from seed, its model seats asking
// client, with seats (player -> model or bot) replacing the simulation's:
// one game of an arena. Every seat must end up a model or a bot.
func (g *Game) Reseated(seed uint64, seats map[string]string, client *llm.Client) (runner.Game, error) {
	c := *g
	c.Client = client
	c.Seed = seed
	c.Seats = maps.Clone(g.Seats)
	for p, seat := range seats {
		if p != P1 && p != P2 {
			return nil, fmt.Errorf("seat %s: not a player (players: %s, %s)", p, P1, P2)
		}
		if seat != SeatModel && seat != SeatBot {
			return nil, fmt.Errorf("seat %s: want model or bot, got %q", p, seat)
		}
		c.Seats[p] = seat
	}
	for _, p := range []string{P1, P2} {
		if c.Seats[p] == SeatPerson {
			return nil, fmt.Errorf("seat %s is a person in simulation.yaml: give it model or bot", p)
		}
	}
	return &c, nil
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
