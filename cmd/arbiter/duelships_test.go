package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDuelShipsYAMLPassiveWithBaseAmountRefused: a duel simulation's own
// ships.yaml with a PASSIVE power that writes baseAmount (null counts, as
// the seed's `!== undefined` does) is refused by validate and by run: a
// usage exit, one message naming the file, the ship and the power, and
// nothing written.
// issue 21 item 12
func TestDuelShipsYAMLPassiveWithBaseAmountRefused(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "duel-demo")
	writeFiles(t, dir, map[string]string{"ships.yaml": "ships:\n  - id: Mirror\n    cost: 2\n    health: 2\n    text: Your healing is tripled.\n    powers:\n" +
		"      - {phase: AUTOMATIC, timing: PASSIVE, baseAmount: null, specialLogic: {healingMultiplier: 3}}\n"})
	want := filepath.Join(dir, "ships.yaml") + `: ship "Mirror" power 0: PASSIVE powers must not have baseAmount (they are queries, not effects)`
	before := tree(t, dir)

	code, out, errOut := arbiter(t, "validate", dir)
	if code != ExitUsage || out != want+"\n" {
		t.Errorf("validate: exit %d (want %d)\nstdout:\n%s\nwant:\n%s\nstderr:\n%s", code, ExitUsage, out, want, errOut)
	}

	code, out, errOut = arbiter(t, "run", dir, "--ticks", "1")
	if code != ExitUsage || strings.Count(errOut, want) != 1 || strings.Contains(out, "committed") {
		t.Errorf("run: exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, ExitUsage, out, errOut)
	}
	if after := tree(t, dir); len(after) != len(before) {
		t.Errorf("refused commands wrote files: %v", after)
	}
	if _, err := os.Stat(filepath.Join(dir, "state.db")); err == nil {
		t.Error("run created state.db")
	}

	// The same ship without a baseAmount is played.
	writeFiles(t, dir, map[string]string{"ships.yaml": "ships:\n  - id: Mirror\n    cost: 2\n    health: 2\n    text: Your healing is tripled.\n    powers:\n" +
		"      - {phase: AUTOMATIC, timing: PASSIVE, specialLogic: {healingMultiplier: 3}}\n"})
	if code, out, errOut := arbiter(t, "validate", dir); code != 0 || !strings.HasPrefix(out, "ok: duel-demo") {
		t.Errorf("validate of a good ships.yaml: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Errorf("run with a good ships.yaml: exit %d\n%s\n%s", code, out, errOut)
	}
}
