package engine

// Step names what a Trace records.
type Step string

// The steps an Observer sees.
const (
	StepPhase     Step = "phase"      // a scheduled phase starts
	StepSkip      Step = "skip"       // a scheduled phase has nothing to do (CONDITIONAL_RESPONSE without charges)
	StepRolled    Step = "rolled"     // a player's die, after modifiers (Amount)
	StepRerolled  Step = "rerolled"   // DICE_MANIPULATION rerolled a die (Amount: the die it replaced)
	StepQuery     Step = "query"      // a PASSIVE power was queried (Query names the question)
	StepFired     Step = "fired"      // a power executed (resolved into effects)
	StepApplied   Step = "applied"    // a standard effect changed the state (Amount: the actual change; in AUTOMATIC, the effect's share, see StepSettled)
	StepDropped   Step = "dropped"    // an effect was dropped: its source was destroyed before it applied
	StepSettled   Step = "settled"    // effects applied together moved a player's health once (Amount: the actual change, after clamping)
	StepBuilt     Step = "built"      // a ship came into play
	StepUpgraded  Step = "upgraded"   // a ship (Ship, Def) left play, upgraded into Target, which came into play just before
	StepMarked    Step = "marked"     // lethal damage: the ship is marked for destruction
	StepProtected Step = "protected"  // lethal damage prevented by a passive (the ship stays at 1)
	StepDestroyed Step = "destroyed"  // the ship is marked destroyed, after its UPON_DESTRUCTION powers
	StepReady     Step = "ready"      // a player submitted declarations (buffered)
	StepAutoReady Step = "auto_ready" // the engine readied a player with nothing to declare
	StepRevealed  Step = "revealed"   // every player ready: the declarations execute
)

// Trace is one step of a turn.
type Trace struct {
	Step   Step
	Turn   int
	Phase  PowerPhase // the scheduled phase in which it happened
	Player string
	Ship   string // ship id
	Def    string // its definition
	Power  int    // power index, for fired, query, applied, dropped
	Timing Timing
	Effect EffectType
	Amount int
	Target string // a ship id, or "" for a player
	Query  string // for StepQuery: dice_override, reroll, healing_multiplier, protected, cost_reduction
}

// Observer is told of every step as it happens. It must not change the
// state.
type Observer func(Trace)
