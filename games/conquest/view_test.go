package conquest

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/runner"
)

// Seed 000's "Post-Turn Error Display" (§3.3, §5): a rule of 60 '=', the
// title, the rule, then per error a blank line and the seed's lines,
// "Order skipped: 7 ships from A to B" / "  Reason: ..." for a skipped
// order and "All orders rejected: {error}" for a rejected set, each with
// §2.2's "  Suggestion: ..." under it, and a blank line; each kind of error
// with a suggestion of its own.
func TestPostTurnErrorDisplay(t *testing.T) {
	t.Parallel()
	rule := strings.Repeat("=", 60)
	head := "\n" + rule + "\nORDER ERRORS FROM LAST TURN\n" + rule + "\n"
	tests := []struct {
		name   string
		player string
		orders string
		want   string
	}{
		{"skipped orders", "p1", `[{"from":"A","to":"B","ships":17},{"from":"F","to":"G","ships":3},{"from":"D","to":"B","ships":1}]`,
			head +
				"\nOrder skipped: 17 ships from A to B\n  Reason: Not enough ships at A: have 10, need 17\n" +
				"  Suggestion: Reduce ships to 10 or split across multiple turns\n" +
				"\nOrder skipped: 3 ships from F to G\n  Reason: Player p1 does not control origin star F\n" +
				"  Suggestion: Send fleets only from stars you control: A, D\n" +
				"\n"},
		{"whole set rejected", "p1", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`,
			head +
				"\nAll orders rejected: Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]\n" +
				"  Suggestion: Order at most 10 ships from A in total: over-commitment rejects every order of the turn\n" +
				"\n"},
		{"every other kind", "p1", `[{"from":"A","to":"B","ships":"seven"},{"from":"Q","to":"B","ships":1},{"from":"A","to":"Z","ships":1},` +
			`{"from":"A","to":"A","ships":1},{"from":"A","to":"B","ships":0},{"from":"A","to":"B","ships":1e20},{"x":1}]`,
			head +
				"\nOrder skipped: \"seven\" ships from A to B\n  Reason: Ships must be a whole number, got \"seven\"\n" +
				"  Suggestion: Give the number of ships as a whole number, e.g. 7\n" +
				"\nOrder skipped: 1 ships from Q to B\n  Reason: Origin star Q does not exist\n" +
				"  Suggestion: Check the star id: the stars are A, B, C, D, F, G\n" +
				"\nOrder skipped: 1 ships from A to Z\n  Reason: Destination star Z does not exist\n" +
				"  Suggestion: Check the star id: the stars are A, B, C, D, F, G\n" +
				"\nOrder skipped: 1 ships from A to A\n  Reason: Cannot send fleet to same star\n" +
				"  Suggestion: Choose a destination other than A\n" +
				"\nOrder skipped: 0 ships from A to B\n  Reason: Ships must be positive, got 0\n" +
				"  Suggestion: Send at least 1 ship, or leave the order out\n" +
				"\nOrder skipped: 1e20 ships from A to B\n  Reason: Ships must be at most 2147483647, got 1e20\n" +
				"  Suggestion: Send at most the ships stationed at A (10 now)\n" +
				"\nOrder skipped: {\"x\":1} (not an order object)\n  Reason: Invalid order object {\"x\":1}: missing \"from\", \"to\" and \"ships\"\n" +
				"  Suggestion: Write each order as {\"from\": \"A\", \"to\": \"B\", \"ships\": 7} (a person: SEND 7 FROM A TO B)\n" +
				"\n"},
		{"what a player wrote cannot drive the terminal", "p1", `[{"from":"A","to":"\u001b]0;pwned\u0007","ships":1}]`,
			head +
				"\nOrder skipped: 1 ships from A to \\x1b]0;pwned\\a\n  Reason: Destination star \\x1b]0;pwned\\a does not exist\n" +
				"  Suggestion: Check the star id: the stars are A, B, C, D, F, G\n" +
				"\n"},
		{"no errors", "p1", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"the other player's errors are not shown", "p2", `[{"from":"A","to":"B","ships":70}]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			s1 := next(t, s, map[string][]Order{"p1": orders(t, tt.orders)})
			if got := ErrorBlock(s1, tt.player, false); got != tt.want {
				t.Errorf("ErrorBlock:\n%s\n%q\nwant\n%q", got, got, tt.want)
			}
			colored := ErrorBlock(s1, tt.player, true)
			if ansi := regexp.MustCompile("\x1b\\[[0-9;]*m"); ansi.ReplaceAllString(colored, "") != tt.want {
				t.Errorf("ErrorBlock with colour, colours removed:\n%q\nwant\n%q", ansi.ReplaceAllString(colored, ""), tt.want)
			}
			if tt.want != "" && !strings.Contains(colored, "\x1b[1;31mOrder skipped:\x1b[0m ") && !strings.Contains(colored, "\x1b[1;31mAll orders rejected:\x1b[0m ") {
				t.Errorf("ErrorBlock with colour has no red head:\n%q", colored)
			}
			// A turn later the errors are no longer last turn's.
			if got := ErrorBlock(next(t, s1, nil), tt.player, false); got != "" {
				t.Errorf("a turn later: %q", got)
			}
		})
	}
}

// Seed 000 §5's "Post-Turn Error Display" example, line for line: A holds
// 5 ships, F is p2's; each skipped order gets the seed's two lines, then
// its suggestion.
func TestPostTurnErrorDisplaySeedExample(t *testing.T) {
	t.Parallel()
	s := board()
	s.Star("A").Ships["p1"] = 5
	s1 := next(t, s, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":7},{"from":"F","to":"G","ships":3}]`)})
	got := ErrorBlock(s1, "p1", false)
	for _, lines := range []string{
		"\nOrder skipped: 7 ships from A to B\n  Reason: Not enough ships at A: have 5, need 7\n  Suggestion: Reduce ships to 5 or split across multiple turns\n",
		"\nOrder skipped: 3 ships from F to G\n  Reason: Player p1 does not control origin star F\n  Suggestion: ",
	} {
		if !strings.Contains(got, lines) {
			t.Errorf("the display lacks the seed's\n%s\nin\n%s", lines, got)
		}
	}
}

// issue 21 item 7: the end of the game shows how it ended and each
// player's error statistics, in Summary and in `arbiter status`.
func TestHumanErrorDisplaySummary(t *testing.T) {
	t.Parallel()
	s := board()
	s = next(t, s, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":17},{"from":"A","to":"Z","ships":1},{"from":"D","to":"C","ships":1}]`)})
	s = next(t, s, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":9},{"from":"A","to":"C","ships":9}]`)})
	s.Result = &Result{Turn: s.Turn, Winner: "p2", Reason: "test"}
	st := ErrorStatsOf(s, "p1")
	if st.Errors != 3 || st.Skipped != 2 || st.Rejected != 1 || st.Turns != 2 || len(st.ByKind) != 3 {
		t.Errorf("stats %+v", st)
	}
	want := "3 order errors in 2 turns: 2 orders skipped, 1 order set rejected (over-commitment 1, not enough ships 1, unknown destination star 1)"
	if got := st.String(); got != want {
		t.Errorf("stats line\n%q\nwant\n%q", got, want)
	}
	sum := Summary(s, false)
	for _, line := range []string{
		"\nGAME OVER: p2 won at turn 5 (test)\n",
		"\n  Order errors: 3 in 2 turns: 2 orders skipped, 1 order set rejected\n",
		"\n    over-commitment:           1\n",
		"\n    unknown destination star:  1\n",
		"\np2: 1 star, ",
		"\n  Order errors: none\n",
	} {
		if !strings.Contains(sum, line) {
			t.Errorf("summary lacks %q:\n%s", line, sum)
		}
	}
	if strings.Contains(sum, "\x1b") || !strings.Contains(Summary(s, true), "\x1b[1mGAME OVER: ") {
		t.Errorf("colour in the plain summary, or none in the coloured one:\n%q", Summary(s, true))
	}
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatBot, "p2": SeatBot}})
	fields, err := g.Status(t.Context(), nil, s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fields {
		got[f.Key] = f.Value
	}
	if got["p1 errors"] != want || got["p2 errors"] != "no order errors" {
		t.Errorf("status fields %q", got)
	}
	s.Result = nil
	if fields, _ := g.Status(t.Context(), nil, s); slices.ContainsFunc(fields, func(f runner.Field) bool { return f.Key == "p1 errors" }) {
		t.Errorf("a game going on shows the end of game statistics: %+v", fields)
	}
	if !strings.Contains(Summary(s, false), "\nGAME STOPPED after turn 5 of 50\n") {
		t.Errorf("summary of a game going on:\n%s", Summary(s, false))
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
