package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPlayDuelTellsTheTurn (issue 25 items 1-2): at the terminal the duel
// explains lines and the die, names the person's seat person, keeps a
// charge the rules refuse in its step with the rule and the ships that can
// fire, and after each turn says what happened in words (builds, hits with
// health before → after, destructions); status, story and report say
// person too, and the story has no engine words.
func TestPlayDuelTellsTheTurn(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "duel-demo")
	// Seed 7: p1 builds a Fighter, then an Interceptor, which strikes first
	// at p2's Zenith p2-4 after naming one ship twice.
	input := "Fighter\nInterceptor\np1-3 opponent, p1-3 p2-2\np1-3 p2-4\n/quit\n"
	code, out, errOut := play(t, input, dir, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"gains that many lines. Lines are what ships cost",
		"so the list grows as your lines do",
		"p1 (you, person): health 30/30, 4 lines to spend, die 4",
		`The rules refuse it: charge declaration: ship "p1-3" spends a charge twice`,
		"The ships that can spend a charge now: p1-3 (targets opponent, p2-2, p2-4). Type the charges again.\ncharges (<ship> <target>, ...; empty: none)> ",
		"What turn 1 did:\n    p1 rolls a 4",
		"p1 (person) builds a Fighter (p1-1) for 2 lines, 2 left",
		"end of turn: p1's Fighter p1-1 hits p2 for 2",
		"first strike: p1's Interceptor p1-3 hits p2's Zenith p2-4 for 2: 6 → 4 health",
		"After turn 2:\n    turn:    2 of 30\n    p1:      person; ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "Refused:") {
		t.Errorf("a refused charge went back to the turn's start:\n%s", out)
	}
	_, status, _ := arbiter(t, "status", dir)
	if !strings.Contains(status, "person; health") {
		t.Errorf("status does not say person:\n%s", status)
	}
	_, story, _ := arbiter(t, "story", dir)
	if !strings.Contains(story, "p1 (person) builds an Interceptor (p1-3)") || strings.Contains(story, "fires power") || strings.Contains(story, "DEAL_DAMAGE") {
		t.Errorf("story:\n%s", story)
	}
	page := filepath.Join(t.TempDir(), "r.html")
	if code, _, errOut := arbiter(t, "report", dir, "-o", page); code != 0 {
		t.Fatalf("report: %s", errOut)
	}
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), `<h3>p1 <span class="id">person</span></h3>`) {
		t.Errorf("the report's players do not name p1 person")
	}
}

// TestPlayDuelCatalogueOnceWrappedUpgrade: the ship catalogue (what each
// ship does) is shown on the first build screen and on /ships, not every
// turn, whose screen names each option with its cost; an upgrade's cost is
// explained beside the new ship's ("a Dreadnought costs you 6, less the 2 a
// Fighter cost"); the upgrade says which id the ship has now; and on a
// terminal 64 columns wide every line fits, broken between words only.
func TestPlayDuelCatalogueOnceWrappedUpgrade(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "duel-demo")
	// Seed 7: p1 builds a Fighter (p1-1) in turn 1; in turn 3 it has the
	// lines for a Dreadnought new and for the upgrade of p1-1.
	io, stdout, errOut := TestStreams("Fighter\nnone\n/ships\nDreadnought p1-1\n/quit\n")
	io.Width = 64
	code := Execute(context.Background(), io, []string{"play", dir, "--seat", "p1"})
	out := stdout.String()
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	const what = "  - Dreadnought: cost 6, health 8. Upgrades a Fighter. End of\n    every turn, deal 3 damage to the opponent."
	if n := strings.Count(out, "The ships (/ships shows them again):\n"); n != 2 || strings.Count(out, what) != 2 {
		t.Errorf("the catalogue is shown %d times, want twice (the first build screen, /ships):\n%s", n, out)
	}
	turn3 := out[strings.Index(out, "Turn 3 of 30"):]
	for _, want := range []string{
		"  - Dreadnought: cost 6\n",
		"  - Dreadnought p1-1: cost 4 (upgrades your Fighter p1-1: a\n    Dreadnought costs you 6, less the 2 a Fighter cost)\n",
		"p1 (person) upgrades its Fighter p1-1 into a Dreadnought for\n    4 lines, 6 left: p1-1 is now p1-5",
	} {
		if !strings.Contains(turn3, want) {
			t.Errorf("turn 3 lacks %q:\n%s", want, turn3)
		}
	}
	for _, l := range strings.Split(out, "\n") {
		// The input is not echoed here: what follows a prompt starts on
		// its line, as it would not on a terminal.
		if _, after, ok := strings.Cut(l, "to upgrade, or none)> "); ok {
			l = after
		}
		if len([]rune(l)) > 64 {
			t.Errorf("a line of %d columns on a terminal of 64: %q", len([]rune(l)), l)
		}
	}
	if strings.Contains(out, "Upgrades a\nFighter") || strings.Contains(out, "Fight\n") {
		t.Errorf("a word is cut:\n%s", out)
	}
	if _, status, _ := arbiter(t, "status", dir); !strings.Contains(status, "fleet: 1 Dreadnought\n") {
		t.Errorf("the Fighter was not upgraded:\n%s", status)
	}
}
