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
		"Order 1 of p1 executed: 4 ships " + home + " -> " + other,
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

// TestPlayConquestEditsOrdersAfterNo: an order with a problem of its own
// is flagged the moment it is typed, numbered from 1; it is still warned
// about before submission ("Order 2: ..."); answering n to "Submit anyway?"
// goes back to the orders typed, listed from 1, where /drop 2 removes the
// bad one and an empty line submits the rest, which execute ("Order 1 of
// p1 executed"). /drop of an order that is not there says so.
func TestPlayConquestEditsOrdersAfterNo(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	home, other := starsOf(t, dir)
	input := strings.Join([]string{
		"SEND 4 FROM " + home + " TO " + other,
		"SEND four FROM " + home + " TO Q",
		"/list",
		"", // submitted: warned
		"n",
		"/drop 3",
		"/drop 2",
		"", // submitted again: no warning
		"/quit",
	}, "\n") + "\n"
	code, out, errOut := play(t, input, dir, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	bad := "SEND four FROM " + home + " TO Q"
	listed := "Typed so far:\n  1. SEND 4 FROM " + home + " TO " + other + "\n  2. " + bad + "\n"
	for _, want := range []string{
		"order>   Order 2: Destination star Q does not exist: it will be skipped (/drop 2 removes it)\n",
		"order> " + listed,
		"WARNINGS:\n  - Order 2: " + home + ` -> Q with "four" ships: Destination star Q does not exist`,
		"Submit anyway? (y/n): Not submitted: edit your orders.\n" + listed + "/drop N removes line N",
		"order> /drop takes the number of a line typed, 1 to 2 (/list shows them).\n",
		"order> Dropped 2: " + bad + "\n",
		"Order 1 of p1 executed: 4 ships " + home + " -> " + other,
		"==== Turn 2 of 40 · p1's orders ====",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "WARNINGS:") != 1 {
		t.Errorf("the orders edited were warned about again:\n%s", out)
	}
	if _, status, _ := arbiter(t, "status", dir); !strings.Contains(status, "0 order errors") {
		t.Errorf("the dropped order was submitted:\n%s", status)
	}
}
