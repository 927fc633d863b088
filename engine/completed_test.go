package engine

import (
	"context"
	"strings"
	"testing"
)

// TestOnShipCompletedFiresForPowerBuiltShips holds seed 003's
// ON_SHIP_COMPLETED ("Dreadnought triggers when ships built"): the hook of
// a ship fires whenever another ship of its owner is completed, whether
// the player built it in DRAWING or a power made it (a scheduled BUILD_SHIP,
// an UPON_DESTRUCTION one); not for the ship itself, not for the
// opponent's ships.
// issue 21 item 10
func TestOnShipCompletedFiresForPowerBuiltShips(t *testing.T) {
	t.Parallel()
	dread := ship("Dread", 6, 8, Power{Phase: Event, Timing: OnShipCompleted, Effect: DealDamage, BaseAmount: amt(1)})
	pawn := ship("Pawn", 1, 1)
	maker := ship("Maker", 1, 3, Power{Phase: ShipsThatBuild, Timing: Continuous, Effect: BuildShip, BaseAmount: amt(2), Logic: Logic{Ship: "Pawn"}})
	bomb := ship("Bomb", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: BuildShip, BaseAmount: amt(3), Logic: Logic{Ship: "Pawn"}})
	nest := ship("Nest", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: BuildShip, BaseAmount: amt(1), Logic: Logic{Ship: "Pawn"}})

	t.Run("ships a scheduled power makes", func(t *testing.T) {
		r := newRig(t, dread, pawn, maker, nest)
		r.place("p1", "Dread", 0)
		r.place("p1", "Maker", 0)
		r.place("p1", "Nest", 0)
		r.turn()
		// Two Pawns in SHIPS_THAT_BUILD, one in AUTOMATIC: 3 damage.
		if got := r.s.Player("p2").Health; got != 27 {
			t.Errorf("p2 health %d, want 30 - 3 (a damage per Pawn made)", got)
		}
		for _, tr := range r.steps(StepFired, "p1-1") {
			if tr.Timing != OnShipCompleted {
				t.Errorf("Dread fired %s, want ON_SHIP_COMPLETED", tr.Timing)
			}
		}
	})
	t.Run("ships made on a destruction", func(t *testing.T) {
		r := newRig(t, dread, pawn, bomb)
		r.place("p1", "Dread", 0)
		b := r.place("p1", "Bomb", 0)
		r.e.Destroy(r.s, b.ID)
		if got := r.s.Player("p2").Health; got != 27 {
			t.Errorf("p2 health %d, want 30 - 3 (the Bomb made 3 Pawns)", got)
		}
	})
	t.Run("ships a player builds, not the ship itself, not the opponent's", func(t *testing.T) {
		r := newRig(t, dread, pawn)
		r.s.Player("p1").Lines, r.s.Player("p2").Lines = 10, 10
		r.d.build = map[int]map[string]string{1: {"p1": "Dread", "p2": "Pawn"}, 2: {"p1": "Pawn"}}
		r.turn()
		if r.fired("p1-1") != 0 || r.s.Player("p2").Health != 30 {
			t.Errorf("the Dread fired %d times on turn 1 (its own build, the opponent's Pawn)", r.fired("p1-1"))
		}
		r.turn()
		if r.fired("p1-1") != 1 || r.s.Player("p2").Health != 29 {
			t.Errorf("the Dread fired %d times when p1 built a Pawn, p2 health %d; want once, 29", r.fired("p1-1"), r.s.Player("p2").Health)
		}
	})
	t.Run("a completion hook may not make ships", func(t *testing.T) {
		loop := ship("Loop", 1, 1, Power{Phase: Event, Timing: OnShipCompleted, Effect: BuildShip, BaseAmount: amt(1), Logic: Logic{Ship: "Loop"}})
		if _, err := NewCatalog([]Definition{loop}, nil); err == nil || !strings.Contains(err.Error(), completionBuilds) {
			t.Errorf("catalog error %v, want %q", err, completionBuilds)
		}
		cat, err := NewCatalog([]Definition{pawn, ship("Sly", 1, 1, Power{Phase: Event, Timing: OnShipCompleted, Effect: Custom, Logic: Logic{CustomID: "more"}})}, []string{"more"})
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(cat, Scheduled, map[string]CustomFunc{"more": func(*State, *Ship, Modifiers) []Effect {
			return []Effect{{Type: BuildShip, Amount: 1, Ship: "Pawn"}}
		}})
		if err != nil {
			t.Fatal(err)
		}
		s := NewState(30, "p1", "p2")
		e.create(s, "p1", "Sly")
		s.Player("p1").Lines = 5
		d := &decider{build: map[int]map[string]string{1: {"p1": "Pawn"}}}
		err = e.Turn(context.Background(), s, d, func() int { return 1 })
		if err == nil || !strings.Contains(err.Error(), completionBuilds) {
			t.Errorf("turn error %v, want %q", err, completionBuilds)
		}
	})
}
