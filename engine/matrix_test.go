package engine

import (
	"testing"
)

// The seed's phase/timing matrix, one test per row and per column. A cell
// marked N/A or NOT A PHASE is refused when the catalog loads; every other
// cell is played.

// notAllowed checks that the catalog refuses a power of phase and timing.
func notAllowed(t *testing.T, p PowerPhase, tm Timing) {
	t.Helper()
	if err := Allowed(p, tm); err == nil {
		t.Errorf("%s + %s is allowed; the matrix says it is not", p, tm)
	}
}

func continuousLines(p PowerPhase) Definition {
	return ship("Lines", 1, 3, Power{Phase: p, Timing: Continuous, Effect: GainLines, BaseAmount: amt(1)})
}

func onceLines(p PowerPhase) Definition {
	return ship("Once", 1, 3, Power{Phase: p, Timing: OnceOnly, Effect: GainLines, BaseAmount: amt(1)})
}

// checkContinuous: a CONTINUOUS power of phase p fires on each of three
// turns, in p only.
func checkContinuous(t *testing.T, p PowerPhase) {
	t.Helper()
	r := newRig(t, continuousLines(p))
	sh := r.place("p1", "Lines", 0)
	for range 3 {
		r.turn()
	}
	got := r.steps(StepFired, sh.ID)
	if len(got) != 3 {
		t.Fatalf("fired %d times in 3 turns, want 3", len(got))
	}
	for _, tr := range got {
		if tr.Phase != p {
			t.Errorf("fired in %s, want %s", tr.Phase, p)
		}
	}
}

// checkOnceOnly: a ONCE_ONLY power of phase p fires on the build turn, in
// p, and never again.
func checkOnceOnly(t *testing.T, p PowerPhase) {
	t.Helper()
	r := newRig(t, onceLines(p))
	r.d.build = map[int]map[string]string{1: {"p1": "Once"}}
	r.dice = []int{1, 3}
	for range 3 {
		r.turn()
	}
	got := r.steps(StepFired, "p1-1")
	if len(got) != 1 || got[0].Turn != 1 || got[0].Phase != p {
		t.Errorf("fired %+v, want once, on turn 1, in %s", got, p)
	}
}

// checkPassiveQueried: a PASSIVE power is queried and never fires.
func checkPassiveQueried(t *testing.T, p PowerPhase, logic Logic, query string) {
	t.Helper()
	r := newRig(t, ship("Passive", 1, 3, Power{Phase: p, Timing: Passive, Logic: logic}), continuousLines(Automatic),
		ship("Healer", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Heal, BaseAmount: amt(1)}))
	r.place("p1", "Passive", 0)
	r.place("p1", "Lines", 0)
	r.place("p1", "Healer", 0)
	r.d.build = map[int]map[string]string{1: {"p1": "Lines"}}
	for range 2 {
		r.turn()
	}
	if n := r.fired("p1-1"); n != 0 {
		t.Errorf("a PASSIVE power fired %d times", n)
	}
	queried := false
	for _, tr := range r.steps(StepQuery, "p1-1") {
		queried = queried || tr.Query == query
	}
	if !queried {
		t.Errorf("never queried for %s", query)
	}
}

func TestMatrixRowDiceRoll(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS executes", func(t *testing.T) {
		r := newRig(t, ship("Loaded", 1, 3, Power{Phase: DiceRoll, Timing: Continuous, Effect: SetDice, BaseAmount: amt(5)}))
		r.place("p1", "Loaded", 0)
		r.dice = []int{1, 1}
		r.turn()
		if r.s.Player("p1").Dice != 5 || r.s.Player("p2").Dice != 1 {
			t.Errorf("dice %d and %d, want 5 (set) and 1", r.s.Player("p1").Dice, r.s.Player("p2").Dice)
		}
	})
	t.Run("ONCE_ONLY is N/A", func(t *testing.T) { notAllowed(t, DiceRoll, OnceOnly) })
	t.Run("UPON_DESTRUCTION is N/A", func(t *testing.T) { notAllowed(t, DiceRoll, UponDestruction) })
	t.Run("PASSIVE overrides the dice", func(t *testing.T) {
		checkPassiveQueried(t, DiceRoll, Logic{DiceOverride: 6}, "dice_override")
	})
}

func TestMatrixRowShipsThatBuild(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS executes", func(t *testing.T) { checkContinuous(t, ShipsThatBuild) })
	t.Run("ONCE_ONLY if built this turn", func(t *testing.T) {
		// A Maker builds a Once in SHIPS_THAT_BUILD: the new ship's
		// ONCE_ONLY power of that phase fires the same turn, once; an old
		// Once never fires.
		r := newRig(t, onceLines(ShipsThatBuild),
			ship("Maker", 1, 3, Power{Phase: ShipsThatBuild, Timing: Continuous, Effect: BuildShip, BaseAmount: amt(1), Logic: Logic{Ship: "Once"}}))
		old := r.place("p2", "Once", 0)
		r.place("p1", "Maker", 0)
		r.turn()
		r.turn()
		if n := r.fired(old.ID); n != 0 {
			t.Errorf("a Once built before turn 1 fired %d times", n)
		}
		for _, id := range []string{"p1-3", "p1-4"} {
			got := r.steps(StepFired, id)
			if len(got) != 1 || got[0].Turn != r.s.Ship(id).Built {
				t.Errorf("%s (built turn %d) fired %+v, want once on its build turn", id, r.s.Ship(id).Built, got)
			}
		}
	})
	t.Run("UPON_DESTRUCTION is N/A", func(t *testing.T) { notAllowed(t, ShipsThatBuild, UponDestruction) })
	t.Run("PASSIVE restricts builds", func(t *testing.T) {
		checkPassiveQueried(t, ShipsThatBuild, Logic{CostReduction: 1}, "cost_reduction")
	})
}

func TestMatrixRowDrawing(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS executes", func(t *testing.T) { checkContinuous(t, Drawing) })
	t.Run("ONCE_ONLY if built this turn", func(t *testing.T) { checkOnceOnly(t, Drawing) })
	t.Run("UPON_DESTRUCTION is N/A", func(t *testing.T) { notAllowed(t, Drawing, UponDestruction) })
	t.Run("PASSIVE is N/A", func(t *testing.T) { notAllowed(t, Drawing, Passive) })
}

func TestMatrixRowAutomatic(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS executes", func(t *testing.T) { checkContinuous(t, Automatic) })
	t.Run("ONCE_ONLY if built this turn", func(t *testing.T) { checkOnceOnly(t, Automatic) })
	t.Run("UPON_DESTRUCTION is N/A", func(t *testing.T) { notAllowed(t, Automatic, UponDestruction) })
	t.Run("PASSIVE multiplies", func(t *testing.T) {
		checkPassiveQueried(t, Automatic, Logic{HealingMultiplier: 2}, "healing_multiplier")
	})
}

func TestMatrixRowEvent(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS is not a phase", func(t *testing.T) { notAllowed(t, Event, Continuous) })
	t.Run("ONCE_ONLY is not a phase", func(t *testing.T) { notAllowed(t, Event, OnceOnly) })
	t.Run("UPON_DESTRUCTION executes on the event", func(t *testing.T) {
		r := newRig(t, ship("Bomb", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: GainLines, BaseAmount: amt(4)}))
		sh := r.place("p1", "Bomb", 0)
		for range 3 {
			r.turn()
		}
		if n := r.fired(sh.ID); n != 0 {
			t.Fatalf("fired %d times in 3 turns without being destroyed", n)
		}
		lines := r.s.Player("p1").Lines
		r.e.Destroy(r.s, sh.ID)
		if n := r.fired(sh.ID); n != 1 || r.s.Player("p1").Lines != lines+4 {
			t.Errorf("fired %d times, lines %d -> %d; want once, +4", n, lines, r.s.Player("p1").Lines)
		}
	})
	t.Run("PASSIVE is N/A", func(t *testing.T) { notAllowed(t, Event, Passive) })
}

func TestMatrixRowPassive(t *testing.T) {
	t.Parallel()
	t.Run("CONTINUOUS is not a phase", func(t *testing.T) { notAllowed(t, PassivePhase, Continuous) })
	t.Run("ONCE_ONLY is not a phase", func(t *testing.T) { notAllowed(t, PassivePhase, OnceOnly) })
	t.Run("UPON_DESTRUCTION is not a phase", func(t *testing.T) { notAllowed(t, PassivePhase, UponDestruction) })
	t.Run("PASSIVE is always queried", func(t *testing.T) {
		r := newRig(t, ship("Pool", 1, 3, Power{Phase: PassivePhase, Timing: Passive, Logic: Logic{ProtectsShips: true}}), continuousLines(Automatic))
		r.place("p1", "Pool", 0)
		other := r.place("p1", "Lines", 0)
		if r.e.Destroy(r.s, other.ID) || other.Health != 1 {
			t.Errorf("a protected ship was destroyed (health %d)", other.Health)
		}
		if len(r.steps(StepQuery, "p1-1")) == 0 || r.fired("p1-1") != 0 {
			t.Errorf("want the Pool queried and never fired: %+v", r.trace)
		}
	})
}

func TestMatrixColumnContinuous(t *testing.T) {
	t.Parallel()
	for _, p := range []PowerPhase{DiceRoll, LineGeneration, ShipsThatBuild, Drawing, EndOfBuild, Automatic} {
		t.Run(string(p), func(t *testing.T) { checkContinuous(t, p) })
	}
	t.Run("not while destroyed", func(t *testing.T) {
		r := newRig(t, continuousLines(Automatic))
		sh := r.place("p1", "Lines", 0)
		r.turn()
		r.e.Destroy(r.s, sh.ID)
		r.turn()
		if n := r.fired(sh.ID); n != 1 {
			t.Errorf("fired %d times, want 1 (not after destruction)", n)
		}
	})
	for _, p := range []PowerPhase{Event, DiceManipulation, PassivePhase} {
		t.Run("never in "+string(p), func(t *testing.T) { notAllowed(t, p, Continuous) })
	}
}

func TestMatrixColumnOnceOnly(t *testing.T) {
	t.Parallel()
	for _, p := range []PowerPhase{Drawing, EndOfBuild, Automatic} {
		t.Run(string(p), func(t *testing.T) { checkOnceOnly(t, p) })
	}
	for _, p := range []PowerPhase{DiceRoll, LineGeneration, Event, PassivePhase} {
		t.Run("never in "+string(p), func(t *testing.T) { notAllowed(t, p, OnceOnly) })
	}
}

func TestMatrixColumnUponDestruction(t *testing.T) {
	t.Parallel()
	for _, p := range Scheduled {
		t.Run("not in "+string(p), func(t *testing.T) { notAllowed(t, p, UponDestruction) })
	}
	t.Run("EVENT fires once, on destruction", func(t *testing.T) {
		r := newRig(t, ship("Bomb", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: DealDamage, BaseAmount: amt(5)}))
		sh := r.place("p1", "Bomb", 0)
		r.turn()
		r.e.Destroy(r.s, sh.ID)
		r.turn()
		r.e.Destroy(r.s, sh.ID) // already destroyed: nothing
		if n := r.fired(sh.ID); n != 1 || r.s.Player("p2").Health != 25 {
			t.Errorf("fired %d times, p2 health %d; want once, 25", n, r.s.Player("p2").Health)
		}
	})
}

func TestMatrixColumnPassive(t *testing.T) {
	t.Parallel()
	cases := []struct {
		phase PowerPhase
		logic Logic
		query string
	}{
		{DiceRoll, Logic{DiceOverride: 6}, "dice_override"},
		{DiceManipulation, Logic{RerollAtOrBelow: 3}, "reroll"},
		{ShipsThatBuild, Logic{CostReduction: 1}, "cost_reduction"},
		{Automatic, Logic{HealingMultiplier: 2}, "healing_multiplier"},
	}
	for _, c := range cases {
		t.Run(string(c.phase), func(t *testing.T) { checkPassiveQueried(t, c.phase, c.logic, c.query) })
	}
	for _, p := range []PowerPhase{LineGeneration, Drawing, EndOfBuild, FirstStrike, SimultaneousDeclaration, ConditionalResponse, Event} {
		t.Run("N/A in "+string(p), func(t *testing.T) { notAllowed(t, p, Passive) })
	}
}
