package conquest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// issue 21 item 3: a typo must not cost the whole turn (seed 000: a
// non-existent star is "Typo/confusion - don't penalize entire turn"). An
// order skipped for a reason of its own adds nothing to the over-commitment
// sum: only the orders that would execute are counted.
func TestTypoDoesNotCostTheWholeTurn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, orders string
		recorded     []string // what execute records
		fleets       int      // fleets launched from A
	}{
		{"a missing star", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"Z","ships":5}]`,
			[]string{"Order 1: A -> Z with 5 ships: Destination star Z does not exist"}, 1},
		{"its own star", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"A","ships":5}]`,
			[]string{"Order 1: A -> A with 5 ships: Cannot send fleet to same star"}, 1},
		{"an invalid count", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5.5}]`,
			[]string{"Order 1: A -> C with 5.5 ships: Ships must be a whole number, got 5.5"}, 1},
		{"a count too large", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":1e20}]`,
			[]string{"Order 1: A -> C with 1e20 ships: Ships must be at most 2147483647, got 1e20"}, 1},
		{"a junk element", `[{"from":"A","to":"B","ships":7},{"from":"A","ships":5}]`,
			[]string{`Order 1: Invalid order object {"from":"A","ships":5}: missing "to"`}, 1},
		{"the orders that would execute still over-commit", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"Z","ships":1},{"from":"A","to":"C","ships":5}]`,
			[]string{"Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]"}, 0},
		{"an order asking too much alone still counts", `[{"from":"A","to":"B","ships":11},{"from":"A","to":"C","ships":1}]`,
			[]string{"Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [11 to B, 1 to C]"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := orders(t, tt.orders)
			if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, tt.recorded) {
				t.Errorf("recorded:\n got %q\nwant %q", got, tt.recorded)
			}
			if got := len(s.Fleets); got != tt.fleets {
				t.Errorf("%d fleets %+v, want %d", got, s.Fleets, tt.fleets)
			}
			if tt.fleets == 1 && (s.Fleets[0] != Fleet{Owner: "p1", From: "A", To: "B", Ships: 7, Sent: 3, Arrives: 4}) {
				t.Errorf("fleet %+v, want A -> B with 7", s.Fleets[0])
			}
			over := slices.ContainsFunc(Check(board(), "p1", o), func(e string) bool { return strings.Contains(e, "Total ships") })
			if over != (tt.fleets == 0) {
				t.Errorf("Check reports over-commitment %v, execution rejected the set %v", over, tt.fleets == 0)
			}
		})
	}
	// The person's warning sums the same orders.
	if got := Warnings(board(), "p1", orders(t, `[{"from":"A","to":"B","ships":7},{"from":"A","to":"Z","ships":5}]`)); slices.ContainsFunc(got, func(w string) bool { return strings.HasPrefix(w, "Over-commitment") }) {
		t.Errorf("warnings %q count the typo toward over-commitment", got)
	}
}

// issue 21 item 4: propose_orders answers exactly as seed 000's example,
// each error "Order {index}: {reason}" (the stored record keeps "Order
// {index}: {from} -> {to} with {ships} ships: {reason}"), and what the model
// reads has no \u003e escapes.
func TestProposeOrdersAnswersAsTheSeedExample(t *testing.T) {
	t.Parallel()
	seedOrders := orderArgs(ord("A", "B", 7), ord("A", "C", 5), ord("A", "Z", 1))
	srv, r, _ := modelTable(t, openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("p", ToolPropose, seedOrders)),
		openaitest.ToolCalls(openaitest.Tool("g", ToolGetState, map[string]any{})),
		openaitest.ToolCalls(openaitest.Tool("s", ToolSubmit, orderArgs(ord("A", "Z", 1), ord("D", "B", 1)))),
		// Turn 2: the opening message and get_state carry the turn 1 error.
		openaitest.ToolCalls(openaitest.Tool("g2", ToolGetState, map[string]any{})),
		openaitest.ToolCalls(openaitest.Tool("s2", ToolSubmit, orderArgs())),
	), 0)
	if _, err := r.Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	want := `{"ok":false,"errors":["Order 0: Total ships from A (12) exceeds available (10)","Order 2: Destination star Z does not exist"]}`
	if got := toolResult(calls[1], "p"); got != want {
		t.Errorf("propose_orders answered\n%s\nwant\n%s", got, want)
	}
	s := r.State().(*State)
	if got := errorTexts(s.ErrorsOf("p1", 1)); !slices.Equal(got, []string{"Order 0: A -> Z with 1 ships: Destination star Z does not exist"}) {
		t.Errorf("stored record %q keeps the seed's stored format", got)
	}
	opening := calls[3].LastUserMessage()
	getState := toolResult(calls[4], "g2")
	for what, text := range map[string]string{"the opening message": opening, "get_state": getState} {
		if strings.Contains(text, `\u003e`) || !strings.Contains(text, "Order 0: A -> Z with 1 ships: Destination star Z does not exist") {
			t.Errorf("%s escapes -> or lacks the error:\n%s", what, text)
		}
	}
	// check-orders prints the same answer.
	if p := Propose(board(), "p1", orders(t, `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5},{"from":"A","to":"Z","ships":1}]`)); mustJSON(p) != want {
		t.Errorf("Propose = %s, want %s", mustJSON(p), want)
	}
}

// issue 21 item 5: a ship count too large for an int says so, not "must be
// a whole number"; a negative one, however large, is not positive.
func TestShipCountTooLargeForAnInt(t *testing.T) {
	t.Parallel()
	tests := []struct{ ships, reason string }{
		{`2147483648`, "Ships must be at most 2147483647, got 2147483648"},
		{`1e20`, "Ships must be at most 2147483647, got 1e20"},
		{`1e400`, "Ships must be at most 2147483647, got 1e400"},
		{`99999999999999999999999`, "Ships must be at most 2147483647, got 99999999999999999999999"},
		{`-1e20`, "Ships must be positive, got -1e20"},
		{`-2147483648`, "Ships must be positive, got -2147483648"},
		{`2147483648.5`, "Ships must be a whole number, got 2147483648.5"},
		{`2147483647`, "Not enough ships at A: have 10, need 2147483647"},
	}
	for _, tt := range tests {
		t.Run(tt.ships, func(t *testing.T) {
			t.Parallel()
			o := orders(t, `[{"from":"A","to":"B","ships":`+tt.ships+`}]`)
			if got, want := Check(board(), "p1", o), []string{"Order 0: " + tt.reason}; !slices.Equal(got, want) {
				t.Errorf("Check = %q, want %q", got, want)
			}
			// A person typing the count reads the same.
			person, err := ParseOrderText("SEND " + tt.ships + " FROM A TO B")
			if err != nil {
				t.Fatal(err)
			}
			if got, want := Check(board(), "p1", person), []string{"Order 0: " + tt.reason}; !slices.Equal(got, want) {
				t.Errorf("a person's count: Check = %q, want %q", got, want)
			}
		})
	}
}

// issue 21 item 8: an element of the orders array that is not an order
// object is an error of that order naming what was wrong, never "Order 0:
// -> with null ships"; the other orders still execute, and the record reads
// back as written.
func TestJunkOrderObject(t *testing.T) {
	t.Parallel()
	tests := []struct{ elem, reason string }{
		{`{"x": 1}`, `Invalid order object {"x":1}: missing "from", "to" and "ships"`},
		{`7`, `Invalid order object 7: want {"from": <star>, "to": <star>, "ships": <number>}`},
		{`null`, `Invalid order object null: want {"from": <star>, "to": <star>, "ships": <number>}`},
		{`"A to B"`, `Invalid order object "A to B": want {"from": <star>, "to": <star>, "ships": <number>}`},
		{`[ "A", "B", 3 ]`, `Invalid order object ["A","B",3]: want {"from": <star>, "to": <star>, "ships": <number>}`},
		{`{"from":"A","to":"B"}`, `Invalid order object {"from":"A","to":"B"}: missing "ships"`},
		{`{"from":"<A>","ships":2}`, `Invalid order object {"from":"\u003cA\u003e","ships":2}: missing "to"`},
		{`{"from":"","to":null,"ships":2}`, `Invalid order object {"from":"","to":null,"ships":2}: "from" and "to" are empty`},
		{`{"from":"A","to":" ","ships":2}`, `Invalid order object {"from":"A","to":" ","ships":2}: "to" is empty`},
	}
	for _, tt := range tests {
		t.Run(tt.elem, func(t *testing.T) {
			t.Parallel()
			o := orders(t, `[`+tt.elem+`,{"from":"D","to":"C","ships":2}]`)
			want := "Order 0: " + tt.reason
			if got := Check(board(), "p1", o); !slices.Equal(got, []string{want}) {
				t.Errorf("Check = %q, want [%q]", got, want)
			}
			s := next(t, board(), map[string][]Order{"p1": o})
			errs := s.ErrorsOf("p1", 4)
			if len(errs) != 1 || errs[0].Error != want || errs[0].Kind != KindInvalidOrder || errs[0].Index != 0 {
				t.Fatalf("recorded %+v, want %q", errs, want)
			}
			if strings.Contains(errs[0].Error, " -> ") || strings.Contains(errs[0].Error, "null ships") {
				t.Errorf("record %q reads as an order", errs[0].Error)
			}
			if f := fleetsOf(s, "p1"); len(f) != 1 || f[0].From != "D" {
				t.Errorf("fleets %+v, want the valid D -> C", f)
			}
			// The record, stored and read back (state.db, export), is the same.
			var back OrderError
			if err := json.Unmarshal([]byte(jsonOf(t, errs[0])), &back); err != nil || back.Order == nil || back.Order.String() != errs[0].Order.String() ||
				ownProblem(board(), "p1", *back.Order).reason != tt.reason {
				t.Errorf("record read back as %+v (%v)", back, err)
			}
		})
	}
}

// issue 21 item 8: an answer naming an unknown tool lists the tools once.
func TestUnknownToolListsToolsOnce(t *testing.T) {
	t.Parallel()
	srv, r, _ := modelTable(t, openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("a", "launch_missiles", map[string]any{})),
		openaitest.ToolCalls(openaitest.Tool("s", ToolSubmit, orderArgs())),
	), 0)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	want := `{"ok":false,"errors":["no tool named \"launch_missiles\" (tools: get_state, propose_orders, submit_orders)"]}`
	if got := toolResult(srv.Calls()[1], "a"); got != want {
		t.Errorf("unknown tool answered\n%s\nwant\n%s", got, want)
	}
}
