package conquest

import (
	"slices"
	"strings"
	"testing"
)

// The unit cases of seed 000 §6.1, one test each, named after them.

// 6.1.1 Over-commitment rejection: multiple orders exceed available ships →
// reject all.
func TestOverCommitmentRejectsAll(t *testing.T) {
	t.Parallel()
	const seedExample = `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`
	tests := []struct {
		name     string
		orders   string
		recorded string   // the one whole-set error execute records
		check    []string // what Check (propose_orders) says
	}{
		{"seed example", seedExample,
			"Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]",
			[]string{"Order 0: Total ships from A (12) exceeds available (10)"}},
		{"by one ship, a valid order from another star rejected too",
			`[{"from":"D","to":"B","ships":2},{"from":"A","to":"B","ships":6},{"from":"A","to":"C","ships":5}]`,
			"Invalid orders: Total ships from A (11) exceeds available (10). Orders from A: [6 to B, 5 to C]",
			[]string{"Order 1: Total ships from A (11) exceeds available (10)"}},
		{"two stars over-committed",
			`[{"from":"D","to":"B","ships":3},{"from":"A","to":"B","ships":9},{"from":"D","to":"C","ships":3},{"from":"A","to":"C","ships":2}]`,
			"Invalid orders: Total ships from D (6) exceeds available (5). Orders from D: [3 to B, 3 to C]; Total ships from A (11) exceeds available (10). Orders from A: [9 to B, 2 to C]",
			[]string{"Order 0: Total ships from D (6) exceeds available (5)", "Order 1: Total ships from A (11) exceeds available (10)"}},
		{"an invalid count adds nothing to the total",
			`[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5},{"from":"A","to":"C","ships":-20}]`,
			"Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]",
			[]string{"Order 0: Total ships from A (12) exceeds available (10)", "Order 2: Ships must be positive, got -20"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := orders(t, tt.orders)
			if got := Check(s, "p1", o); !slices.Equal(got, tt.check) {
				t.Errorf("Check:\n got %q\nwant %q", got, tt.check)
			}
			if p := Propose(s, "p1", o); p.OK || !slices.Equal(p.Errors, tt.check) {
				t.Errorf("Propose = %+v, want ok false with %q", p, tt.check)
			}
			errs := execute(s, "p1", o)
			if len(errs) != 1 || !errs[0].All() || errs[0].Error != tt.recorded || errs[0].Reason != tt.recorded || errs[0].Order != nil {
				t.Fatalf("execute recorded %+v, want one whole-set error %q", errs, tt.recorded)
			}
			if len(s.Fleets) != 0 || s.Star("A").Ships["p1"] != 10 || s.Star("D").Ships["p1"] != 5 {
				t.Errorf("a rejected set moved ships: fleets %+v, A %d, D %d", s.Fleets, s.Star("A").Ships["p1"], s.Star("D").Ships["p1"])
			}
		})
	}
}

// A single order asking for more ships than the star has is not
// over-commitment: it is skipped alone, as the seed's display example shows
// ("Not enough ships at A: have 5, need 7"), and the others execute.
func TestInsufficientShipsSkipsOneOrder(t *testing.T) {
	t.Parallel()
	s := board()
	o := orders(t, `[{"from":"A","to":"B","ships":11},{"from":"D","to":"B","ships":5}]`)
	want := "Order 0: A -> B with 11 ships: Not enough ships at A: have 10, need 11"
	if got, want := Check(s, "p1", o), "Order 0: Not enough ships at A: have 10, need 11"; !slices.Equal(got, []string{want}) {
		t.Errorf("Check = %q, want [%q]", got, want)
	}
	errs := execute(s, "p1", o)
	if got := errorTexts(errs); !slices.Equal(got, []string{want}) {
		t.Fatalf("execute = %q, want [%q]", got, want)
	}
	if errs[0].Reason != "Not enough ships at A: have 10, need 11" || errs[0].Index != 0 {
		t.Errorf("record %+v", errs[0])
	}
	if len(s.Fleets) != 1 || s.Fleets[0].From != "D" || s.Fleets[0].Ships != 5 || s.Star("D").Ships["p1"] != 0 {
		t.Errorf("fleets %+v, want D's 5 ships sent", s.Fleets)
	}
}

// 6.1.2 Partial execution: a mix of valid and invalid orders → the valid
// execute, the invalid are skipped and recorded.
func TestPartialExecution(t *testing.T) {
	t.Parallel()
	s := board()
	o := orders(t, `[{"from":"A","to":"B","ships":3},{"from":"A","to":"Z","ships":2},{"from":"D","to":"D","ships":1},{"from":"D","to":"C","ships":2}]`)
	errs := execute(s, "p1", o)
	want := []string{
		"Order 1: A -> Z with 2 ships: Destination star Z does not exist",
		"Order 2: D -> D with 1 ships: Cannot send fleet to same star",
	}
	if got := errorTexts(errs); !slices.Equal(got, want) {
		t.Fatalf("errors:\n got %q\nwant %q", got, want)
	}
	wantFleets := []Fleet{
		{Owner: "p1", From: "A", To: "B", Ships: 3, Sent: 3, Arrives: 4},
		{Owner: "p1", From: "D", To: "C", Ships: 2, Sent: 3, Arrives: 4},
	}
	if !slices.Equal(s.Fleets, wantFleets) {
		t.Errorf("fleets:\n got %+v\nwant %+v", s.Fleets, wantFleets)
	}
	if a, d := s.Star("A").Ships["p1"], s.Star("D").Ships["p1"]; a != 7 || d != 3 {
		t.Errorf("ships left A %d D %d, want 7 and 3", a, d)
	}
}

// 6.1.3 Non-existent star → skip the order.
func TestNonExistentStar(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, orders, check, want string }{
		{"origin", `[{"from":"Q","to":"B","ships":3}]`, "Order 0: Origin star Q does not exist", "Order 0: Q -> B with 3 ships: Origin star Q does not exist"},
		{"destination", `[{"from":"A","to":"Z","ships":3}]`, "Order 0: Destination star Z does not exist", "Order 0: A -> Z with 3 ships: Destination star Z does not exist"},
		{"ids as written", `[{"from":"a","to":"zz","ships":3}]`, "Order 0: Destination star zz does not exist", "Order 0: a -> zz with 3 ships: Destination star zz does not exist"},
		{"origin null", `[{"from":null,"to":"B","ships":3}]`, `Order 0: Invalid order object {"from":null,"to":"B","ships":3}: "from" is empty`,
			`Order 0: Invalid order object {"from":null,"to":"B","ships":3}: "from" is empty`},
		{"a number for a star", `[{"from":"A","to":7,"ships":3}]`, "Order 0: Destination star 7 does not exist", "Order 0: A -> 7 with 3 ships: Destination star 7 does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := append(orders(t, tt.orders), Order{From: "D", To: "B", Ships: N(1)})
			if got := Check(s, "p1", o); !slices.Equal(got, []string{tt.check}) {
				t.Errorf("Check = %q, want [%q]", got, tt.check)
			}
			if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("execute = %q, want [%q]", got, tt.want)
			}
			if len(s.Fleets) != 1 || s.Fleets[0].From != "D" {
				t.Errorf("fleets %+v, want only the valid D -> B", s.Fleets)
			}
		})
	}
}

// Seed 000 §4.1's messages name the star as the order wrote it:
// "to": "Zz" gives "Destination star Zz does not exist", and a star id in
// another case names the map's star ("a" is A) but is echoed as "a" in the
// order's error; the fleet it launches and the over-commitment sum use the
// map's id.
func TestDestinationStarDoesNotExistAsWritten(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, orders, check, want string }{
		{"destination", `[{"from":"A","to":"Zz","ships":3}]`, "Order 0: Destination star Zz does not exist",
			"Order 0: A -> Zz with 3 ships: Destination star Zz does not exist"},
		{"origin", `[{"from":"qq","to":"B","ships":3}]`, "Order 0: Origin star qq does not exist",
			"Order 0: qq -> B with 3 ships: Origin star qq does not exist"},
		{"not controlled", `[{"from":"f","to":"B","ships":3}]`, "Order 0: Player p1 does not control origin star f",
			"Order 0: f -> B with 3 ships: Player p1 does not control origin star f"},
		{"not enough ships", `[{"from":"a","to":"b","ships":17}]`, "Order 0: Not enough ships at a: have 10, need 17",
			"Order 0: a -> b with 17 ships: Not enough ships at a: have 10, need 17"},
		{"same star in another case", `[{"from":"a","to":"A","ships":1}]`, "Order 0: Cannot send fleet to same star",
			"Order 0: a -> A with 1 ships: Cannot send fleet to same star"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := append(orders(t, tt.orders), Order{From: "d", To: "c", Ships: N(1)})
			if got := Check(s, "p1", o); !slices.Equal(got, []string{tt.check}) {
				t.Errorf("Check = %q, want [%q]", got, tt.check)
			}
			if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("execute = %q, want [%q]", got, tt.want)
			}
			if len(s.Fleets) != 1 || s.Fleets[0].From != "D" || s.Fleets[0].To != "C" || s.Star("D").Ships["p1"] != 4 {
				t.Errorf("fleets %+v, want the valid d -> c launched as D -> C", s.Fleets)
			}
		})
	}
	s := board()
	o := orders(t, `[{"from":"a","to":"b","ships":7},{"from":"A","to":"c","ships":5}]`)
	want := "Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to b, 5 to c]"
	if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, []string{want}) {
		t.Errorf("over-commitment written in two cases: %q, want [%q]", got, want)
	}
}

// 6.1.4 Lost ownership: the star was the player's when the orders were
// planned and is not when they execute → skip the order. Ownership is
// checked before ships are counted, so orders from a star the player does
// not control never make an over-commitment.
func TestLostOwnership(t *testing.T) {
	t.Parallel()
	t.Run("owner changed between check and execution", func(t *testing.T) {
		t.Parallel()
		s := board()
		o := orders(t, `[{"from":"D","to":"B","ships":3},{"from":"A","to":"B","ships":2}]`)
		if errs := Check(s, "p1", o); len(errs) != 0 {
			t.Fatalf("planned orders invalid: %q", errs)
		}
		d := s.Star("D")
		d.Owner, d.Ships = "p2", map[string]int{"p2": 1}
		want := "Order 0: D -> B with 3 ships: Player p1 does not control origin star D"
		if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, []string{want}) {
			t.Fatalf("execute = %q, want [%q]", got, want)
		}
		if len(s.Fleets) != 1 || s.Fleets[0].From != "A" {
			t.Errorf("fleets %+v, want A -> B only", s.Fleets)
		}
	})
	t.Run("orders from a star not owned do not count toward over-commitment", func(t *testing.T) {
		t.Parallel()
		s := board()
		// F is p2's with 6 ships: 4 + 4 would over-commit it, were it p1's.
		o := orders(t, `[{"from":"F","to":"G","ships":4},{"from":"F","to":"B","ships":4},{"from":"A","to":"B","ships":3}]`)
		want := []string{
			"Order 0: F -> G with 4 ships: Player p1 does not control origin star F",
			"Order 1: F -> B with 4 ships: Player p1 does not control origin star F",
		}
		check := []string{"Order 0: Player p1 does not control origin star F", "Order 1: Player p1 does not control origin star F"}
		if got := Check(s, "p1", o); !slices.Equal(got, check) {
			t.Errorf("Check:\n got %q\nwant %q", got, check)
		}
		if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, want) {
			t.Errorf("execute:\n got %q\nwant %q", got, want)
		}
		if len(s.Fleets) != 1 || s.Fleets[0].From != "A" || s.Star("F").Ships["p2"] != 6 {
			t.Errorf("fleets %+v, F %v", s.Fleets, s.Star("F").Ships)
		}
	})
	t.Run("neutral star", func(t *testing.T) {
		t.Parallel()
		s := board()
		want := "Order 0: C -> B with 1 ships: Player p1 does not control origin star C"
		if got := errorTexts(execute(s, "p1", orders(t, `[{"from":"C","to":"B","ships":1}]`))); !slices.Equal(got, []string{want}) {
			t.Errorf("execute = %q, want [%q]", got, want)
		}
	})
}

// 6.1.5 Zero ships → skip the order.
func TestZeroShips(t *testing.T) {
	t.Parallel()
	skipsAlone(t, `{"from":"A","to":"B","ships":0}`, "A -> B with 0 ships", "Ships must be positive, got 0")
}

// 6.1.6 Same origin and destination → skip the order.
func TestSameOriginDestination(t *testing.T) {
	t.Parallel()
	skipsAlone(t, `{"from":"A","to":"A","ships":3}`, "A -> A with 3 ships", "Cannot send fleet to same star")
}

// 6.1.7 Negative ships → skip the order.
func TestNegativeShips(t *testing.T) {
	t.Parallel()
	skipsAlone(t, `{"from":"A","to":"B","ships":-3}`, "A -> B with -3 ships", "Ships must be positive, got -3")
}

// skipsAlone checks that order (as order 0, followed by a valid D -> C) is
// skipped for reason while the valid order executes: propose_orders says
// "Order 0: {reason}", the record "Order 0: {shown}: {reason}".
func skipsAlone(t *testing.T, order, shown, reason string) {
	t.Helper()
	s := board()
	o := orders(t, "["+order+`,{"from":"D","to":"C","ships":2}]`)
	if got, want := Check(s, "p1", o), "Order 0: "+reason; !slices.Equal(got, []string{want}) {
		t.Errorf("Check = %q, want [%q]", got, want)
	}
	want := "Order 0: " + shown + ": " + reason
	errs := execute(s, "p1", o)
	if got := errorTexts(errs); !slices.Equal(got, []string{want}) {
		t.Fatalf("execute = %q, want [%q]", got, want)
	}
	if errs[0].All() || errs[0].Order == nil || errs[0].Order.From != o[0].From {
		t.Errorf("record %+v, want order 0 itself", errs[0])
	}
	if len(s.Fleets) != 1 || s.Fleets[0] != (Fleet{Owner: "p1", From: "D", To: "C", Ships: 2, Sent: 3, Arrives: 4}) {
		t.Errorf("fleets %+v, want the valid D -> C only", s.Fleets)
	}
	if s.Star("A").Ships["p1"] != 10 {
		t.Errorf("A has %d ships, want 10", s.Star("A").Ships["p1"])
	}
}

// 6.1.8 Empty order set → allowed: the player passes the turn.
func TestEmptyOrderSetPasses(t *testing.T) {
	t.Parallel()
	for _, js := range []string{`[]`, ` [ ] `} {
		t.Run(js, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := orders(t, js)
			if errs := Check(s, "p1", o); len(errs) != 0 {
				t.Errorf("Check = %q", errs)
			}
			if got := jsonOf(t, Propose(s, "p1", o)); got != `{"ok":true}` {
				t.Errorf("Propose = %s, want {\"ok\":true}", got)
			}
			next := s.clone()
			next.Turn = 4
			if errs := next.resolve(map[string][]Order{"p1": o}); len(errs) != 0 {
				t.Errorf("resolve recorded %+v", errs)
			}
			if len(next.Fleets) != 0 || next.Star("A").Ships["p1"] != 14 || next.Over() {
				t.Errorf("after a pass: fleets %+v, A %d (want 10 + production 4), result %v", next.Fleets, next.Star("A").Ships["p1"], next.Result)
			}
		})
	}
	if _, err := ParseOrders([]byte("  ")); err == nil {
		t.Error("ParseOrders of nothing: no error, want one saying [] passes")
	}
}

// 6.1.9 Error logging: every error is recorded in the state's order errors
// with its turn, player and order, as
// "Order {index}: {from} -> {to} with {ships} ships: {reason}".
func TestErrorLogging(t *testing.T) {
	t.Parallel()
	s := board()
	next := s.clone()
	next.Turn = 4
	errs := next.resolve(map[string][]Order{
		"p1": orders(t, `[{"from":"A","to":"B","ships":3},{"from":"A","to":"Q","ships":2}]`),
		"p2": orders(t, `[{"from":"F","to":"G","ships":4},{"from":"F","to":"B","ships":4}]`),
	})
	want := []OrderError{
		{Turn: 4, Player: "p1", Index: 1, Order: &Order{From: "A", To: "Q", Ships: N(2)}, Kind: KindUnknownDest, Reason: "Destination star Q does not exist",
			Error: "Order 1: A -> Q with 2 ships: Destination star Q does not exist", Suggestion: "Check the star id: the stars are A, B, C, D, F, G"},
		{Turn: 4, Player: "p2", Index: -1, Kind: KindOverCommitment, Reason: "Invalid orders: Total ships from F (8) exceeds available (6). Orders from F: [4 to G, 4 to B]",
			Error:      "Invalid orders: Total ships from F (8) exceeds available (6). Orders from F: [4 to G, 4 to B]",
			Suggestion: "Order at most 6 ships from F in total: over-commitment rejects every order of the turn"},
	}
	if jsonOf(t, errs) != jsonOf(t, want) || jsonOf(t, next.Errors) != jsonOf(t, want) {
		t.Fatalf("recorded:\n%s\nstate:\n%s\nwant:\n%s", jsonOf(t, errs), jsonOf(t, next.Errors), jsonOf(t, want))
	}
	if got := next.ErrorsOf("p1", 4); len(got) != 1 || got[0].Index != 1 {
		t.Errorf("ErrorsOf(p1, 4) = %+v", got)
	}
	if got := next.ErrorsOf("p1", 3); len(got) != 0 {
		t.Errorf("ErrorsOf(p1, 3) = %+v, want none", got)
	}
	// The log is for people: its orders count from 1, the records' from 0.
	for _, line := range []string{"Order 2: A -> Q with 2 ships: Destination star Q does not exist", want[1].Error, "Order 1 of p1 executed: 3 ships A -> B, arriving turn 5"} {
		if !slices.Contains(next.Log, line) {
			t.Errorf("turn log lacks %q: %q", line, next.Log)
		}
	}
	sc := next.Scores()
	if sc[0].Errors != 1 || sc[1].Errors != 1 {
		t.Errorf("scores %+v, want one error each", sc)
	}
	if len(s.Errors) != 0 {
		t.Errorf("resolve changed the state it was cloned from: %+v", s.Errors)
	}
}

// 6.1.10 No crashes: every malformed order is an error of that order (a
// ship count of the wrong type included), never a panic, and the other
// orders still execute.
func TestNoCrashes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, ships string
		reason      string // the problem of order 0; "" when it is valid
	}{
		{"string number", `"7"`, `Ships must be a whole number, got "7"`},
		{"fraction", `7.5`, `Ships must be a whole number, got 7.5`},
		{"null", `null`, `Ships must be a whole number, got null`},
		{"word", `"seven"`, `Ships must be a whole number, got "seven"`},
		{"bool", `true`, `Ships must be a whole number, got true`},
		{"object", `{"n":7}`, `Ships must be a whole number, got {"n":7}`},
		{"array", `[7]`, `Ships must be a whole number, got [7]`},
		{"huge", `1e400`, `Ships must be at most 2147483647, got 1e400`},
		{"beyond int32", `3000000000`, `Ships must be at most 2147483647, got 3000000000`},
		{"whole float is whole", `7.0`, ""},
		{"exponent is whole", `7e0`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			o := orders(t, `[{"from":"A","to":"B","ships":`+tt.ships+`},{"from":"D","to":"C","ships":2}]`)
			var check, want []string
			if tt.reason != "" {
				check = []string{"Order 0: " + tt.reason}
				want = []string{"Order 0: A -> B with " + tt.ships + " ships: " + tt.reason}
			}
			if got := Check(s, "p1", o); !slices.Equal(got, check) {
				t.Errorf("Check = %q, want %q", got, check)
			}
			if got := errorTexts(execute(s, "p1", o)); !slices.Equal(got, want) {
				t.Errorf("execute = %q, want %q", got, want)
			}
			wantFleets := 2
			if tt.reason != "" {
				wantFleets = 1
			}
			if len(s.Fleets) != wantFleets {
				t.Errorf("fleets %+v, want %d", s.Fleets, wantFleets)
			}
			if tt.reason == "" && s.Fleets[0].Ships != 7 {
				t.Errorf("%s ships sent %d, want 7", tt.ships, s.Fleets[0].Ships)
			}
		})
	}
}

func TestParseOrdersRejectsWhatIsNotAnOrderList(t *testing.T) {
	t.Parallel()
	for _, js := range []string{`{"from":"A"}`, `"A->B"`, `[{"from":"A"}`, `null`} {
		t.Run(js, func(t *testing.T) {
			t.Parallel()
			if o, err := ParseOrders([]byte(js)); err == nil {
				t.Errorf("ParseOrders(%s) = %+v, want an error", js, o)
			} else if !strings.Contains(err.Error(), `{"from","to","ships"}`) {
				t.Errorf("error %q does not say what an order list is", err)
			}
		})
	}
}

// The seed's warnings before a person submits: over-commitment (however
// many orders make it) and an origin star held by an opponent.
func TestWarnings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, orders string
		want         []string
	}{
		{"seed over-commitment", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`,
			[]string{"Over-commitment at A: 12 ships ordered but only 10 available"}},
		{"one order too many", `[{"from":"A","to":"B","ships":11}]`,
			[]string{"Over-commitment at A: 11 ships ordered but only 10 available"}},
		{"opponent's star", `[{"from":"F","to":"G","ships":3}]`,
			[]string{"Star F is controlled by opponent (may change by execution)"}},
		{"other problems as errors", `[{"from":"A","to":"A","ships":3},{"from":"C","to":"B","ships":1}]`,
			[]string{"Order 1: A -> A with 3 ships: Cannot send fleet to same star", "Order 2: C -> B with 1 ships: Player p1 does not control origin star C"}},
		{"valid", `[{"from":"A","to":"B","ships":10}]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Warnings(board(), "p1", orders(t, tt.orders)); !slices.Equal(got, tt.want) {
				t.Errorf("Warnings:\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
