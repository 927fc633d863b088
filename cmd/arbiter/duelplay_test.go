package main

import (
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
		"gains that many lines. Lines are what\n     ships cost",
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
