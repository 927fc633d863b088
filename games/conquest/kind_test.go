package conquest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/session"
)

// TestStoryOrderErrorOnce: the story tells each order error of a turn once,
// on the log line where the rules recorded it, naming its player; before,
// the log's line was followed by a second "order error:" line of the same
// error.
func TestStoryOrderErrorOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGame(t, botSettings(0))
	r, st := openRunner(t, t.TempDir(), g, nil)
	rep, err := r.Run(ctx, 50)
	if err != nil {
		t.Fatal(err)
	}
	var out session.Story
	if err := g.Story(ctx, st, 1, rep.LastTick, session.StoryQuery{}, &out); err != nil {
		t.Fatal(err)
	}
	errors := 0
	for _, turn := range out.Turns {
		for _, e := range turn.Errors {
			if strings.HasPrefix(e.Error, "turn passed: ") {
				continue
			}
			errors++
			if n := countContaining(turn.Lines, e.Error); n != 1 {
				t.Errorf("turn %d tells %q %d times, want once:\n%s", turn.Turn, e.Error, n, strings.Join(turn.Lines, "\n"))
			}
			if !slices.Contains(turn.Lines, "order error: "+e.Player+": "+e.Error) {
				t.Errorf("turn %d: no line names %s's error %q", turn.Turn, e.Player, e.Error)
			}
		}
	}
	if errors == 0 {
		t.Fatalf("%d turns of seed 0 without an order error: the test proves nothing", len(out.Turns))
	}
}

// TestMarkOrderError: errors of the same text by two players land on their
// own lines, in order; one the log lacks is added at the end. The log
// numbers orders from 1 as people read them, the records from 0: a record
// finds its line, and a log written before (numbered from 0) still does.
// What the story says is numbered from 1 either way.
func TestMarkOrderError(t *testing.T) {
	t.Parallel()
	const recorded = "Order 0: A -> B with 5 ships: Player p1 does not control origin star A"
	const shown = "Order 1: A -> B with 5 ships: Player p1 does not control origin star A"
	for _, tc := range []struct{ name, logged string }{{"log numbered from 1", shown}, {"log written before", recorded}} {
		t.Run(tc.name, func(t *testing.T) {
			lines := []string{"Battle at A (p1 3 vs p2 9): p2 survived with 6", tc.logged, "Order 1 of p2 executed: 6 ships A -> C, arriving turn 4", tc.logged}
			markOrderError(&lines, "p1", recorded)
			markOrderError(&lines, "p2", recorded)
			markOrderError(&lines, "p2", "Order 1: C -> D with 2 ships: Origin star C does not exist")
			want := []string{"Battle at A (p1 3 vs p2 9): p2 survived with 6", "order error: p1: " + shown, "Order 1 of p2 executed: 6 ships A -> C, arriving turn 4",
				"order error: p2: " + shown, "order error: p2: Order 2: C -> D with 2 ships: Origin star C does not exist"}
			if !slices.Equal(lines, want) {
				t.Errorf("lines =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func countContaining(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if strings.Contains(l, s) {
			n++
		}
	}
	return n
}
