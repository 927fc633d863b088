package engine

import (
	"errors"
	"strings"
	"testing"
)

// TestPassiveBaseAmountRejected: Rule 10, with the seed's text, naming the
// ship and the power's index.
func TestPassiveBaseAmountRejected(t *testing.T) {
	t.Parallel()
	_, err := NewCatalog([]Definition{ship("Leviathan", 8, 10,
		Power{Phase: Automatic, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(2)},
		Power{Phase: DiceRoll, Timing: Passive, BaseAmount: amt(6), Logic: Logic{DiceOverride: 6}},
	)}, nil)
	var de *DefinitionError
	if !errors.As(err, &de) {
		t.Fatalf("err %v, want a *DefinitionError", err)
	}
	if de.Ship != "Leviathan" || de.Power != 1 {
		t.Errorf("error names ship %q power %d, want Leviathan 1", de.Ship, de.Power)
	}
	want := `ship "Leviathan" power 1: PASSIVE powers must not have baseAmount (they are queries, not effects)`
	if err.Error() != want {
		t.Errorf("err %q\nwant %q", err, want)
	}
}

func TestValidateDefinitions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		def  Definition
		want string
	}{
		{"upon destruction outside EVENT", ship("A", 1, 1, Power{Phase: Automatic, Timing: UponDestruction, Effect: GainLines, BaseAmount: amt(1)}),
			"their phase must be EVENT"},
		{"continuous in EVENT", ship("A", 1, 1, Power{Phase: Event, Timing: Continuous, Effect: GainLines, BaseAmount: amt(1)}),
			"EVENT is not a phase"},
		{"once only before ships are built", ship("A", 1, 1, Power{Phase: DiceRoll, Timing: OnceOnly, Effect: GainLines, BaseAmount: amt(1)}),
			"could never fire"},
		{"passive in DRAWING", ship("A", 1, 1, Power{Phase: Drawing, Timing: Passive, Logic: Logic{HealingMultiplier: 2}}),
			"PASSIVE powers are queried in"},
		{"passive with an effect", ship("A", 1, 1, Power{Phase: PassivePhase, Timing: Passive, Effect: Heal, Logic: Logic{ProtectsShips: true}}),
			"PASSIVE powers have no effectType"},
		{"passive that changes nothing", ship("A", 1, 1, Power{Phase: PassivePhase, Timing: Passive}),
			"PASSIVE power changes nothing"},
		{"conditional into custom", ship("A", 1, 1, Power{Phase: Automatic, Timing: Continuous, Effect: Conditional,
			Logic: Logic{Condition: &Condition{When: DiceAtLeast, Value: 3, Then: Outcome{Effect: Custom}, Else: Outcome{Effect: Heal, Amount: 1}}}}),
			"CONDITIONAL resolves into standard effects only"},
		{"custom without handler", ship("A", 1, 1, Power{Phase: Automatic, Timing: Continuous, Effect: Custom, Logic: Logic{CustomID: "nope"}}),
			`CUSTOM logic "nope" has no handler`},
		{"build an unknown ship", ship("A", 1, 1, Power{Phase: Automatic, Timing: Continuous, Effect: BuildShip, BaseAmount: amt(1), Logic: Logic{Ship: "Ghost"}}),
			`builds ship "Ghost"`},
		{"charge power without charges", ship("A", 1, 1, Power{Phase: FirstStrike, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(1)}),
			"has a charge power (FIRST_STRIKE or SIMULTANEOUS_DECLARATION) but no charges"},
		{"a chosen target outside the charge phases", Definition{ID: "A", Cost: 1, Health: 1, Charges: 1, Powers: []Power{{Phase: Automatic, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(1), Logic: Logic{Target: TargetChosen}}}},
			"only charge powers (FIRST_STRIKE or SIMULTANEOUS_DECLARATION) choose their target"},
		{"standard effect without amount", ship("A", 1, 1, Power{Phase: Automatic, Timing: Continuous, Effect: Heal}),
			"HEAL needs a baseAmount"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewCatalog([]Definition{tt.def}, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %v, want it to say %q", err, tt.want)
			}
		})
	}
}

// TestScheduleOnlyIterablePhases: EVENT, DICE_MANIPULATION and PASSIVE are
// not phases; a game that schedules one does not start.
func TestScheduleOnlyIterablePhases(t *testing.T) {
	t.Parallel()
	cat, err := NewCatalog(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []PowerPhase{Event, DiceManipulation, PassivePhase} {
		t.Run(string(p), func(t *testing.T) {
			if p.Iterable() {
				t.Errorf("%s is iterable", p)
			}
			if _, err := New(cat, append(Scheduled[:2:2], p), nil); err == nil || !strings.Contains(err.Error(), "not an iterable phase") {
				t.Errorf("New with %s: %v", p, err)
			}
		})
	}
	if len(Scheduled) != 9 || Scheduled[0] != DiceRoll || Scheduled[8] != Automatic {
		t.Errorf("Scheduled = %v", Scheduled)
	}
}
