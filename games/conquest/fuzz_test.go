package conquest

import (
	"encoding/json"
	"strings"
	"testing"
)

var orderSeeds = []string{
	`[]`,
	`[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`,
	`[{"from":"A","to":"B","ships":"7"},{"from":"a","to":"b","ships":7.5},{"from":"A","to":"B","ships":null},{"from":"A","to":"C","ships":"seven"}]`,
	`[{"from":"A","to":"A","ships":0},{"from":"Q","to":"B","ships":-3},{"from":1,"to":{},"ships":7.0}]`,
	`[{"from":"F","to":"G","ships":1e400},{"to":"B"},{}]`,
	`[{"from":"D","to":"B","ships":3000000000},{"from":"D","to":"C","ships":-2147483648}]`,
	`null`, `{"orders":[]}`, `[1]`, ``,
	// issue 21: typos beside an over-commitment, counts beyond an int, junk elements.
	`[{"from":"A","to":"B","ships":7},{"from":"A","to":"Z","ships":5},{"from":"A","to":"A","ships":5},{"from":"A","to":"C","ships":2.5}]`,
	`[{"from":"A","to":"B","ships":2147483648},{"from":"A","to":"C","ships":1e20},{"from":"D","to":"C","ships":-1e20},{"from":"D","to":"B","ships":2147483648.5}]`,
	`[{"x":1},7,null,"A to B",[1],{"from":"A","to":"B"},{"from":"<\u001b>","to":"B","ships":1}]`,
}

// checkOrders runs what a parsed order list goes through: the check of
// propose_orders, the warnings, then execution on a copy of the board, and
// asserts what must hold whatever the orders.
func checkOrders(t *testing.T, o []Order) {
	s := board()
	errs := Check(s, "p1", o)
	for _, e := range errs {
		if !strings.HasPrefix(e, "Order ") {
			t.Fatalf("check error %q does not name its order", e)
		}
	}
	Warnings(s, "p1", o)
	before := s.Scores()
	recorded := execute(s, "p1", o)
	if len(errs) == 0 && len(recorded) != 0 {
		t.Fatalf("orders valid by Check failed at once: %+v", recorded)
	}
	after := s.Scores()
	if after[0].Ships != before[0].Ships || after[1] != before[1] {
		t.Fatalf("execution made or lost ships: %+v -> %+v", before, after)
	}
	for _, st := range s.Stars {
		for p, n := range st.Ships {
			if n < 0 {
				t.Fatalf("%s has %d ships of %s", st.ID, n, p)
			}
		}
	}
	for _, f := range s.Fleets {
		if f.Ships < 1 || s.Star(f.From) == nil || s.Star(f.To) == nil || f.From == f.To {
			t.Fatalf("bad fleet %+v", f)
		}
	}
	for _, e := range recorded {
		if e.All() != (e.Order == nil) || (!e.All() && !strings.HasPrefix(e.Error, "Order ")) || (e.All() && !strings.HasPrefix(e.Error, "Invalid orders: ")) ||
			e.Kind == "" || strings.Contains(e.Error, ":  ->  with ") {
			t.Fatalf("record %+v", e)
		}
		// A record reads back as it was stored (state.db, export).
		var back OrderError
		if err := json.Unmarshal([]byte(mustJSON(e)), &back); err != nil || mustJSON(back) != mustJSON(e) {
			t.Fatalf("record %s read back as %s (%v)", mustJSON(e), mustJSON(back), err)
		}
	}
	for _, e := range errs {
		if strings.Contains(e, " ->  with ") || strings.Contains(e, ":  -> ") {
			t.Fatalf("check error %q reads as an empty order", e)
		}
	}
	shown := &State{Turn: s.Turn, Players: s.Players, Stars: s.Stars, Errors: recorded}
	if b := ErrorBlock(shown, "p1", false) + Summary(shown, false); strings.ContainsRune(b, 0x1b) {
		t.Fatalf("a display without colour writes an escape: %q", b)
	}
	ErrorBlock(shown, "p1", true)
	Summary(shown, true)
	// The turn resolves from here, whatever was ordered.
	n := s.clone()
	n.Turn++
	n.resolve(map[string][]Order{"p1": o, "p2": o})
}

// FuzzParseOrders: no input makes ParseOrders panic, and whatever it
// parses checks, executes and resolves without panic or lost ships.
func FuzzParseOrders(f *testing.F) {
	for _, s := range orderSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		o, err := ParseOrders(data)
		if err != nil {
			if o != nil {
				t.Fatalf("orders %+v with error %v", o, err)
			}
			return
		}
		// An order list survives its own JSON (as a record does).
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatalf("marshal %+v: %v", o, err)
		}
		back, err := ParseOrders(b)
		if err != nil || len(back) != len(o) {
			t.Fatalf("orders do not read back: %s: %v", b, err)
		}
		for i := range o {
			if back[i].String() != o[i].String() {
				t.Fatalf("order %d read back as %q, was %q", i, back[i], o[i])
			}
		}
		checkOrders(t, o)
	})
}

// FuzzToolOrders: the arguments of propose_orders and submit_orders, as a
// model writes them, never panic.
func FuzzToolOrders(f *testing.F) {
	for _, s := range orderSeeds {
		f.Add([]byte(`{"orders":` + s + `}`))
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"orders":null}`))
	f.Add([]byte(`{"orders":"A to B"}`))
	f.Fuzz(func(t *testing.T, args []byte) {
		o, err := ToolOrders(args)
		if err != nil {
			return
		}
		checkOrders(t, o)
		if p := Propose(board(), "p1", o); p.OK != (len(p.Errors) == 0) {
			t.Fatalf("propose %+v", p)
		}
	})
}
