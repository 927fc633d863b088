package duel

import (
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// simWithShips writes a duel simulation with its own ships.yaml and opens
// it.
func simWithShips(t *testing.T, ships string) (string, *Game, error) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"simulation.yaml": "id: own-ships\nkind: duel\ntitle: Own ships\nsettings:\n  seats: {p1: bot, p2: bot}\n",
		ShipsFile:         ships,
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sim, err := worldtest.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(sim, nil)
	return dir, g, err
}

// TestSimulationShipsYAMLPassiveWithBaseAmountRefused: seed 003's Rule 10
// reaches a user: a simulation's own ships.yaml, merged over the built-in
// catalog, is refused when a PASSIVE power has a baseAmount, even a null
// one (the seed checks `!== undefined`), and the one message names the
// file, the ship and the power.
// issue 21 item 12
func TestSimulationShipsYAMLPassiveWithBaseAmountRefused(t *testing.T) {
	t.Parallel()
	for _, amount := range []string{"3", "null", "~", ""} {
		t.Run("baseAmount: "+amount, func(t *testing.T) {
			t.Parallel()
			dir, _, err := simWithShips(t, "ships:\n  - id: Mirror\n    cost: 2\n    health: 2\n    text: x\n    powers:\n"+
				"      - {phase: AUTOMATIC, timing: CONTINUOUS, effectType: HEAL, baseAmount: 1}\n"+
				"      - {phase: AUTOMATIC, timing: PASSIVE, baseAmount: "+amount+", specialLogic: {healingMultiplier: 2}}\n")
			want := filepath.Join(dir, ShipsFile) + `: ship "Mirror" power 1: PASSIVE powers must not have baseAmount (they are queries, not effects)`
			if err == nil || err.Error() != want {
				t.Errorf("Open: %v\nwant %s", err, want)
			}
		})
	}
	t.Run("without baseAmount it loads, merged over the built-in ships", func(t *testing.T) {
		t.Parallel()
		_, g, err := simWithShips(t, "ships:\n  - id: Mirror\n    cost: 2\n    health: 2\n    text: x\n    powers:\n"+
			"      - {phase: AUTOMATIC, timing: PASSIVE, specialLogic: {healingMultiplier: 3}}\n"+
			"  - id: Fighter\n    cost: 2\n    health: 3\n    text: y\n    powers:\n"+
			"      - {phase: AUTOMATIC, timing: CONTINUOUS, effectType: DEAL_DAMAGE, baseAmount: 5}\n")
		if err != nil {
			t.Fatal(err)
		}
		defs := g.cat.Definitions()
		builtin, _ := Catalog()
		if len(defs) != len(builtin.Definitions())+1 || defs[len(defs)-1].ID != "Mirror" {
			t.Errorf("want the built-in ships and Mirror after them, got %d ships, last %s", len(defs), defs[len(defs)-1].ID)
		}
		f, _ := g.cat.Get("Fighter")
		if f.Powers[0].Amount() != 5 || f.Text != "y" {
			t.Errorf("Fighter %+v: want the simulation's, dealing 5", f)
		}
		if _, ok := g.cat.Get("Zenith"); !ok {
			t.Error("a built-in ship the file does not name is gone")
		}
	})
	t.Run("other problems of the file", func(t *testing.T) {
		t.Parallel()
		for ships, want := range map[string]string{
			"ships:\n  - id: A\n    cots: 1\n": "field cots not found",
			"ships: []\n":                      "no ships",
			"ships:\n  - {id: A, cost: 1, health: 1}\n  - {id: A, cost: 1, health: 1}\n": `ship "A": defined twice`,
		} {
			dir, _, err := simWithShips(t, ships)
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.Join(dir, ShipsFile)) {
				t.Errorf("%q: %v, want the file named and %q", ships, err, want)
			}
		}
	})
}
