package main

import (
	"strings"
	"testing"
)

// TestPlayConquestReadsEachLine (issue 25 item 3): the screen names the
// turn whose orders are written and the travel times from the person's
// stars; /help is shown at once (not kept as an order), each order typed
// is told when it arrives, a misspelt keyword is said at once ("expected
// FROM") and dropped, and the orders kept are submitted.
func TestPlayConquestReadsEachLine(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	home, other := starsOf(t, dir)
	input := strings.Join([]string{
		"/help",
		"SEND 4 FORM " + home + " TO " + other,
		"SEND 4 FROM " + home + " TO " + other,
		"", // submitted: no warning
		"/quit",
	}, "\n") + "\n"
	code, out, errOut := play(t, input, dir, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"==== Turn 1 of 40 · p1's orders ====\nplayers 1=p1 2=p2",
		"Turns a fleet takes from your stars:\n",
		"order> Orders of turn 1, one a line: SEND <ships> FROM <star> TO <star>",
		`order> Not read: line 1: Missing required field FROM: expected FROM after "SEND 4", found "FORM"`,
		"order>   " + home + " -> " + other + ": ",
		"Order 0 of p1 executed: 4 ships " + home + " -> " + other,
		"==== Turn 2 of 40 · p1's orders ====",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"/help" is not an order`) {
		t.Errorf("/help was kept as an order:\n%s", out)
	}
}
