package engine

import (
	"fmt"
	"slices"
)

// PowerPhase is when in a turn a power is checked (seed 003's ShipPowerPhase).
type PowerPhase string

// The scheduled phases, in turn order.
const (
	DiceRoll                PowerPhase = "DICE_ROLL"
	LineGeneration          PowerPhase = "LINE_GENERATION"
	ShipsThatBuild          PowerPhase = "SHIPS_THAT_BUILD"
	Drawing                 PowerPhase = "DRAWING"
	EndOfBuild              PowerPhase = "END_OF_BUILD"
	FirstStrike             PowerPhase = "FIRST_STRIKE"
	SimultaneousDeclaration PowerPhase = "SIMULTANEOUS_DECLARATION"
	ConditionalResponse     PowerPhase = "CONDITIONAL_RESPONSE"
	Automatic               PowerPhase = "AUTOMATIC"
)

// The phases that are not phases: hooks and modifiers, never scheduled.
const (
	Event            PowerPhase = "EVENT"
	DiceManipulation PowerPhase = "DICE_MANIPULATION"
	PassivePhase     PowerPhase = "PASSIVE"
)

// Scheduled lists the iterable phases in the order a turn plays them.
var Scheduled = []PowerPhase{DiceRoll, LineGeneration, ShipsThatBuild, Drawing, EndOfBuild,
	FirstStrike, SimultaneousDeclaration, ConditionalResponse, Automatic}

var hooks = []PowerPhase{Event, DiceManipulation, PassivePhase}

// Iterable reports whether p is a scheduled phase (EVENT, DICE_MANIPULATION
// and PASSIVE are not).
func (p PowerPhase) Iterable() bool { return slices.Contains(Scheduled, p) }

func (p PowerPhase) known() bool { return p.Iterable() || slices.Contains(hooks, p) }

// Timing is how often and under which conditions a power fires (seed 003's
// PowerTiming).
type Timing string

// The timings.
const (
	// Continuous fires every turn during its phase while the ship is alive.
	Continuous Timing = "CONTINUOUS"
	// OnceOnly fires once, during its phase of the turn the ship was built,
	// even if the ship was destroyed before the phase resolved.
	OnceOnly Timing = "ONCE_ONLY_AUTOMATIC"
	// UponDestruction fires when the ship is destroyed, before it is marked
	// destroyed. Its phase is EVENT.
	UponDestruction Timing = "UPON_DESTRUCTION"
	// OnShipCompleted fires whenever another ship of its owner is completed:
	// built or upgraded in DRAWING, or made by a power (BUILD_SHIP). Its
	// phase is EVENT.
	OnShipCompleted Timing = "ON_SHIP_COMPLETED"
	// Passive never fires: it is a rule modifier, queried by validators.
	Passive Timing = "PASSIVE"
)

// Timings lists every timing, in the order of the matrix.
var Timings = []Timing{Continuous, OnceOnly, UponDestruction, OnShipCompleted, Passive}

// Declared reports whether p is a phase of declared charges (FIRST_STRIKE,
// SIMULTANEOUS_DECLARATION): its CONTINUOUS powers are charge powers, which
// fire each time their owner spends one of the ship's charges on them.
func (p PowerPhase) Declared() bool { return p == FirstStrike || p == SimultaneousDeclaration }

// Allowed reports whether a power of timing tm may have phase p: the seed's
// phase/timing matrix, completed for the phases it does not list. A nil
// error means the combination is meaningful; otherwise the error says why
// not, and a catalog holding it does not load.
func Allowed(p PowerPhase, tm Timing) error {
	if !p.known() {
		return fmt.Errorf("unknown phase %q", p)
	}
	if !slices.Contains(Timings, tm) {
		return fmt.Errorf("unknown timing %q", tm)
	}
	switch tm {
	case UponDestruction, OnShipCompleted:
		if p != Event {
			return fmt.Errorf("%s powers are event hooks: their phase must be EVENT, not %s", tm, p)
		}
		return nil
	case Passive:
		switch p {
		case DiceRoll, DiceManipulation, ShipsThatBuild, Automatic, PassivePhase:
			return nil
		}
		return fmt.Errorf("PASSIVE powers are queried in DICE_ROLL, DICE_MANIPULATION, SHIPS_THAT_BUILD, AUTOMATIC or PASSIVE, not %s", p)
	}
	// CONTINUOUS and ONCE_ONLY_AUTOMATIC run in scheduled phases only.
	if !p.Iterable() {
		return fmt.Errorf("%s is not a phase (it is never scheduled): a %s power there would never run", p, tm)
	}
	if p.Declared() && tm == OnceOnly {
		return fmt.Errorf("%s holds charge powers, which fire when a charge is declared: they are CONTINUOUS, not ONCE_ONLY_AUTOMATIC", p)
	}
	if tm == OnceOnly && slices.Index(Scheduled, p) < slices.Index(Scheduled, ShipsThatBuild) {
		return fmt.Errorf("ONCE_ONLY_AUTOMATIC in %s could never fire: ships are built after it", p)
	}
	return nil
}
