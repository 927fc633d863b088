package conquest

import (
	"strings"
	"testing"
)

// TestOrdersScreen (issue 25 item 3): the screen is headed by the turn
// whose orders are written, not the turn the map was left at, and shows
// the travel times from the seat's stars; /help acts at once.
func TestOrdersScreen(t *testing.T) {
	t.Parallel()
	q := ordersQuestion(board(), "p1", false)
	for _, want := range []string{
		"==== Turn 4 of 50 · p1's orders ====\nplayers 1=p1 2=p2 · . = neutral\n",
		"Turns a fleet takes from your stars:\n        A  B  C  D  F  G\n  A     -  1  1  2  5  4\n  D     2  1  1  -  3  3\n",
		"Turn 4: your orders, p1? (/help shows how)",
	} {
		if !strings.Contains(q.Screen, want) {
			t.Errorf("screen lacks %q:\n%s", want, q.Screen)
		}
	}
	if strings.Contains(q.Screen, "Turn 3 of 50") {
		t.Errorf("the screen names turn 3, whose orders are played:\n%s", q.Screen)
	}
	help := ""
	for _, sc := range q.Shortcuts {
		if sc.Line == "/help" {
			help = sc.Show
		}
	}
	if !strings.Contains(help, "SEND <ships> FROM <star> TO <star>") || !strings.Contains(help, "/pass") {
		t.Errorf("/help shows %q", help)
	}
}

// TestOrderNote (issue 25 item 3): each line typed is read at once: an
// order is kept and told its travel time and arrival; a line that is not
// an order (a misspelt keyword: "expected FROM") or an unknown command is
// said and dropped.
func TestOrderNote(t *testing.T) {
	t.Parallel()
	st := board()
	for _, tc := range []struct {
		n          int
		line, note string
		keep       bool
	}{
		{1, "SEND 4 FROM A TO F", "  A -> F: 5 turns on the way, arrives in turn 9", true},
		{2, "send 2 from d to b", "  D -> B: 1 turn on the way, arrives in turn 5", true},
		{1, "SEND 2 FROM Z TO B", "", true}, // the warnings say it when submitted
		{3, "SEND 4 FORM C TO B", `Not read: line 3: Missing required field FROM: expected FROM after "SEND 4", found "FORM"`, false},
		{1, "SEND 4 FROM C", `expected TO after "SEND 4 FROM C", found the end of the line`, false},
		{1, "/hlep", "/hlep is not a command: the commands are /help, /map, /pass and /quit.", false},
	} {
		note, keep := orderNote(st, 4, tc.n, tc.line)
		if keep != tc.keep || !strings.Contains(note, tc.note) || tc.note == "" && note != "" {
			t.Errorf("orderNote(%d, %q) = %q, %v; want %q, %v", tc.n, tc.line, note, keep, tc.note, tc.keep)
		}
	}
}
