package engine

import (
	"fmt"
	"maps"
	"slices"
)

// apply applies standard effects in order. An effect whose source was
// destroyed after it was resolved is dropped, unless it persists: a
// ONCE_ONLY_AUTOMATIC or UPON_DESTRUCTION effect, or a power marked
// persistsIfSourceDestroyed.
func (e *Engine) apply(s *State, effs []Effect) {
	for _, ef := range effs {
		if src := s.Ship(ef.Source); src != nil && src.Destroyed && !e.persists(src, ef) {
			e.trace(Trace{Step: StepDropped, Turn: s.Turn, Phase: e.phase, Player: ef.Owner, Ship: ef.Source, Def: src.Def, Power: ef.Power, Timing: ef.Timing, Effect: ef.Type, Amount: ef.Amount})
			continue
		}
		e.applyOne(s, ef)
	}
}

// applyTogether applies effects that were all resolved against one state
// (seed 003: AUTOMATIC is "resolved simultaneously") as one change, so that
// their order changes nothing: each player's healing (times the healing
// multiplier of that state) and damage are summed and their health moves
// once, clamped to 0 and their maximum only then; lines add up; of several
// SET_DICE the highest wins (an override still wins over all). Damage to
// ships is summed per ship and dealt in ship id order, then ships are made,
// by player in seat order and kind in name order; destructions and
// completions fire their event hooks as they happen, after the players'
// change.
func (e *Engine) applyTogether(s *State, effs []Effect) {
	m := e.Modifiers(s)
	health := map[string]int{}
	lines := map[string]int{}
	dice := map[string]int{}
	hits := map[string]int{}
	builds := map[string]map[string]int{}
	for _, ef := range effs {
		t := Trace{Step: StepApplied, Turn: s.Turn, Phase: e.phase, Player: ef.Owner, Ship: ef.Source, Power: ef.Power, Timing: ef.Timing, Effect: ef.Type, Amount: ef.Amount}
		switch ef.Type {
		case Heal:
			t.Amount = mulSat(ef.Amount, m.HealingMultiplier(ef.Owner))
			health[ef.Owner] = addSat(health[ef.Owner], t.Amount)
		case GainLines:
			lines[ef.Owner] = addSat(lines[ef.Owner], ef.Amount)
		case SetDice:
			dice[ef.Owner] = max(dice[ef.Owner], ef.Amount)
		case BuildShip:
			if builds[ef.Owner] == nil {
				builds[ef.Owner] = map[string]int{}
			}
			builds[ef.Owner][ef.Ship] = addSat(builds[ef.Owner][ef.Ship], ef.Amount)
			continue // traced as each ship comes into play
		case DealDamage:
			if ef.Target != "" && ef.Target != TargetOpponent {
				hits[ef.Target] = addSat(hits[ef.Target], ef.Amount)
				t.Target = ef.Target
				break
			}
			if them := s.Opponent(ef.Owner); them != nil {
				health[them.ID] = subSat(health[them.ID], ef.Amount)
			}
		}
		e.trace(t)
	}
	for _, pl := range s.Players {
		if d, ok := health[pl.ID]; ok {
			before := pl.Health
			pl.Health = min(pl.MaxHealth, max(0, addSat(pl.Health, d)))
			e.trace(Trace{Step: StepSettled, Turn: s.Turn, Phase: e.phase, Player: pl.ID, Power: -1, Amount: pl.Health - before})
		}
		pl.Lines = addSat(pl.Lines, lines[pl.ID])
		if v, ok := dice[pl.ID]; ok {
			if _, forced := m.DiceOverride(pl.ID); !forced {
				pl.Dice = v
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(hits)) {
		e.damage(s, s.Ship(id), hits[id])
	}
	for _, pl := range s.Players {
		for _, def := range slices.Sorted(maps.Keys(builds[pl.ID])) {
			for range builds[pl.ID][def] {
				e.complete(s, pl.ID, def)
			}
		}
	}
}

func (e *Engine) persists(src *Ship, ef Effect) bool {
	switch ef.Timing {
	case OnceOnly, UponDestruction:
		return true
	}
	def, _ := e.cat.Get(src.Def)
	return ef.Power >= 0 && ef.Power < len(def.Powers) && def.Powers[ef.Power].Persists
}

func (e *Engine) applyOne(s *State, ef Effect) {
	owner := s.Player(ef.Owner)
	t := Trace{Step: StepApplied, Turn: s.Turn, Phase: e.phase, Player: ef.Owner, Ship: ef.Source, Power: ef.Power, Timing: ef.Timing, Effect: ef.Type}
	switch ef.Type {
	case Heal:
		healed := mulSat(ef.Amount, e.Modifiers(s).HealingMultiplier(ef.Owner))
		before := owner.Health
		owner.Health = min(owner.MaxHealth, addSat(owner.Health, healed))
		t.Amount = owner.Health - before
	case GainLines:
		owner.Lines = addSat(owner.Lines, ef.Amount)
		t.Amount = ef.Amount
	case SetDice:
		if _, forced := e.Modifiers(s).DiceOverride(ef.Owner); !forced {
			owner.Dice = ef.Amount
		}
		t.Amount = owner.Dice
	case BuildShip:
		for range ef.Amount {
			e.complete(s, ef.Owner, ef.Ship)
		}
		t.Amount = ef.Amount
	case DealDamage:
		t.Amount, t.Target = ef.Amount, ef.Target
		if ef.Target != "" && ef.Target != TargetOpponent {
			e.trace(t)
			e.damage(s, s.Ship(ef.Target), ef.Amount)
			return
		}
		them := s.Opponent(ef.Owner)
		them.Health = max(0, subSat(them.Health, ef.Amount))
		t.Target = ""
	}
	e.trace(t)
}

// create puts a new ship of definition def into play for player.
func (e *Engine) create(s *State, player, def string) *Ship {
	d, _ := e.cat.Get(def)
	s.Seq++
	sh := &Ship{ID: fmt.Sprintf("%s-%d", player, s.Seq), Def: def, Owner: player, Built: s.Turn, Health: d.Health, Charges: d.Charges}
	s.Ships = append(s.Ships, sh)
	e.trace(Trace{Step: StepBuilt, Turn: s.Turn, Phase: e.phase, Player: player, Ship: sh.ID, Def: def})
	return sh
}

// damage deals n damage to ship sh; lethal damage destroys it unless a
// passive protects it (it then stays at 1 health).
func (e *Engine) damage(s *State, sh *Ship, n int) {
	if sh == nil || !sh.InPlay() || s.doomed[sh.ID] {
		return
	}
	sh.Health = subSat(sh.Health, n)
	if sh.Health > 0 {
		return
	}
	if e.Modifiers(s).Protected(sh.ID) {
		sh.Health = 1
		e.trace(Trace{Step: StepProtected, Turn: s.Turn, Phase: e.phase, Player: sh.Owner, Ship: sh.ID, Def: sh.Def})
		return
	}
	e.destroy(s, sh)
}

// destroy follows Rule 4: mark the ship for destruction, fire its
// UPON_DESTRUCTION powers and apply their effects, then mark it destroyed
// (which takes it out of the fleet; it stays in State.Ships with its usage).
func (e *Engine) destroy(s *State, sh *Ship) {
	if s.doomed == nil {
		s.doomed = map[string]bool{}
	}
	s.doomed[sh.ID] = true
	defer delete(s.doomed, sh.ID)
	sh.Health = 0
	e.trace(Trace{Step: StepMarked, Turn: s.Turn, Phase: e.phase, Player: sh.Owner, Ship: sh.ID, Def: sh.Def})
	e.apply(s, e.hooks(s, sh, UponDestruction))
	sh.Destroyed, sh.DestroyedOn = true, s.Turn
	e.trace(Trace{Step: StepDestroyed, Turn: s.Turn, Phase: e.phase, Player: sh.Owner, Ship: sh.ID, Def: sh.Def})
}

// Destroy destroys ship id now, as lethal damage would (Rule 4), unless a
// passive protects it; it reports whether the ship was destroyed.
func (e *Engine) Destroy(s *State, id string) bool {
	sh := s.Ship(id)
	if sh == nil || !sh.InPlay() {
		return false
	}
	e.damage(s, sh, sh.Health)
	return sh.Destroyed
}

// complete puts a new ship of definition def into play for player and
// fires the ON_SHIP_COMPLETED hooks of player's other ships in play: every
// ship completed, whether a player built it or a power made it.
func (e *Engine) complete(s *State, player, def string) *Ship {
	sh := e.create(s, player, def)
	e.completed(s, sh)
	return sh
}

// completed fires the ON_SHIP_COMPLETED hooks of the other ships in play of
// ship's owner, and applies their effects together. A hook that would make
// a ship is refused (the catalog refuses one; this catches a CUSTOM
// handler): each ship it made would complete another, without end.
func (e *Engine) completed(s *State, ship *Ship) {
	var queue []Effect
	for _, sh := range s.Fleet(ship.Owner) {
		if sh == ship {
			continue
		}
		for _, ef := range e.hooks(s, sh, OnShipCompleted) {
			if ef.Type == BuildShip {
				e.fail(fmt.Errorf("ship %s power %d: %s", sh.ID, ef.Power, completionBuilds))
				continue
			}
			queue = append(queue, ef)
		}
	}
	e.apply(s, queue)
}

// completionBuilds says why an ON_SHIP_COMPLETED power may not make ships.
const completionBuilds = "an ON_SHIP_COMPLETED power must not make ships: each ship made would complete another, without end"

// hooks fires the event powers of sh with timing and returns their effects,
// to be applied together.
func (e *Engine) hooks(s *State, sh *Ship, timing Timing) []Effect {
	def, _ := e.cat.Get(sh.Def)
	var queue []Effect
	for pi, pw := range def.Powers {
		if pw.Timing != timing {
			continue
		}
		effs, err := e.fire(s, sh, pi, pw)
		if err != nil {
			e.fail(err)
			continue
		}
		queue = append(queue, effs...)
	}
	return queue
}
