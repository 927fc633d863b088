package engine

import (
	"errors"
	"fmt"
	"slices"
)

// EffectType is what a power does.
type EffectType string

// The standard effects, and the two that resolve into them.
const (
	Heal       EffectType = "HEAL"        // heal the owner by Amount (times the healing multiplier)
	DealDamage EffectType = "DEAL_DAMAGE" // damage the opponent, or the target ship, by Amount
	GainLines  EffectType = "GAIN_LINES"  // the owner gains Amount lines
	BuildShip  EffectType = "BUILD_SHIP"  // the owner gets Amount ships of definition Ship
	SetDice    EffectType = "SET_DICE"    // the owner's dice show Amount (a dice override wins)
	// Conditional picks one standard effect by a condition on the state.
	Conditional EffectType = "CONDITIONAL"
	// Custom asks a handler of the game for standard effects.
	Custom EffectType = "CUSTOM"
)

var standard = []EffectType{Heal, DealDamage, GainLines, BuildShip, SetDice}

// Standard reports whether e is one of the standard effects that the engine
// applies itself.
func (e EffectType) Standard() bool { return slices.Contains(standard, e) }

// Target values of Logic.Target for DEAL_DAMAGE.
const (
	TargetOpponent = "opponent" // the opposing player (the default)
	TargetChosen   = "chosen"   // a ship or the opponent, chosen when the charge is declared
)

// Conditions of a CONDITIONAL power.
const (
	DiceAtLeast         = "dice_at_least"         // the owner's dice show at least Value
	HealthBelowOpponent = "health_below_opponent" // the owner has less health than the opponent
)

// Definition is one kind of ship, as authored in a game's catalog.
type Definition struct {
	ID      string `yaml:"id" json:"id"`
	Cost    int    `yaml:"cost" json:"cost"`
	Health  int    `yaml:"health" json:"health"`
	Charges int    `yaml:"charges" json:"charges,omitempty"`
	Token   bool   `yaml:"token" json:"token,omitempty"` // made by other ships' powers only, never built by a player
	// UpgradeOf names the definition this one is an upgrade of: in
	// DRAWING, instead of building it new, a player may upgrade one of
	// their ships of that kind in play into it, paying the difference in
	// cost (at least 1 line).
	UpgradeOf string  `yaml:"upgradeOf" json:"upgradeOf,omitempty"`
	Text      string  `yaml:"text" json:"text"` // what the ship does, for people and models
	Powers    []Power `yaml:"powers" json:"powers"`
}

// Power is one power of a definition. Its index in Definition.Powers is its
// identity: usage is recorded by index.
type Power struct {
	Phase      PowerPhase `yaml:"phase" json:"phase"`
	Timing     Timing     `yaml:"timing" json:"timing"`
	Effect     EffectType `yaml:"effectType" json:"effectType"`
	BaseAmount *int       `yaml:"baseAmount" json:"baseAmount,omitempty"`
	// BaseAmountSet says the catalog wrote baseAmount, even as null (the
	// seed's check is `baseAmount !== undefined`): a PASSIVE power with it
	// set does not load. The reader of the catalog sets it.
	BaseAmountSet bool  `yaml:"-" json:"-"`
	Logic         Logic `yaml:"specialLogic" json:"specialLogic"`
	// Persists keeps the power's effect when its ship is destroyed after the
	// effect was queued and before it applied (a simultaneous exchange of
	// fire). ONCE_ONLY_AUTOMATIC and UPON_DESTRUCTION effects always persist.
	Persists bool `yaml:"persistsIfSourceDestroyed" json:"persistsIfSourceDestroyed,omitempty"`
}

// Amount is the power's base amount, 0 when it has none.
func (p Power) Amount() int {
	if p.BaseAmount == nil {
		return 0
	}
	return *p.BaseAmount
}

// Logic is a power's special logic: the parameters of its effect, of its
// condition or custom handler, and the values its passive queries return.
type Logic struct {
	Target string `yaml:"target" json:"target,omitempty"` // DEAL_DAMAGE: opponent (default) or chosen
	Ship   string `yaml:"ship" json:"ship,omitempty"`     // BUILD_SHIP: the definition built

	// Passive queries.
	DiceOverride      int  `yaml:"diceOverride" json:"diceOverride,omitempty"`           // the owner's dice always show this
	RerollAtOrBelow   int  `yaml:"rerollAtOrBelow" json:"rerollAtOrBelow,omitempty"`     // the owner rerolls a die showing this or less, once
	HealingMultiplier int  `yaml:"healingMultiplier" json:"healingMultiplier,omitempty"` // the owner's healing is multiplied by this
	ProtectsShips     bool `yaml:"protectsShips" json:"protectsShips,omitempty"`         // the owner's ships (this one too) cannot be destroyed
	CostReduction     int  `yaml:"costReduction" json:"costReduction,omitempty"`         // the owner's ships cost this much less (at least 1)
	UpgradesCount     bool `yaml:"upgradesCount" json:"upgradesCount,omitempty"`         // the ships in the owner's upgrades still count as their ships

	Condition *Condition `yaml:"condition" json:"condition,omitempty"` // CONDITIONAL
	CustomID  string     `yaml:"customLogicId" json:"customLogicId,omitempty"`
}

func (l Logic) queries() bool {
	return l.DiceOverride != 0 || l.RerollAtOrBelow != 0 || l.HealingMultiplier != 0 || l.ProtectsShips || l.CostReduction != 0 || l.UpgradesCount
}

// Condition is the branch of a CONDITIONAL power: Then when it holds, else
// Else. Both are standard effects.
type Condition struct {
	When  string  `yaml:"when" json:"when"`
	Value int     `yaml:"value" json:"value,omitempty"`
	Then  Outcome `yaml:"then" json:"then"`
	Else  Outcome `yaml:"else" json:"else"`
}

// Outcome is one standard effect of a condition.
type Outcome struct {
	Effect EffectType `yaml:"effectType" json:"effectType"`
	Amount int        `yaml:"amount" json:"amount"`
	Ship   string     `yaml:"ship" json:"ship,omitempty"`
}

// PassiveBaseAmount is the seed's error text for a PASSIVE power with a
// baseAmount (Rule 10).
const PassiveBaseAmount = "PASSIVE powers must not have baseAmount (they are queries, not effects)"

// DefinitionError is one problem of a definition: Power is the index of the
// power at fault, -1 for the ship itself.
type DefinitionError struct {
	Ship  string
	Power int
	Msg   string
}

func (e *DefinitionError) Error() string {
	if e.Power < 0 {
		return fmt.Sprintf("ship %q: %s", e.Ship, e.Msg)
	}
	return fmt.Sprintf("ship %q power %d: %s", e.Ship, e.Power, e.Msg)
}

// Catalog is a checked set of definitions, in authored order.
type Catalog struct {
	defs  []Definition
	index map[string]int
}

// NewCatalog checks every definition (see Validate) and returns the catalog;
// the error joins every *DefinitionError found. custom lists the custom
// logic ids the game handles.
func NewCatalog(defs []Definition, custom []string) (*Catalog, error) {
	c := &Catalog{defs: slices.Clone(defs), index: make(map[string]int, len(defs))}
	var errs []error
	for i, d := range c.defs {
		if _, dup := c.index[d.ID]; dup {
			errs = append(errs, &DefinitionError{Ship: d.ID, Power: -1, Msg: "defined twice"})
			continue
		}
		c.index[d.ID] = i
	}
	for _, d := range c.defs {
		for _, e := range Validate(d, c.has, custom) {
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func (c *Catalog) has(id string) bool { _, ok := c.index[id]; return ok }

// Get returns definition id.
func (c *Catalog) Get(id string) (*Definition, bool) {
	i, ok := c.index[id]
	if !ok {
		return nil, false
	}
	return &c.defs[i], true
}

// Definitions returns the definitions in authored order.
func (c *Catalog) Definitions() []Definition { return slices.Clone(c.defs) }

// Validate lists the problems of definition d: the phase/timing matrix
// (Allowed), a PASSIVE power with a baseAmount (Rule 10), effects that are
// not known or do not fit their timing, a CONDITIONAL whose branches are not
// standard effects, a CUSTOM power without a known handler, ships that do not
// exist. exists tells whether a definition id exists; custom lists the known
// custom logic ids.
func Validate(d Definition, exists func(string) bool, custom []string) []*DefinitionError {
	ps := &problems{ship: d.ID}
	ps.checkShip(d, exists)
	hasCharge := false
	for i, p := range d.Powers {
		if err := Allowed(p.Phase, p.Timing); err != nil {
			ps.bad(i, "%v", err)
		}
		if p.Timing == Passive {
			ps.checkPassive(i, p)
			continue
		}
		if p.Phase.Declared() {
			hasCharge = true
		}
		ps.checkActive(i, p, exists, custom)
	}
	if hasCharge && d.Charges < 1 {
		ps.bad(-1, "has a charge power (FIRST_STRIKE or SIMULTANEOUS_DECLARATION) but no charges")
	}
	return ps.errs
}

// problems collects the problems of one definition, in the order found.
type problems struct {
	ship string
	errs []*DefinitionError
}

// bad adds a problem of power (-1: of the ship itself).
func (ps *problems) bad(power int, format string, args ...any) {
	ps.errs = append(ps.errs, &DefinitionError{Ship: ps.ship, Power: power, Msg: fmt.Sprintf(format, args...)})
}

// checkShip checks what a definition says of the ship itself: its id, cost,
// health, charges and what it upgrades.
func (ps *problems) checkShip(d Definition, exists func(string) bool) {
	if d.ID == "" {
		ps.bad(-1, "missing id")
	}
	if d.Cost < 1 && !d.Token {
		ps.bad(-1, "cost %d: a ship players build costs at least 1 line", d.Cost)
	}
	if d.Health < 1 {
		ps.bad(-1, "health %d: a ship has at least 1 health", d.Health)
	}
	if d.Charges < 0 {
		ps.bad(-1, "charges %d must not be negative", d.Charges)
	}
	switch {
	case d.UpgradeOf == "":
	case d.Token:
		ps.bad(-1, "upgradeOf %q: a token is made by powers only, never upgraded into", d.UpgradeOf)
	case d.UpgradeOf == d.ID:
		ps.bad(-1, "upgradeOf itself")
	case !exists(d.UpgradeOf):
		ps.bad(-1, "upgradeOf %q, which is not in the catalog", d.UpgradeOf)
	}
}

// checkPassive checks PASSIVE power i: a query of passive settings, with no
// effect or baseAmount (Rule 10).
func (ps *problems) checkPassive(i int, p Power) {
	if p.BaseAmount != nil || p.BaseAmountSet {
		ps.bad(i, PassiveBaseAmount)
	}
	if p.Effect != "" {
		ps.bad(i, "PASSIVE powers have no effectType (they are queries, not effects); put what they change in specialLogic")
	}
	if !p.Logic.queries() {
		ps.bad(i, "PASSIVE power changes nothing: set one of diceOverride, rerollAtOrBelow, healingMultiplier, protectsShips, costReduction, upgradesCount in specialLogic")
	}
	if p.Logic.DiceOverride != 0 && (p.Logic.DiceOverride < 1 || p.Logic.DiceOverride > 6) {
		ps.bad(i, "diceOverride %d is not a die face (1 to 6)", p.Logic.DiceOverride)
	}
}

// checkActive checks power i, which is not PASSIVE: an effect that is known
// and fits its timing, without passive settings.
func (ps *problems) checkActive(i int, p Power, exists func(string) bool, custom []string) {
	if p.Logic.queries() {
		ps.bad(i, "%s power has passive settings (diceOverride, healingMultiplier, ...): only PASSIVE powers are queried", p.Timing)
	}
	if p.Timing == OnShipCompleted && (p.Effect == BuildShip || p.Effect == Conditional && p.Logic.Condition != nil && (p.Logic.Condition.Then.Effect == BuildShip || p.Logic.Condition.Else.Effect == BuildShip)) {
		ps.bad(i, completionBuilds)
	}
	switch {
	case p.Effect.Standard():
		ps.checkStandard(i, p, exists)
	case p.Effect == Conditional:
		ps.checkCondition(i, p.Logic.Condition, exists)
	case p.Effect == Custom:
		if !slices.Contains(custom, p.Logic.CustomID) {
			ps.bad(i, "CUSTOM logic %q has no handler (known: %v)", p.Logic.CustomID, custom)
		}
	default:
		ps.bad(i, "unknown effectType %q", p.Effect)
	}
}

// checkStandard checks power i of a standard effect: its amount, the ship
// it builds, the target it deals damage to.
func (ps *problems) checkStandard(i int, p Power, exists func(string) bool) {
	if p.BaseAmount == nil || *p.BaseAmount < 1 {
		ps.bad(i, "%s needs a baseAmount of at least 1", p.Effect)
	} else {
		ps.amount(i, p.Effect, *p.BaseAmount)
	}
	if p.Effect == BuildShip && !exists(p.Logic.Ship) {
		ps.bad(i, "BUILD_SHIP builds ship %q, which is not in the catalog", p.Logic.Ship)
	}
	if p.Effect == DealDamage && p.Logic.Target != "" && p.Logic.Target != TargetOpponent && p.Logic.Target != TargetChosen {
		ps.bad(i, "DEAL_DAMAGE target %q must be %s or %s", p.Logic.Target, TargetOpponent, TargetChosen)
	}
	if p.Logic.Target == TargetChosen && !p.Phase.Declared() {
		ps.bad(i, "only charge powers (FIRST_STRIKE or SIMULTANEOUS_DECLARATION) choose their target")
	}
}

// checkCondition checks the condition of CONDITIONAL power i: a known test
// whose branches are standard effects.
func (ps *problems) checkCondition(i int, c *Condition, exists func(string) bool) {
	if c == nil {
		ps.bad(i, "CONDITIONAL needs specialLogic.condition")
		return
	}
	if c.When != DiceAtLeast && c.When != HealthBelowOpponent {
		ps.bad(i, "condition %q must be %s or %s", c.When, DiceAtLeast, HealthBelowOpponent)
	}
	for _, o := range []Outcome{c.Then, c.Else} {
		if !o.Effect.Standard() {
			ps.bad(i, "CONDITIONAL resolves into standard effects only, not %q", o.Effect)
		} else if o.Effect == BuildShip && !exists(o.Ship) {
			ps.bad(i, "BUILD_SHIP builds ship %q, which is not in the catalog", o.Ship)
		} else {
			ps.amount(i, o.Effect, o.Amount)
		}
	}
}

// MaxAmount bounds any amount of a power (health healed, damage, lines),
// and MaxBuilt the ships one BUILD_SHIP makes: a power's work is bounded,
// and counts grow by at most that much a power.
const (
	MaxAmount = 1_000_000
	MaxBuilt  = 100
)

// amount checks the amount of an effect of power i against MaxAmount and
// MaxBuilt.
func (ps *problems) amount(i int, effect EffectType, n int) {
	switch {
	case effect == BuildShip && n > MaxBuilt:
		ps.bad(i, "BUILD_SHIP makes at most %d ships, not %d", MaxBuilt, n)
	case n > MaxAmount || n < -MaxAmount:
		ps.bad(i, "%s amount %d: at most %d either way", effect, n, MaxAmount)
	}
}
