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

// TestOrderNote: each line typed is read at once: an order is kept and
// told its travel time and arrival; an order with a problem of its own (an
// unknown star, a count that is not a number of ships, the same star
// twice) is kept and flagged at once, numbered as typed from 1; one from a
// star that is not the seat's now is told it is skipped unless it is by
// then; a line that is not an order (a misspelt keyword: "expected FROM")
// or an unknown command is said and dropped.
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
		{1, "SEND 2 FROM Z TO B", "  Order 1: Origin star Z does not exist: it will be skipped (/drop 1 removes it)", true},
		{2, "SEND four FROM A TO Q", "  Order 2: Destination star Q does not exist: it will be skipped (/drop 2 removes it)", true},
		{3, "SEND four FROM A TO B", `  Order 3: Ships must be a whole number, got "four": it will be skipped (/drop 3 removes it)`, true},
		{1, "SEND 0 FROM A TO B", "  Order 1: Ships must be positive, got 0: it will be skipped", true},
		{1, "SEND 2 FROM A TO a", "  Order 1: Cannot send fleet to same star: it will be skipped", true},
		{1, "SEND 2 FROM F TO B", "  Order 1: F is not yours now: the order is skipped unless it is when the orders execute", true},
		{3, "SEND 4 FORM C TO B", `Not read: line 3: Missing required field FROM: expected FROM after "SEND 4", found "FORM"`, false},
		{1, "SEND 4 FROM C", `expected TO after "SEND 4 FROM C", found the end of the line`, false},
		{1, "/hlep", "/hlep is not a command: the commands are /help, /map, /list, /drop N, /pass and /quit.", false},
	} {
		note, keep := orderNote(st, "p1", 4, tc.n, tc.line)
		if keep != tc.keep || !strings.Contains(note, tc.note) || tc.note == "" && note != "" {
			t.Errorf("orderNote(%d, %q) = %q, %v; want %q, %v", tc.n, tc.line, note, keep, tc.note, tc.keep)
		}
	}
}

// TestMapDrawsItsWidth: a map of width 10 draws 10 columns (0 to 9) and
// height rows, however far its stars reach; a game saved before the size
// was kept draws as far as its stars reach.
func TestMapDrawsItsWidth(t *testing.T) {
	t.Parallel()
	set := Setup{Seed: 7, MaxTurns: 40, Stars: 4, Width: 10, Height: 12, Players: []string{"p1", "p2"}}
	s := NewGame(set)
	for i := range s.Stars { // every star in the first columns and rows
		s.Stars[i].X, s.Stars[i].Y = 2*(i%2), 2*(i/2)
	}
	lines := strings.Split(mapGrid(s), "\n")
	if got, want := strings.Fields(lines[0]), strings.Fields("0 1 2 3 4 5 6 7 8 9"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("columns %q, want %q", got, want)
	}
	if !strings.HasPrefix(lines[12], " 11 ") || strings.HasPrefix(lines[13], " 12 ") {
		t.Errorf("rows: want 0 to 11:\n%s", mapGrid(s))
	}
	if w, h := starMap(s).Width, starMap(s).Height; w != 10 || h != 12 {
		t.Errorf("the report's map is %dx%d, want 10x12", w, h)
	}
	s.Width, s.Height = 0, 0
	if got := strings.Fields(strings.Split(mapGrid(s), "\n")[0]); len(got) != 3 {
		t.Errorf("a game saved without its size: columns %q, want 0 to 2", got)
	}
}
