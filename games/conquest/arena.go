package conquest

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

// Reseated returns a copy of g that plays from seed, its model seats asking
// client, with seats (player -> model or bot) replacing the simulation's:
// one game of an arena. Every seat must end up a model or a bot.
func (g *Game) Reseated(seed uint64, seats map[string]string, client *llm.Client) (runner.Game, error) {
	c := *g
	c.Client = client
	c.Setup.Seed = seed
	c.Setup.Seats = maps.Clone(g.Setup.Seats)
	for p, seat := range seats {
		if !slices.Contains(g.Setup.Players, p) {
			return nil, fmt.Errorf("seat %s: not a player (players: %s)", p, strings.Join(g.Setup.Players, ", "))
		}
		if seat != SeatModel && seat != SeatBot {
			return nil, fmt.Errorf("seat %s: want model or bot, got %q", p, seat)
		}
		c.Setup.Seats[p] = seat
	}
	for _, p := range g.Setup.Players {
		if c.Setup.Seats[p] == SeatPerson {
			return nil, fmt.Errorf("seat %s is a person in simulation.yaml: give it model or bot", p)
		}
	}
	return &c, nil
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
