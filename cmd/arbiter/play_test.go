package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// withSeats copies simulations/<name> and sets its seats, e.g.
// "p1: person", "p2: person".
func withSeats(t *testing.T, name string, seats ...string) string {
	t.Helper()
	dir := gameCopy(t, name)
	yaml := filepath.Join(dir, "simulation.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, seat := range seats {
		p, _, _ := strings.Cut(seat, ":")
		if !strings.Contains(s, p+": bot") {
			t.Fatalf("%s has no seat %q", yaml, p)
		}
		s = strings.Replace(s, p+": bot", seat, 1)
	}
	if err := os.WriteFile(yaml, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// playTTY runs `arbiter play` with stdout taken for a colourless terminal.
func playTTY(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := TestStreams(input)
	io.OutTTY = true
	code := Execute(context.Background(), io, append([]string{"play"}, args...))
	return code, out.String(), errOut.String()
}

// lastTick reads "last tick: N" from `arbiter status`.
func lastTick(t *testing.T, dir string) string {
	t.Helper()
	_, out, _ := arbiter(t, "status", dir)
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "last tick:"); ok {
			if f := strings.Fields(v); len(f) > 0 {
				return f[0]
			}
		}
	}
	t.Fatalf("status has no last tick:\n%s", out)
	return ""
}

// TestPlayDuelOfTwoPeopleEndsAtEndOfInput: issue 21 item 1. A duel whose two
// seats are people, played with --seat p1, used to print "Refused:" without
// end; it is played hot-seat, and the end of the input ends the session: a
// one-line message, the exit code of an interruption, the last committed
// turn kept. The same in conquest.
func TestPlayDuelOfTwoPeopleEndsAtEndOfInput(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		sim   string
		input string // what is typed before the input ends
		ticks string // the turns committed by then
	}{
		{"duel-demo", "", "0"},
		// Enter for p1's screen, none, none...: a turn or more commits.
		{"duel-demo", strings.Repeat("\n", 12), ""},
		{"conquest-demo", "", "0"},
		{"conquest-demo", "\n/pass\n\n/pass\n\nSEND 1 FROM", "1"},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			dir := withSeats(t, tc.sim, "p1: person", "p2: person")
			done := make(chan struct{})
			var (
				code        int
				out, errOut string
			)
			go func() {
				defer close(done)
				code, out, errOut = play(t, tc.input, dir, "--seat", "p1")
			}()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("play did not end at the end of its input")
			}
			if code != ExitInterrupted {
				t.Errorf("exit %d, want %d (interrupted)\n%s", code, ExitInterrupted, errOut)
			}
			if lines := strings.Split(strings.TrimSpace(errOut), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "arbiter: end of input: left the game after turn ") || !strings.Contains(lines[0], "`arbiter play` goes on from here") {
				t.Errorf("stderr is not the one-line message:\n%s", errOut)
			}
			if n := strings.Count(out, "Refused"); n > 0 {
				t.Errorf("%d refusals printed:\n%.2000s", n, out)
			}
			if tc.ticks == "" {
				if got := lastTick(t, dir); got == "0" || got == "" {
					t.Errorf("no turn committed by a full round of answers:\n%s", out)
				}
				return
			}
			if tc.ticks == "0" {
				if exists(filepath.Join(dir, "state.db")) {
					t.Error("a session that committed no turn left a state.db")
				}
				return
			}
			if got := lastTick(t, dir); got != tc.ticks {
				t.Errorf("last tick %s after the input ended, want %s (the committed turn kept, the one in flight not)", got, tc.ticks)
			}
		})
	}
}

// TestPlayConquestHotSeat: issue 21 item 2. With no --seat, a conquest whose
// two seats are people is played hot-seat on one terminal: each person gets
// the seed's full turn (errors of the last turn, map, orders, warnings,
// "Submit anyway?"), the screen is cleared before the keyboard passes, and
// the turn resolves with both players' orders.
func TestPlayConquestHotSeat(t *testing.T) {
	cleanEnv(t)
	dir := withSeats(t, "conquest-demo", "p1: person", "p2: person")
	p1, p2 := starsOf(t, dir)
	input := strings.Join([]string{
		"", // p1 takes the keyboard
		"SEND 3 FROM " + p1 + " TO " + p2, "SEND 2 FROM ZZ TO " + p2, "", "y",
		"", // p2 takes the keyboard
		"SEND 4 FROM " + p2 + " TO " + p1, "",
		"", // the table has read what turn 1 did
		"", // turn 2: p1 again
		"/pass",
		"", // p2
		"/quit",
	}, "\n") + "\n"
	code, out, errOut := playTTY(t, input, dir)
	if code != 0 {
		t.Fatalf("hot-seat play: exit %d\n%s\n%s", code, out, errOut)
	}
	clear := "\x1b[H\x1b[2J\x1b[3J"
	for _, want := range []string{
		"p1 and p2 play at this terminal, hot-seat",
		"==== p1's turn ====\nPass the keyboard to p1, then press Enter. ",
		"Submit anyway? (y/n): ",
		"Turn 1: your orders, p1?",
		clear + "\n==== p2's turn ====\nPass the keyboard to p2, then press Enter. ",
		"Turn 1: your orders, p2?",
		"ORDER ERRORS FROM LAST TURN",
		"Turn 2: your orders, p2?",
		"Press Enter to go on. " + clear + "\n==== p1's turn ====",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hot-seat output lacks %q:\n%s", want, out)
		}
	}
	// p2's screen starts after a clear: nothing p1 typed or was told is on it.
	p2Screen := out[strings.Index(out, clear+"\n==== p2's turn"):]
	p2Screen = p2Screen[:strings.Index(p2Screen, "Turn 1: your orders, p2?")]
	if strings.Contains(p2Screen, "ZZ") || strings.Contains(p2Screen, "WARNINGS") {
		t.Errorf("p2's screen shows p1's orders:\n%s", p2Screen)
	}
	// The errors of turn 1 are p1's, shown on p1's screen of turn 2 only.
	turn2 := out[strings.Index(out, "Turn 1: your orders, p2?"):]
	p1Turn2 := turn2[:strings.Index(turn2, "Turn 2: your orders, p1?")]
	p2Turn2 := turn2[strings.Index(turn2, "Turn 2: your orders, p1?"):]
	if !strings.Contains(p1Turn2, "ORDER ERRORS FROM LAST TURN") || strings.Contains(p2Turn2, "ORDER ERRORS FROM LAST TURN") {
		t.Errorf("the order errors of turn 1 are not p1's alone:\n%s", turn2)
	}
	for _, want := range []string{"Order 1 of p1 executed: 3 ships " + p1 + " -> " + p2, "Order 1 of p2 executed: 4 ships " + p2 + " -> " + p1} {
		if !strings.Contains(turn2, want) {
			t.Errorf("turn 1's events lack %q:\n%s", want, turn2)
		}
	}
	if got := lastTick(t, dir); got != "1" {
		t.Errorf("last tick %s, want 1 (turn 2 was left before p2 submitted)", got)
	}
}

// starsOf returns the home stars of p1 and p2 from the game's export.
func starsOf(t *testing.T, dir string) (string, string) {
	t.Helper()
	_, out, _ := arbiter(t, "export", dir, "--format", "json", "--tick", "0")
	homes := map[string]string{}
	for _, part := range strings.Split(out, `"id":`)[1:] {
		id := strings.Trim(strings.TrimSpace(strings.SplitN(part, ",", 2)[0]), `"`)
		if _, rest, ok := strings.Cut(part, `"owner":`); ok {
			owner := strings.Trim(strings.TrimSpace(strings.SplitN(rest, ",", 2)[0]), `"`)
			if owner != "" && homes[owner] == "" {
				homes[owner] = id
			}
		}
	}
	if homes["p1"] == "" || homes["p2"] == "" {
		t.Fatalf("no home stars in the export:\n%s", out)
	}
	return homes["p1"], homes["p2"]
}

// Seed 000's post-turn lines through `arbiter play`, and its 'order': 'ALL':
// a person's over-committed set is shown at the next turn as "All orders
// rejected: {error}" and exported with "order": "ALL".
func TestPlayAllOrdersRejectedExportsOrderALL(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	p1, p2 := starsOf(t, dir)
	send := "SEND 6 FROM " + p1 + " TO " + p2 + "\n"
	code, out, errOut := play(t, send+send+"\ny\n/quit\n", dir, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	want := "\nAll orders rejected: Invalid orders: Total ships from " + p1 + " (12) exceeds available (10). Orders from " + p1 +
		": [6 to " + p2 + ", 6 to " + p2 + "]\n  Suggestion: Order at most 10 ships from " + p1 + " in total"
	if !strings.Contains(out, want) {
		t.Errorf("play output lacks %q:\n%s", want, out)
	}
	_, exp, _ := arbiter(t, "export", dir, "--format", "json")
	if !strings.Contains(exp, `"index": -1,`+"\n"+`      "order": "ALL",`) {
		t.Errorf("export lacks the whole set's \"order\": \"ALL\":\n%s", exp)
	}
}

// TestPlayDuelHotSeat: issue 21 item 2, the duel. With no --seat, both
// people choose at one terminal; each choice starts after the keyboard is
// passed, and turns commit.
func TestPlayDuelHotSeat(t *testing.T) {
	cleanEnv(t)
	dir := withSeats(t, "duel-demo", "p1: person", "p2: person")
	// Enter takes the keyboard; an empty build or charge line chooses none.
	code, out, errOut := playTTY(t, strings.Repeat("\n", 40)+"/quit\n", dir)
	if code != 0 {
		t.Fatalf("hot-seat duel: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"p1 and p2 play at this terminal, hot-seat", "Pass the keyboard to p1", "\x1b[H\x1b[2J\x1b[3J\n==== p2's turn ====\nPass the keyboard to p2", "p1 builds", "p2 builds", "Left the game after turn "} {
		if !strings.Contains(out, want) {
			t.Errorf("hot-seat duel output lacks %q:\n%s", want, out)
		}
	}
	if got := lastTick(t, dir); got == "0" || got == "" {
		t.Errorf("no turn committed:\n%s", out)
	}
}

// TestPlayOnePersonSeat: issue 21 item 2. A single person seat is played
// with or without --seat, without hot-seat screens; --seat over a bot seat
// plays it; --seat of a player that is not one is a usage error.
func TestPlayOnePersonSeat(t *testing.T) {
	cleanEnv(t)
	dir := withSeats(t, "conquest-demo", "p2: person")
	for _, args := range [][]string{{dir}, {dir, "--seat", "p2"}} {
		code, out, errOut := play(t, "/pass\n/quit\n", args...)
		if code != 0 || !strings.Contains(out, "You play p2.") || !strings.Contains(out, ": your orders, p2?") || strings.Contains(out, "Pass the keyboard") {
			t.Fatalf("play %v: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	// --seat p1 over p1's bot, with p2 a person: both are played here.
	code, out, errOut := play(t, "\n/pass\n\n/quit\n", dir, "--seat", "p1")
	if code != 0 || !strings.Contains(out, "p1 and p2 play at this terminal, hot-seat") || !strings.Contains(out, "Pass the keyboard to p2") || !strings.Contains(out, ": your orders, p1?") {
		t.Fatalf("play --seat p1 with p2 a person: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestPlayConquestErrorDisplayAndSummary: issue 21 items 6 and 7 at the
// terminal. A person's "SEND -3 ..." is warned about, and once submitted
// anyway it is skipped and recorded like a model's; the next turn shows the
// seed's Order skipped / Reason / Suggestion lines, in colour only on a
// terminal without NO_COLOR; the end of the game shows each player's error
// statistics.
func TestPlayConquestErrorDisplayAndSummary(t *testing.T) {
	cleanEnv(t)
	for _, color := range []bool{false, true} {
		dir := withSeats(t, "conquest-demo", "p1: person")
		yaml := filepath.Join(dir, "simulation.yaml")
		b, _ := os.ReadFile(yaml)
		os.WriteFile(yaml, []byte(strings.Replace(string(b), "max_turns: 40", "max_turns: 2", 1)), 0o644)
		p1, p2 := starsOf(t, dir)
		input := "SEND -3 FROM " + p1 + " TO " + p2 + "\n\ny\n/pass\n"
		io, out, errOut := TestStreams(input)
		io.OutTTY, io.OutColor = color, color
		code := Execute(context.Background(), io, []string{"play", dir})
		got := out.String()
		if code != 0 {
			t.Fatalf("play: exit %d\n%s\n%s", code, got, errOut)
		}
		for _, want := range []string{
			"WARNINGS:\n  - Order 1: " + p1 + " -> " + p2 + " with -3 ships: Ships must be positive, got -3",
			"Submit anyway? (y/n): ",
			"ORDER ERRORS FROM LAST TURN",
			"Order skipped: -3 ships from " + p1 + " to " + p2,
			"  Reason: Ships must be positive, got -3",
			"  Suggestion:",
			"GAME OVER",
			"Order errors:",
		} {
			if !strings.Contains(stripANSI(got), want) {
				t.Errorf("color %v: output lacks %q:\n%s", color, want, got)
			}
		}
		if has := strings.Contains(got, "\x1b["); has != color {
			t.Errorf("color %v: ANSI escapes in the output: %v\n%q", color, has, got)
		}
		if _, status, _ := arbiter(t, "status", dir); !strings.Contains(status, "1 order error") {
			t.Errorf("the skipped order is not recorded:\n%s", status)
		}
	}
}

// stripANSI drops the SGR colour sequences of s.
func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] == ';' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// TestPlayDuelUpgrade: a person upgrades a ship of theirs at the terminal,
// naming the new ship and the one it upgrades (issue 21 item 11).
func TestPlayDuelUpgrade(t *testing.T) {
	cleanEnv(t)
	dir := withSeats(t, "duel-demo", "p1: person")
	code, out, errOut := play(t, "Fighter\nDreadnought p1-1\n/quit\n", dir)
	if code != 0 || !strings.Contains(out, "  - Dreadnought p1-1: cost 4 (upgrades your Fighter p1-1: a Dreadnought costs you 6, less the 2 a Fighter cost)\n") {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, status, _ := arbiter(t, "status", dir); !strings.Contains(status, "fleet: 1 Dreadnought\n") {
		t.Errorf("the Fighter was not upgraded:\n%s", status)
	}
}

// TestPlayHelpShowsHowATurnIsPlayed: issue 25 item 7. play --help gives each
// kind's order syntax and an example turn, as the kinds write them.
func TestPlayHelpShowsHowATurnIsPlayed(t *testing.T) {
	code, out, _ := arbiter(t, "play", "--help")
	for _, want := range []string{"How a turn is played, by kind:", "conquest:\n", "order> SEND 4 FROM C TO B", "Submit anyway? (y/n):", "duel:\n", "Dreadnought p1-1", "<ship> <target>"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("play --help (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}
