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
			return fmt.Sprintf("You play %s. Each turn, type your orders one per line (SEND 7 FROM A TO B), then an empty line to submit them; /list shows the orders typed, /drop N removes order N, /pass submits none, /map shows the map, /help shows how orders work, /quit leaves.\n", strings.Join(people, " and "))
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
// the seed's warnings and "Submit anyway? (y/n):". The screen is headed by
// the turn the orders are for, with the map and the travel times from the
// seat's stars. Each line is read as it is typed: an order is answered
// with its travel time, a line that is not one is said and dropped at
// once, and /help, /map and /pass act at once.
func ordersQuestion(st *State, seat string, color bool) session.Question {
	turn := st.Turn + 1
	board := fmt.Sprintf("players %s · . = neutral\n%s", legend(st), mapGrid(st))
	return session.Question{
		Seat: seat,
		Screen: ErrorBlock(st, seat, color) + fmt.Sprintf("\n==== Turn %d of %d · %s's orders ====\n%s\n%s\nTurn %d: your orders, %s? (/help shows how)\n",
			turn, st.MaxTurns, seat, board, TravelTable(st, seat), turn, seat),
		Prompt: "order> ",
		Lines:  true,
		Shortcuts: []session.Shortcut{
			{Line: "/pass", Answer: []Order{}},
			{Line: "/map", Show: fmt.Sprintf("Turn %d of %d, before your orders · %s\n%s", turn, st.MaxTurns, board, TravelTable(st, seat))},
			{Line: "/help", Show: helpText(turn)},
		},
		Line: func(n int, line string) (string, bool) { return orderNote(st, seat, turn, n, line) },
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
		Again:    "Not submitted: edit your orders.",
	}
}

// commandList names the commands of the order prompt.
const commandList = "/help, /map, /list, /drop N, /pass and /quit"

// playHelp is conquest's part of `arbiter play --help`.
const playHelp = `  Each turn you see the map, the travel times from your stars and the errors of
  your last turn; you type your orders, one a line, then an empty line:
    order> SEND 4 FROM C TO B
      C -> B: 3 turns on the way, arrives in turn 4
    order> SEND four FROM C TO G
      Order 2: Ships must be a whole number, got "four": it will be
      skipped (/drop 2 removes it)
    order>
  An order with a problem of its own is flagged as it is typed. The rules'
  warnings (more ships than the star has, a star that does not exist...) come
  before "Submit anyway? (y/n):"; n goes back to the orders typed: /list shows
  them numbered from 1, /drop N removes one, a line typed adds one, an empty
  line submits again. /pass submits no orders, /map shows the map again, /help
  how orders work, /quit leaves.
`

// helpText is /help at the order prompt.
func helpText(turn int) string {
	return fmt.Sprintf(`Orders of turn %d, one a line: SEND <ships> FROM <star> TO <star>, e.g. SEND 4 FROM C TO B.
A fleet takes the travel time of the table (distance / %v, rounded up) and lands in the movement of turn %d + that time; ships left at a star defend it and each owned star makes its production in ships every turn. An empty line submits the orders typed; the rules' warnings come first, and answering n to them goes back to the orders for editing.
  /list    the orders typed so far, numbered from 1
  /drop N  remove order N
  /pass    submit no orders this turn
  /map     the map and the travel times again
  /help    this text
  /quit    leave the game (the turns played are kept)
`, turn, Speed, turn)
}

// orderNote reads line n of a person's orders as it is typed: an order is
// kept and answered with its travel time and the turn it lands, or, when
// it has a problem of its own (an unknown star, a count that is not a
// positive whole number, the same star twice), flagged at once as "Order
// n: ..." (it is still warned about before submission); anything else is
// said and dropped, to be typed again.
func orderNote(st *State, seat string, turn, n int, line string) (string, bool) {
	if strings.HasPrefix(line, "/") {
		return fmt.Sprintf("%s is not a command: the commands are %s.", strings.Fields(line)[0], commandList), false
	}
	orders, err := ParseOrderText(strings.Repeat("\n", n-1) + line)
	if err != nil {
		return fmt.Sprintf("Not read: %v. Type that order again.", err), false
	}
	var notes []string
	for _, o := range orders {
		notes = append(notes, typedNote(st, seat, turn, n, o))
	}
	return strings.Join(notes, "\n"), true
}

// typedNote is what order n, just typed, is told: its problem, or when it
// lands.
func typedNote(st *State, seat string, turn, n int, o Order) string {
	p := ownProblem(st, seat, o)
	switch p.kind {
	case "":
		from, to := st.orderStar(o.From), st.orderStar(o.To)
		t := travelTurns(from, to)
		return fmt.Sprintf("  %s -> %s: %s on the way, arrives in turn %d", from.ID, to.ID, plural(t, "turn"), turn+t)
	case KindNotOwner:
		// Whose the star is may change before the orders execute.
		return fmt.Sprintf("  Order %d: %s is not yours now: the order is skipped unless it is when the orders execute", n, st.orderStar(o.From).ID)
	}
	return fmt.Sprintf("  Order %d: %s: it will be skipped (/drop %d removes it)", n, p.reason, n)
}

// TravelTable is how many turns a fleet takes from each of player's stars
// to every other star, as a table.
func TravelTable(st *State, player string) string {
	var b strings.Builder
	b.WriteString("Turns a fleet takes from your stars:\n      ")
	for _, to := range st.Stars {
		fmt.Fprintf(&b, "%3s", to.ID)
	}
	b.WriteString("\n")
	mine := 0
	for i := range st.Stars {
		from := &st.Stars[i]
		if from.Owner != player {
			continue
		}
		mine++
		fmt.Fprintf(&b, "  %-4s", from.ID)
		for j := range st.Stars {
			if to := &st.Stars[j]; to == from {
				b.WriteString("  -")
			} else {
				fmt.Fprintf(&b, "%3d", travelTurns(from, to))
			}
		}
		b.WriteString("\n")
	}
	if mine == 0 {
		return "You hold no star: you have no orders to give.\n"
	}
	return b.String()
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
