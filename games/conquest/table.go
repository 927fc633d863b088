package conquest

import (
	"context"
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
)

// Table is a conquest at the terminal: each turn, every person's seat
// types its orders one per line, read whole by the shared command parser,
// with the seed's warnings before they are submitted; the turn's log is
// then shown to the table. color paints the error display.
func (g *Game) Table(color bool) *session.Table {
	return &session.Table{
		Players: g.Setup.Players,
		People:  session.SeatsOf(g.Setup.Seats, SeatPerson),
		Intro: func(people []string) string {
			return fmt.Sprintf("You play %s. Each turn, type your orders one per line (SEND 7 FROM A TO B),\nthen an empty line to submit them; /pass submits none, /map shows the map, /quit leaves.\n", strings.Join(people, " and "))
		},
		Over: func(state any) (bool, string) {
			st := state.(*State)
			if !st.Over() {
				return false, ""
			}
			return true, Summary(st, color)
		},
		Move: func(ctx context.Context, state any, people []string, p session.Person) (any, error) {
			return askOrders(ctx, state.(*State), people, p, color)
		},
		Told: func(_ context.Context, state any) ([]string, error) { return state.(*State).Log, nil },
	}
}

// askOrders asks each person's seat for its orders of the turn after st.
func askOrders(ctx context.Context, st *State, people []string, p session.Person, color bool) (any, error) {
	orders := map[string][]Order{}
	for _, seat := range people {
		v, err := p.Ask(ctx, ordersQuestion(st, seat, color))
		if err != nil {
			return nil, err
		}
		orders[seat] = v.([]Order)
	}
	return Move{Orders: orders}, nil
}

// ordersQuestion asks seat for its orders: lines until an empty one, then
// the seed's warnings and "Submit anyway? (y/n):". A list with an
// unreadable line is asked again.
func ordersQuestion(st *State, seat string, color bool) session.Question {
	return session.Question{
		Seat:   seat,
		Screen: ErrorBlock(st, seat, color) + fmt.Sprintf("\n%s\nTurn %d: your orders, %s?\n", MapText(st), st.Turn+1, seat),
		Prompt: "order> ",
		Lines:  true,
		Shortcuts: []session.Shortcut{
			{Line: "/pass", Answer: []Order{}},
			{Line: "/map", Show: MapText(st)},
		},
		Read: func(text string) (any, string) {
			orders, err := ParseOrderText(text)
			if err != nil {
				return nil, fmt.Sprintf("Not read: %v. Type the turn's orders again.", err)
			}
			if len(orders) == 0 {
				return nil, "No orders typed: /pass submits none."
			}
			return orders, ""
		},
		Warnings: func(v any) []string { return Warnings(st, seat, v.([]Order)) },
		Again:    "Type the turn's orders again.",
	}
}

// Chat is nil: a conquest is played at a table, not in a chat.
func (g *Game) Chat() session.Chat { return nil }
