package engine

// Modifiers answers the questions validators and the turn ask of PASSIVE
// powers (seed 003: PassiveModifiers). A query only reads: it executes no
// power and changes nothing. Only ships in play (not destroyed, not in an
// upgrade) count.
type Modifiers interface {
	// DiceOverride is the value player's dice must show, if a passive
	// forces one (Leviathan: 6).
	DiceOverride(player string) (int, bool)
	// Reroll reports whether player rerolls a die showing die
	// (DICE_MANIPULATION, Ark of Knowledge).
	Reroll(player string, die int) bool
	// HealingMultiplier is what player's healing is multiplied by (1 when
	// nothing doubles it; several Science Vessels double it once).
	HealingMultiplier(player string) int
	// Protected reports whether ship cannot be destroyed (Sacrificial
	// Pool: its owner's ships, itself included, cannot be destroyed).
	Protected(ship string) bool
	// CostReduction is how many lines less player's ships cost.
	CostReduction(player string) int
	// UpgradesCount reports whether the ships in player's upgrades still
	// count as their ships (Hive), for the powers that count ships.
	UpgradesCount(player string) bool
}

// Modifiers returns the passive queries over state s.
func (e *Engine) Modifiers(s *State) Modifiers { return passives{e: e, s: s} }

type passives struct {
	e *Engine
	s *State
}

// each calls f with every PASSIVE power of player's ships in play that sets
// what pick reads, and traces the query.
func (q passives) each(player, query string, pick func(Logic) bool, f func(*Ship, Logic)) {
	for _, sh := range q.s.Ships {
		if !sh.InPlay() || sh.Owner != player {
			continue
		}
		def, _ := q.e.cat.Get(sh.Def)
		for i, p := range def.Powers {
			if p.Timing != Passive || !pick(p.Logic) {
				continue
			}
			q.e.trace(Trace{Step: StepQuery, Turn: q.s.Turn, Phase: q.e.phase, Player: player, Ship: sh.ID, Def: sh.Def, Power: i, Timing: Passive, Query: query})
			f(sh, p.Logic)
		}
	}
}

func (q passives) DiceOverride(player string) (int, bool) {
	v := 0
	q.each(player, "dice_override", func(l Logic) bool { return l.DiceOverride != 0 }, func(_ *Ship, l Logic) { v = max(v, l.DiceOverride) })
	return v, v != 0
}

func (q passives) Reroll(player string, die int) bool {
	at := 0
	q.each(player, "reroll", func(l Logic) bool { return l.RerollAtOrBelow != 0 }, func(_ *Ship, l Logic) { at = max(at, l.RerollAtOrBelow) })
	return die <= at
}

func (q passives) HealingMultiplier(player string) int {
	m := 1
	q.each(player, "healing_multiplier", func(l Logic) bool { return l.HealingMultiplier != 0 }, func(_ *Ship, l Logic) { m = max(m, l.HealingMultiplier) })
	return m
}

func (q passives) Protected(ship string) bool {
	sh := q.s.Ship(ship)
	if sh == nil {
		return false
	}
	protected := false
	q.each(sh.Owner, "protected", func(l Logic) bool { return l.ProtectsShips }, func(*Ship, Logic) { protected = true })
	return protected
}

func (q passives) UpgradesCount(player string) bool {
	count := false
	q.each(player, "upgrades_count", func(l Logic) bool { return l.UpgradesCount }, func(*Ship, Logic) { count = true })
	return count
}

func (q passives) CostReduction(player string) int {
	r := 0
	q.each(player, "cost_reduction", func(l Logic) bool { return l.CostReduction != 0 }, func(_ *Ship, l Logic) { r = max(r, l.CostReduction) })
	return r
}
