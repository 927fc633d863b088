package engine

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// The seed's implementation checklist, one test per section of it and one
// subtest per item, in the seed's order; these ships serve several items.
var (
	gunDef = Definition{ID: "Gun", Cost: 1, Health: 4, Charges: 2, Powers: []Power{
		{Phase: SimultaneousDeclaration, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(4), Logic: Logic{Target: TargetChosen}}}}
	fastDef = Definition{ID: "Fast", Cost: 1, Health: 4, Charges: 1, Powers: []Power{
		{Phase: FirstStrike, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(1)}}}
	healerDef = ship("Healer", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Heal, BaseAmount: amt(3)})
	levDef    = ship("Lev", 1, 5, Power{Phase: DiceRoll, Timing: Passive, Logic: Logic{DiceOverride: 6}})
	bombDef   = ship("Bomb", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: BuildShip, BaseAmount: amt(2), Logic: Logic{Ship: "Healer"}})
)

// TestChecklistPhaseEngine is the checklist's phase engine: phases,
// timings and queries.
func TestChecklistPhaseEngine(t *testing.T) {
	t.Parallel()
	t.Run("only iterate scheduled phases", func(t *testing.T) {
		r := newRig(t, bombDef, healerDef)
		r.turn()
		if got := phasesOf(r.trace); !slices.Equal(got, Scheduled) {
			t.Errorf("phases %v, want %v", got, Scheduled)
		}
	})
	t.Run("check timing during phase execution", func(t *testing.T) {
		r := newRig(t, continuousLines(EndOfBuild))
		r.place("p1", "Lines", 0)
		r.turn()
		fired := r.steps(StepFired, "p1-1")
		if len(fired) != 1 || fired[0].Phase != EndOfBuild || fired[0].Timing != Continuous {
			t.Errorf("fired %+v, want once in END_OF_BUILD", fired)
		}
	})
	t.Run("query PassiveModifiers during DICE_ROLL", func(t *testing.T) {
		r := newRig(t, levDef)
		r.place("p1", "Lev", 0)
		r.turn()
		q := r.steps(StepQuery, "p1-1")
		if len(q) == 0 || q[0].Phase != DiceRoll || r.s.Player("p1").Dice != 6 {
			t.Errorf("queries %+v, dice %d", q, r.s.Player("p1").Dice)
		}
	})
}

// TestChecklistCharges is the rest of the checklist's phase engine: the
// players' charges, declared together or first.
func TestChecklistCharges(t *testing.T) {
	t.Parallel()
	t.Run("buffer actions during SIMULTANEOUS_DECLARATION", func(t *testing.T) {
		r := newRig(t, gunDef)
		r.place("p1", "Gun", 0)
		r.s.Turn = 1
		b := r.e.NewBuffer(r.s, SimultaneousDeclaration)
		if err := b.Submit("p1", []Declaration{{Ship: "p1-1", Target: TargetOpponent}}); err != nil {
			t.Fatal(err)
		}
		if r.s.Player("p2").Health != 30 || r.s.Ship("p1-1").Charges != 2 {
			t.Errorf("a buffered declaration changed the state")
		}
		if err := r.e.Reveal(b); !errors.Is(err, ErrNotReady) {
			t.Errorf("Reveal before p2 is ready: %v, want ErrNotReady", err)
		}
		if r.s.Player("p2").Health != 30 {
			t.Errorf("Reveal before all are ready changed the state")
		}
	})
	t.Run("wait for both players ready before executing", func(t *testing.T) {
		g := gunDef
		g.Powers = []Power{gunDef.Powers[0]}
		g.Powers[0].Persists = true
		r := newRig(t, g)
		r.place("p1", "Gun", 0)
		r.place("p2", "Gun", 0)
		r.s.Turn = 1
		b := r.e.NewBuffer(r.s, SimultaneousDeclaration)
		_ = b.Submit("p1", []Declaration{{Ship: "p1-1", Target: "p2-2"}})
		if err := b.Submit("p2", []Declaration{{Ship: "p2-2", Target: "p1-1"}}); err != nil {
			t.Fatal(err)
		}
		if err := r.e.Reveal(b); err != nil {
			t.Fatal(err)
		}
		// Both fire: simultaneous, each destroys the other.
		if !r.s.Ship("p1-1").Destroyed || !r.s.Ship("p2-2").Destroyed {
			t.Errorf("want both guns destroyed by each other's simultaneous charge")
		}
	})
	t.Run("auto-ready players without FIRST_STRIKE charges", func(t *testing.T) {
		r := newRig(t, fastDef)
		r.place("p1", "Fast", 0)
		r.d.declare = func(_ *State, _ PowerPhase, _ string, opts []ChargeOption) []Declaration {
			return []Declaration{{Ship: opts[0].Ship}}
		}
		r.turn()
		auto := r.steps(StepAutoReady, "")
		if len(auto) != 1 || auto[0].Player != "p2" {
			t.Errorf("auto-ready %+v, want p2 only", auto)
		}
		if !slices.Contains(r.d.asked, "FIRST_STRIKE p1") || slices.Contains(r.d.asked, "FIRST_STRIKE p2") {
			t.Errorf("asked %v: want p1 asked in FIRST_STRIKE and p2 not", r.d.asked)
		}
		if r.s.Player("p2").Health != 29 {
			t.Errorf("p2 health %d, want 29", r.s.Player("p2").Health)
		}
	})
}

// TestChecklistPowerExecutor is the checklist's power executor.
func TestChecklistPowerExecutor(t *testing.T) {
	t.Parallel()
	t.Run("check timing before executing", func(t *testing.T) {
		r := newRig(t, onceLines(EndOfBuild))
		r.place("p1", "Once", 0) // built before this turn
		r.turn()
		if n := r.fired("p1-1"); n != 0 {
			t.Errorf("a ONCE_ONLY power of a ship built earlier fired %d times", n)
		}
	})
	t.Run("skip CONTINUOUS if ship destroyed", func(t *testing.T) {
		r := newRig(t, healerDef)
		sh := r.place("p1", "Healer", 0)
		r.s.Player("p1").Health = 10
		r.e.Destroy(r.s, sh.ID)
		r.turn()
		if r.fired(sh.ID) != 0 || r.s.Player("p1").Health != 10 {
			t.Errorf("a destroyed Healer healed")
		}
	})
	t.Run("execute ONCE_ONLY even if ship destroyed later", func(t *testing.T) {
		// Built in DRAWING, destroyed in END_OF_BUILD by a hostile power:
		// its AUTOMATIC ONCE_ONLY still fires, and its DRAWING one stays.
		r := newRig(t, ship("Once", 1, 1,
			Power{Phase: Drawing, Timing: OnceOnly, Effect: GainLines, BaseAmount: amt(1)},
			Power{Phase: Automatic, Timing: OnceOnly, Effect: GainLines, BaseAmount: amt(10)}))
		r.d.build = map[int]map[string]string{1: {"p1": "Once"}}
		r.dice = []int{1, 1}
		r.e.Observer = func(tr Trace) {
			r.trace = append(r.trace, tr)
			if tr.Step == StepPhase && tr.Phase == EndOfBuild {
				r.e.Destroy(r.s, "p1-1")
			}
		}
		r.turn()
		if !r.s.Ship("p1-1").Destroyed || r.fired("p1-1") != 2 || r.s.Player("p1").Lines != 1-1+1+10 {
			t.Errorf("fired %d, lines %d, destroyed %v; want 2 firings, 11 lines, destroyed", r.fired("p1-1"), r.s.Player("p1").Lines, r.s.Ship("p1-1").Destroyed)
		}
		r.turn()
		if r.fired("p1-1") != 2 || len(r.s.Ship("p1-1").Usage) != 2 {
			t.Errorf("usage %+v: want the two firings kept", r.s.Ship("p1-1").Usage)
		}
	})
	t.Run("never execute PASSIVE", func(t *testing.T) {
		r := newRig(t, levDef)
		sh := r.place("p1", "Lev", 0)
		for range 3 {
			r.turn()
		}
		if _, err := r.e.fire(r.s, sh, 0, levDef.Powers[0]); err == nil {
			t.Errorf("fire executed a PASSIVE power")
		}
		if r.fired(sh.ID) != 0 {
			t.Errorf("a PASSIVE power fired")
		}
	})
	t.Run("fire UPON_DESTRUCTION in handleShipDestroyed", func(t *testing.T) {
		r := newRig(t, bombDef, healerDef, gunDef)
		r.place("p1", "Bomb", 0)
		r.place("p2", "Gun", 0)
		r.d.declare = func(_ *State, _ PowerPhase, player string, opts []ChargeOption) []Declaration {
			if player == "p2" {
				return []Declaration{{Ship: "p2-2", Target: "p1-1"}}
			}
			return nil
		}
		r.turn()
		if !r.s.Ship("p1-1").Destroyed || len(r.s.Fleet("p1")) != 2 {
			t.Errorf("Bomb destroyed %v, p1 fleet %d; want the Bomb gone and 2 Healers", r.s.Ship("p1-1").Destroyed, len(r.s.Fleet("p1")))
		}
	})
}

// TestChecklistDestruction is the checklist's destruction handler.
func TestChecklistDestruction(t *testing.T) {
	t.Parallel()
	t.Run("fire UPON_DESTRUCTION before marking destroyed", func(t *testing.T) {
		r := newRig(t, bombDef, healerDef)
		sh := r.place("p1", "Bomb", 0)
		var destroyedWhenFired = true
		r.e.Observer = func(tr Trace) {
			r.trace = append(r.trace, tr)
			if tr.Step == StepFired && tr.Ship == sh.ID {
				destroyedWhenFired = sh.Destroyed
			}
		}
		r.e.Destroy(r.s, sh.ID)
		marked := index(r.trace, func(tr Trace) bool { return tr.Step == StepMarked })
		fired := index(r.trace, func(tr Trace) bool { return tr.Step == StepFired })
		destroyed := index(r.trace, func(tr Trace) bool { return tr.Step == StepDestroyed })
		if !(marked >= 0 && marked < fired && fired < destroyed) || destroyedWhenFired {
			t.Errorf("order marked %d fired %d destroyed %d (destroyed when fired: %v)", marked, fired, destroyed, destroyedWhenFired)
		}
	})
	t.Run("queue effects before removing ship", func(t *testing.T) {
		r := newRig(t, bombDef, healerDef)
		sh := r.place("p1", "Bomb", 0)
		built := 0
		r.e.Observer = func(tr Trace) {
			if tr.Step == StepDestroyed {
				for _, sh := range r.s.Fleet("p1") {
					if sh.Def == "Healer" {
						built++
					}
				}
			}
		}
		r.e.Destroy(r.s, sh.ID)
		if built != 2 {
			t.Errorf("%d Healers when the Bomb was marked destroyed, want 2", built)
		}
	})
	t.Run("persist effects even after ship removed", func(t *testing.T) {
		r := newRig(t, bombDef, healerDef)
		sh := r.place("p1", "Bomb", 0)
		r.e.Destroy(r.s, sh.ID)
		r.s.Player("p1").Health = 10
		r.turn()
		if len(r.s.Fleet("p1")) != 2 || r.s.Player("p1").Health != 16 {
			t.Errorf("fleet %d health %d: want the 2 Healers made on destruction to stay and heal 6", len(r.s.Fleet("p1")), r.s.Player("p1").Health)
		}
	})
	t.Run("check persistsIfSourceDestroyed flag", func(t *testing.T) {
		for _, persists := range []bool{true, false} {
			g := gunDef
			g.Powers = []Power{gunDef.Powers[0]}
			g.Powers[0].Persists = persists
			r := newRig(t, g)
			r.place("p1", "Gun", 0)
			r.place("p2", "Gun", 0)
			r.d.declare = func(_ *State, _ PowerPhase, player string, opts []ChargeOption) []Declaration {
				if player == "p1" {
					return []Declaration{{Ship: "p1-1", Target: "p2-2"}}
				}
				return []Declaration{{Ship: "p2-2", Target: TargetOpponent}}
			}
			r.turn()
			want := 30
			if persists {
				want = 26
			}
			if got := r.s.Player("p1").Health; got != want {
				t.Errorf("persists %v: p1 health %d, want %d", persists, got, want)
			}
		}
	})
}

// TestChecklistPassiveModifiers is the checklist's passive modifiers.
func TestChecklistPassiveModifiers(t *testing.T) {
	t.Parallel()
	t.Run("passives never execute effects", func(t *testing.T) {
		r := newRig(t, levDef)
		r.place("p1", "Lev", 0)
		before := r.s.Clone()
		m := r.e.Modifiers(r.s)
		m.DiceOverride("p1")
		m.HealingMultiplier("p1")
		m.CostReduction("p1")
		m.Protected("p1-1")
		m.Reroll("p1", 1)
		if len(r.steps(StepApplied, "")) != 0 || r.s.Player("p1").Dice != before.Player("p1").Dice {
			t.Errorf("a query applied an effect")
		}
	})
	t.Run("passives return query results only", func(t *testing.T) {
		r := newRig(t, levDef)
		r.place("p1", "Lev", 0)
		m := r.e.Modifiers(r.s)
		if v, ok := m.DiceOverride("p1"); v != 6 || !ok {
			t.Errorf("DiceOverride(p1) = %d, %v", v, ok)
		}
		if _, ok := m.DiceOverride("p2"); ok {
			t.Errorf("p2 has no Leviathan")
		}
	})
	t.Run("passives are called by validators", func(t *testing.T) {
		r := newRig(t, ship("Hive", 3, 3, Power{Phase: ShipsThatBuild, Timing: Passive, Logic: Logic{CostReduction: 1}}), ship("Big", 4, 3))
		r.place("p1", "Hive", 0)
		r.s.Player("p1").Lines = 3
		if err := r.e.CheckBuild(r.s, "p1", BuildChoice{Def: "Big"}); err != nil {
			t.Errorf("Big costs 3 with a Hive: %v", err)
		}
		r.s.Player("p2").Lines = 3
		var ce *ChoiceError
		if err := r.e.CheckBuild(r.s, "p2", BuildChoice{Def: "Big"}); !errors.As(err, &ce) || ce.Reason != "costs 4 lines, you have 3" {
			t.Errorf("p2 without a Hive: %v", err)
		}
	})
	t.Run("passives check the ship is alive", func(t *testing.T) {
		r := newRig(t, levDef)
		sh := r.place("p1", "Lev", 0)
		r.e.Destroy(r.s, sh.ID)
		r.dice = []int{2, 2}
		r.turn()
		if r.s.Player("p1").Dice != 2 {
			t.Errorf("a destroyed Leviathan forced dice %d", r.s.Player("p1").Dice)
		}
	})
}

// TestChecklistEffects is the checklist's effects.
func TestChecklistEffects(t *testing.T) {
	t.Parallel()
	t.Run("CONDITIONAL resolves into a standard effect", func(t *testing.T) {
		r := newRig(t, ship("Swarm", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Conditional,
			Logic: Logic{Condition: &Condition{When: HealthBelowOpponent, Then: Outcome{Effect: Heal, Amount: 7}, Else: Outcome{Effect: Heal, Amount: 3}}}}))
		r.place("p1", "Swarm", 0)
		r.s.Player("p1").Health, r.s.Player("p2").Health = 10, 20
		r.turn()
		r.s.Player("p2").Health = 5
		r.turn()
		if got := r.s.Player("p1").Health; got != 20 {
			t.Errorf("health %d, want 10+7+3", got)
		}
		for _, tr := range r.steps(StepApplied, "p1-1") {
			if !tr.Effect.Standard() {
				t.Errorf("applied %s", tr.Effect)
			}
		}
	})
	t.Run("CUSTOM must resolve into standard effects", func(t *testing.T) {
		cat, err := NewCatalog([]Definition{ship("Odd", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Custom, Logic: Logic{CustomID: "odd"}})}, []string{"odd"})
		if err != nil {
			t.Fatal(err)
		}
		e, err := New(cat, Scheduled, map[string]CustomFunc{"odd": func(*State, *Ship, Modifiers) []Effect { return []Effect{{Type: Conditional}} }})
		if err != nil {
			t.Fatal(err)
		}
		s := NewState(30, "p1", "p2")
		e.create(s, "p1", "Odd")
		err = e.Turn(context.Background(), s, &decider{}, func() int { return 1 })
		if !errors.Is(err, ErrNotStandard) {
			t.Errorf("err %v, want ErrNotStandard", err)
		}
		r := newRig(t, ship("Ark", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Custom, Logic: Logic{CustomID: "two_lines"}}))
		r.place("p1", "Ark", 0)
		r.dice = []int{1, 1}
		r.turn()
		if r.s.Player("p1").Lines != 3 {
			t.Errorf("lines %d, want 1 + 2 from the custom handler", r.s.Player("p1").Lines)
		}
	})
	t.Run("CONDITIONAL_RESPONSE runs only after charges", func(t *testing.T) {
		r := newRig(t, fastDef, ship("Resp", 1, 3, Power{Phase: ConditionalResponse, Timing: Continuous, Effect: GainLines, BaseAmount: amt(1)}))
		r.place("p1", "Resp", 0)
		r.turn()
		if r.fired("p1-1") != 0 || len(r.steps(StepSkip, "")) != 1 {
			t.Errorf("ran without charges")
		}
		r.place("p2", "Fast", r.s.Turn)
		r.d.declare = func(_ *State, _ PowerPhase, _ string, opts []ChargeOption) []Declaration {
			return []Declaration{{Ship: opts[0].Ship}}
		}
		r.turn()
		if r.fired("p1-1") != 1 {
			t.Errorf("did not run after a charge")
		}
	})
}
