package conquest

import (
	"strings"
	"testing"
)

// The seed's display of last turn's errors (§3.3, §5): a rule of 60 '=',
// the title, the rule, then per error a blank line and "Order skipped: ..."
// with its reason, or "All orders rejected: ...", and a blank line.
func TestErrorBlock(t *testing.T) {
	t.Parallel()
	rule := strings.Repeat("=", 60)
	tests := []struct {
		name   string
		player string
		orders string
		want   string
	}{
		{"skipped orders", "p1", `[{"from":"A","to":"B","ships":17},{"from":"F","to":"G","ships":3},{"from":"D","to":"B","ships":1}]`,
			"\n" + rule + "\nORDER ERRORS FROM LAST TURN\n" + rule + "\n" +
				"\nOrder skipped: 17 ships from A to B\n  Reason: Not enough ships at A: have 10, need 17\n" +
				"\nOrder skipped: 3 ships from F to G\n  Reason: Player p1 does not control origin star F\n" +
				"\n"},
		{"whole set rejected", "p1", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`,
			"\n" + rule + "\nORDER ERRORS FROM LAST TURN\n" + rule + "\n" +
				"\nAll orders rejected: Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]\n" +
				"\n"},
		{"a wrong count as written", "p1", `[{"from":"A","to":"B","ships":"seven"}]`,
			"\n" + rule + "\nORDER ERRORS FROM LAST TURN\n" + rule + "\n" +
				"\nOrder skipped: \"seven\" ships from A to B\n  Reason: Ships must be a whole number, got \"seven\"\n" +
				"\n"},
		{"no errors", "p1", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"the other player's errors are not shown", "p2", `[{"from":"A","to":"B","ships":70}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			s1 := next(t, s, map[string][]Order{"p1": orders(t, tt.orders)})
			if got := ErrorBlock(s1, tt.player); got != tt.want {
				t.Errorf("ErrorBlock:\n%s\n%q\nwant\n%q", got, got, tt.want)
			}
			// A turn later the errors are no longer last turn's.
			if got := ErrorBlock(next(t, s1, nil), tt.player); got != "" {
				t.Errorf("a turn later: %q", got)
			}
		})
	}
}

func TestViewOf(t *testing.T) {
	t.Parallel()
	s := next(t, board(), map[string][]Order{"p1": orders(t, `[{"from":"A","to":"Q","ships":1}]`)})
	v := ViewOf(s, "p1")
	if v.You != "p1" || v.Turn != 5 || len(v.Stars) != 6 || len(v.Scores) != 2 {
		t.Errorf("view %+v", v)
	}
	if len(v.Errors) != 1 || v.Errors[0] != "Order 0: A -> Q with 1 ships: Destination star Q does not exist" {
		t.Errorf("errors %q", v.Errors)
	}
	// Travel times from each of p1's stars (A, D) to the 5 others.
	if len(v.Travel) != 10 || v.Travel[0] != (TravelTime{From: "A", To: "B", Turns: 1}) {
		t.Errorf("travel %+v", v.Travel)
	}
	js := jsonOf(t, v)
	for _, key := range []string{`"you":"p1"`, `"your_order_errors_last_turn":[`, `"travel_turns_from_your_stars":[`, `"garrison":2`} {
		if !strings.Contains(js, key) {
			t.Errorf("view JSON lacks %s: %s", key, js)
		}
	}
}

func TestMapText(t *testing.T) {
	t.Parallel()
	s := board()
	s.Fleets = []Fleet{{Owner: "p2", From: "F", To: "D", Ships: 4, Sent: 3, Arrives: 5}}
	text := MapText(s)
	for _, line := range []string{
		"Turn 3 of 50 · players 1=p1 2=p2 · . = neutral",
		"A (0,0) production 4, p1: p1 10 ships",
		"B (3,0) production 1, neutral: empty",
		"C (0,3) production 2, neutral: 2 neutral defenders",
		"fleet: p2, 4 ships F -> D, arrives turn 5",
		"  0 A1 ·  ·  B. ",
	} {
		if !strings.Contains(text, line) {
			t.Errorf("map lacks %q:\n%s", line, text)
		}
	}
}
