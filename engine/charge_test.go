package engine

import (
	"slices"
	"strings"
	"testing"
)

// TestNoChargeTimingChargePowersAreContinuous: seed 003 names five timings
// (CONTINUOUS, ONCE_ONLY_AUTOMATIC, UPON_DESTRUCTION, PASSIVE, and the
// EVENT hook ON_SHIP_COMPLETED); there is no CHARGE timing. A charge power
// is a CONTINUOUS power of FIRST_STRIKE or SIMULTANEOUS_DECLARATION: checked
// in its phase every turn while the ship is alive, it fires each time its
// owner spends one of the ship's charges on it, and only then.
// issue 21 item 11
func TestNoChargeTimingChargePowersAreContinuous(t *testing.T) {
	t.Parallel()
	if want := []Timing{Continuous, OnceOnly, UponDestruction, OnShipCompleted, Passive}; !slices.Equal(Timings, want) {
		t.Errorf("timings %v, want the seed's %v", Timings, want)
	}
	for _, p := range []PowerPhase{FirstStrike, SimultaneousDeclaration} {
		if err := Allowed(p, "CHARGE"); err == nil || !strings.Contains(err.Error(), `unknown timing "CHARGE"`) {
			t.Errorf("%s + CHARGE: %v, want an unknown timing", p, err)
		}
		if err := Allowed(p, Continuous); err != nil {
			t.Errorf("%s + CONTINUOUS (a charge power): %v", p, err)
		}
		for _, tm := range []Timing{OnceOnly, UponDestruction, OnShipCompleted, Passive} {
			notAllowed(t, p, tm)
		}
	}
	if _, err := NewCatalog([]Definition{{ID: "Gun", Cost: 1, Health: 3, Charges: 1, Powers: []Power{
		{Phase: FirstStrike, Timing: "CHARGE", Effect: DealDamage, BaseAmount: amt(2)}}}}, nil); err == nil {
		t.Error("a catalog with timing CHARGE loaded")
	}

	gun := Definition{ID: "Gun", Cost: 1, Health: 3, Charges: 2, Powers: []Power{
		{Phase: FirstStrike, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(2), Logic: Logic{Target: TargetChosen}}}}
	r := newRig(t, gun)
	sh := r.place("p1", "Gun", 0)
	fireOn := map[int]bool{1: true, 3: true, 4: true}
	r.d.declare = func(s *State, _ PowerPhase, _ string, opts []ChargeOption) []Declaration {
		if !fireOn[s.Turn] {
			return nil
		}
		return []Declaration{{Ship: opts[0].Ship, Target: TargetOpponent}}
	}
	for range 4 {
		r.turn()
	}
	fired := r.steps(StepFired, sh.ID)
	if len(fired) != 2 || fired[0].Turn != 1 || fired[1].Turn != 3 {
		t.Fatalf("fired %+v, want on turns 1 and 3 (declared), not 2 (not declared) nor 4 (no charge left)", fired)
	}
	for _, tr := range fired {
		if tr.Timing != Continuous || tr.Phase != FirstStrike {
			t.Errorf("fired as %s in %s, want CONTINUOUS in FIRST_STRIKE", tr.Timing, tr.Phase)
		}
	}
	if sh.Charges != 0 || r.s.Player("p2").Health != 26 {
		t.Errorf("charges %d, p2 health %d; want 0 and 30-2-2", sh.Charges, r.s.Player("p2").Health)
	}
	if got := r.d.asked; slices.Contains(got, "FIRST_STRIKE p2") {
		t.Errorf("asked %v: p2 has no charge power and is readied unasked", got)
	}
}
