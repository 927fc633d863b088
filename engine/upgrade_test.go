package engine

import (
	"errors"
	"slices"
	"testing"
)

// TestDrawingBuildsOrUpgradesShips: seed 003's DRAWING is "Build/upgrade
// ships". A player may, instead of building a ship new, upgrade one of
// their ships in play of the kind it upgrades, paying the difference in
// cost; the old ship leaves play into the new one without being destroyed
// (no UPON_DESTRUCTION), and the new one is completed like a build: its
// ONCE_ONLY_AUTOMATIC DRAWING power fires and ON_SHIP_COMPLETED hooks fire.
// issue 21 item 11
func TestDrawingBuildsOrUpgradesShips(t *testing.T) {
	t.Parallel()
	fighter := ship("Fighter", 2, 3, Power{Phase: Event, Timing: UponDestruction, Effect: GainLines, BaseAmount: amt(9)})
	dread := ship("Dread", 6, 8, Power{Phase: Drawing, Timing: OnceOnly, Effect: GainLines, BaseAmount: amt(1)})
	dread.UpgradeOf = "Fighter"
	watcher := ship("Watcher", 1, 3, Power{Phase: Event, Timing: OnShipCompleted, Effect: DealDamage, BaseAmount: amt(1)})
	r := newRig(t, fighter, dread, watcher)
	old := r.place("p1", "Fighter", 0)
	r.place("p1", "Watcher", 0)
	other := r.place("p2", "Fighter", 0)
	r.s.Player("p1").Lines = 1 // + a die of 3: 4 lines, a Dread new costs 6

	r.s.Turn = 1
	opts := r.e.BuildOptions(r.s, "p1")
	if i := slices.IndexFunc(opts, func(o BuildOption) bool { return o.Def == "Dread" }); i >= 0 {
		t.Errorf("with 1 line: option %+v", opts[i])
	}
	r.s.Player("p1").Lines = 4
	opts = r.e.BuildOptions(r.s, "p1")
	if !slices.Contains(opts, BuildOption{Def: "Dread", Cost: 4, Upgrade: old.ID}) || slices.Contains(opts, BuildOption{Def: "Dread", Cost: 6}) {
		t.Errorf("options %+v: want the upgrade of %s at 6-2 = 4 and no new Dread", opts, old.ID)
	}
	for _, c := range []struct {
		choice BuildChoice
		why    string
	}{
		{BuildChoice{Def: "Dread", Upgrade: other.ID}, other.ID + " is not one of your ships in play"},
		{BuildChoice{Def: "Watcher", Upgrade: old.ID}, "it is built new, never upgraded into"},
		{BuildChoice{Def: "Dread", Upgrade: "p1-2"}, "it is an upgrade of a Fighter, and p1-2 is a Watcher"},
		{BuildChoice{Def: "Dread"}, "costs 6 lines, you have 4"},
	} {
		var ce *ChoiceError
		if err := r.e.CheckBuild(r.s, "p1", c.choice); !errors.As(err, &ce) || ce.Reason != c.why {
			t.Errorf("CheckBuild(%+v) = %v, want %q", c.choice, err, c.why)
		}
	}
	r.s.Turn = 0
	r.s.Player("p1").Lines = 1
	r.d.build = map[int]map[string]string{1: {"p1": "Dread"}}
	r.d.upgrade = map[int]map[string]string{1: {"p1": old.ID}}
	r.turn()

	up := r.s.Fleet("p1")[1]
	switch {
	case up.Def != "Dread" || up.Built != 1:
		t.Fatalf("fleet %v: want the Watcher and a Dread built on turn 1", r.s.Fleet("p1"))
	case old.Destroyed || old.UpgradedInto != up.ID || old.InPlay():
		t.Errorf("old Fighter %+v: want it out of play, upgraded into %s, not destroyed", *old, up.ID)
	case r.fired(old.ID) != 0:
		t.Errorf("the upgraded Fighter fired its UPON_DESTRUCTION: it was not destroyed")
	case r.fired(up.ID) != 1:
		t.Errorf("the Dread fired %d times, want its DRAWING ONCE_ONLY once", r.fired(up.ID))
	case r.s.Player("p1").Lines != 1+3-4+1:
		t.Errorf("lines %d, want 1 + 3 (die) - 4 (upgrade) + 1 (Dread)", r.s.Player("p1").Lines)
	case r.s.Player("p2").Health != 29:
		t.Errorf("p2 health %d: want the Watcher's ON_SHIP_COMPLETED for the upgrade", r.s.Player("p2").Health)
	}
	if got := r.s.InUpgrades("p1"); len(got) != 1 || got[0] != old {
		t.Errorf("in upgrades %v, want the old Fighter", got)
	}
	r.e.Destroy(r.s, up.ID)
	if got := r.s.InUpgrades("p1"); len(got) != 0 {
		t.Errorf("in upgrades %v after the Dread was destroyed: a destroyed upgrade takes its ships", got)
	}
}
