package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// automaticCatalog is a catalog of AUTOMATIC powers only, so that a turn
// with no builds changes the state in AUTOMATIC alone.
func automaticCatalog() []Definition {
	return []Definition{
		ship("Defender", 2, 4, Power{Phase: Automatic, Timing: Continuous, Effect: Heal, BaseAmount: amt(3)}),
		ship("Fighter", 2, 3, Power{Phase: Automatic, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(2)}),
		ship("Liner", 1, 2, Power{Phase: Automatic, Timing: Continuous, Effect: GainLines, BaseAmount: amt(1)}),
		ship("Loaded", 1, 2, Power{Phase: Automatic, Timing: Continuous, Effect: SetDice, BaseAmount: amt(4)}),
		ship("Lucky", 1, 2, Power{Phase: Automatic, Timing: Continuous, Effect: SetDice, BaseAmount: amt(2)}),
		ship("Science", 3, 3, Power{Phase: Automatic, Timing: Passive, Logic: Logic{HealingMultiplier: 2}}),
		ship("Ark", 6, 6, Power{Phase: Automatic, Timing: Continuous, Effect: Custom, Logic: Logic{CustomID: "two_lines"}}),
		ship("Nest", 3, 3, Power{Phase: Automatic, Timing: Continuous, Effect: BuildShip, BaseAmount: amt(1), Logic: Logic{Ship: "Liner"}}),
	}
}

// outcome is what a turn left, independent of the order of State.Ships.
func outcome(s *State) string {
	out := fmt.Sprintf("turn %d;", s.Turn)
	for _, p := range s.Players {
		out += fmt.Sprintf(" %s health %d lines %d dice %d;", p.ID, p.Health, p.Lines, p.Dice)
	}
	ships := make([]string, 0, len(s.Ships))
	for _, sh := range s.Ships {
		ships = append(ships, fmt.Sprintf("%s %s %s %d %v", sh.ID, sh.Owner, sh.Def, sh.Health, sh.Destroyed))
	}
	slices.Sort(ships)
	return fmt.Sprint(out, ships)
}

// TestAutomaticEffectsResolveSimultaneously holds seed 003's "AUTOMATIC -
// Continuous effects, resolved simultaneously": every AUTOMATIC effect of
// a turn is computed from the state at the start of the phase and all
// apply together, so the order in which the ships were made changes
// nothing.
// issue 21 item 9
func TestAutomaticEffectsResolveSimultaneously(t *testing.T) {
	t.Parallel()
	t.Run("the issue's example: a Defender at 1 health against two Fighters", func(t *testing.T) {
		// Applied one by one and clamped each time, p1 ended at 3 when the
		// Fighters came first (1-2 -> 0, -2 -> 0, +3 -> 3) and at 0 when
		// the Defender did; together it is 1+3-2-2 = 0 either way.
		for _, defenderFirst := range []bool{true, false} {
			r := newRig(t, automaticCatalog()...)
			if defenderFirst {
				r.place("p1", "Defender", 0)
			}
			r.place("p2", "Fighter", 0)
			r.place("p2", "Fighter", 0)
			if !defenderFirst {
				r.place("p1", "Defender", 0)
			}
			r.s.Player("p1").Health = 1
			r.turn()
			if got := r.s.Player("p1").Health; got != 0 {
				t.Errorf("Defender made first %v: p1 health %d, want 1+3-4 = 0", defenderFirst, got)
			}
			settled := r.steps(StepSettled, "")
			if len(settled) != 1 || settled[0].Player != "p1" || settled[0].Amount != -1 || settled[0].Phase != Automatic {
				t.Errorf("settled %+v, want p1's health moving once by -1 in AUTOMATIC", settled)
			}
		}
	})
	t.Run("healing is clamped once, after the damage", func(t *testing.T) {
		r := newRig(t, automaticCatalog()...)
		r.place("p1", "Defender", 0)
		r.place("p2", "Fighter", 0)
		r.s.Player("p1").Health = 29 // max 30: 29+3-2 = 30, not min(30, 32)-2 = 28
		r.turn()
		if got := r.s.Player("p1").Health; got != 30 {
			t.Errorf("p1 health %d, want 30", got)
		}
	})
	t.Run("every permutation of the ships gives the same outcome", func(t *testing.T) {
		defs := automaticCatalog()
		for seed := range uint64(300) {
			r := rand.New(rand.NewPCG(seed, 21))
			base := newRig(t, defs...)
			for range 1 + r.IntN(8) {
				owner := []string{"p1", "p2"}[r.IntN(2)]
				base.place(owner, defs[r.IntN(len(defs))].ID, 0)
			}
			for _, p := range base.s.Players {
				p.Health = 1 + r.IntN(30)
				p.Lines = r.IntN(5)
			}
			var want string
			for k := range 6 {
				run := newRig(t, defs...)
				run.s = base.s.Clone()
				if k > 0 {
					r.Shuffle(len(run.s.Ships), func(i, j int) { run.s.Ships[i], run.s.Ships[j] = run.s.Ships[j], run.s.Ships[i] })
				}
				run.dice = []int{1, 1}
				run.turn()
				got := outcome(run.s)
				if k == 0 {
					want = got
				} else if got != want {
					t.Fatalf("seed %d: ship order %v gave\n%s\nwant\n%s", seed, shipIDs(run.s), got, want)
				}
			}
		}
	})
}

func shipIDs(s *State) []string {
	out := make([]string, len(s.Ships))
	for i, sh := range s.Ships {
		out[i] = sh.ID
	}
	return out
}
