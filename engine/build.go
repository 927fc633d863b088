package engine

import (
	"context"
	"fmt"
)

// BuildOption is a ship a player can build now, or upgrade one of their
// ships into, at its cost for them.
type BuildOption struct {
	Def     string
	Cost    int
	Upgrade string // the id of the player's ship upgraded into Def; "" for a new ship
}

// BuildChoice is a player's DRAWING decision: build a new ship of Def, or
// upgrade their ship Upgrade into a Def; Def "" for nothing.
type BuildChoice struct {
	Def     string
	Upgrade string
}

// Cost is what definition def costs player now: its cost less the passive
// cost reduction (Hive), at least 1.
func (e *Engine) Cost(s *State, player, def string) int {
	d, ok := e.cat.Get(def)
	if !ok {
		return 0
	}
	return max(1, d.Cost-e.Modifiers(s).CostReduction(player))
}

// UpgradeCost is what upgrading a ship of definition from into def costs
// player now: the difference of their costs (def's less the passive cost
// reduction), at least 1.
func (e *Engine) UpgradeCost(s *State, player, from, def string) int {
	old, _ := e.cat.Get(from)
	if old == nil {
		return e.Cost(s, player, def)
	}
	return max(1, e.Cost(s, player, def)-old.Cost)
}

// BuildOptions lists what player can afford now, in catalog order: each
// ship new, then each upgrade of one of their ships in play into it.
func (e *Engine) BuildOptions(s *State, player string) []BuildOption {
	pl := s.Player(player)
	if pl == nil {
		return nil
	}
	var out []BuildOption
	for _, d := range e.cat.defs {
		if d.Token {
			continue
		}
		if c := e.Cost(s, player, d.ID); c <= pl.Lines {
			out = append(out, BuildOption{Def: d.ID, Cost: c})
		}
		if d.UpgradeOf == "" {
			continue
		}
		for _, sh := range s.Fleet(player) {
			if sh.Def != d.UpgradeOf {
				continue
			}
			if c := e.UpgradeCost(s, player, sh.Def, d.ID); c <= pl.Lines {
				out = append(out, BuildOption{Def: d.ID, Cost: c, Upgrade: sh.ID})
			}
		}
	}
	return out
}

// CheckBuild says why player cannot make choice c now; nil when they can.
// Nothing (Def "") is always allowed.
func (e *Engine) CheckBuild(s *State, player string, c BuildChoice) error {
	if c.Def == "" {
		if c.Upgrade != "" {
			return invalid("upgrade %s into what? name the ship", c.Upgrade)
		}
		return nil
	}
	pl := s.Player(player)
	d, ok := e.cat.Get(c.Def)
	switch {
	case pl == nil:
		return invalid("no player %q", player)
	case !ok:
		return invalid("there is no such ship")
	case d.Token:
		return invalid("it is made by other ships' powers, never built")
	}
	cost := e.Cost(s, player, c.Def)
	if c.Upgrade != "" {
		old := s.Ship(c.Upgrade)
		switch {
		case old == nil || old.Owner != player || !old.InPlay():
			return invalid("%s is not one of your ships in play", c.Upgrade)
		case d.UpgradeOf == "":
			return invalid("it is built new, never upgraded into")
		case old.Def != d.UpgradeOf:
			return invalid("it is an upgrade of a %s, and %s is a %s", d.UpgradeOf, old.ID, old.Def)
		}
		cost = e.UpgradeCost(s, player, old.Def, c.Def)
	}
	if cost > pl.Lines {
		return invalid("costs %d lines, you have %d", cost, pl.Lines)
	}
	return nil
}

// drawing asks player for a build or an upgrade ("Build/upgrade ships"),
// pays for it and puts the new ship in play; an upgraded ship leaves play
// into it (not destroyed). Either way a ship is completed: its owner's
// ON_SHIP_COMPLETED hooks fire. The DRAWING powers run after every player
// has chosen, so a ship completed now fires its ONCE_ONLY_AUTOMATIC DRAWING
// power at once.
func (e *Engine) drawing(ctx context.Context, s *State, player string, d Decider) error {
	opts := e.BuildOptions(s, player)
	if len(opts) == 0 {
		return nil
	}
	c, err := d.Build(ctx, s, player, opts)
	if err != nil {
		return err
	}
	if c.Def == "" && c.Upgrade == "" {
		return nil
	}
	if err := e.CheckBuild(s, player, c); err != nil {
		if c.Upgrade != "" {
			return fmt.Errorf("%s upgrades %s into %q: %w", player, c.Upgrade, c.Def, err)
		}
		return fmt.Errorf("%s builds %q: %w", player, c.Def, err)
	}
	if c.Upgrade == "" {
		s.Player(player).Lines -= e.Cost(s, player, c.Def)
		e.complete(s, player, c.Def)
		return nil
	}
	old := s.Ship(c.Upgrade)
	s.Player(player).Lines -= e.UpgradeCost(s, player, old.Def, c.Def)
	sh := e.create(s, player, c.Def)
	old.UpgradedInto = sh.ID
	e.trace(Trace{Step: StepUpgraded, Turn: s.Turn, Phase: e.phase, Player: player, Ship: old.ID, Def: old.Def, Target: sh.ID})
	e.completed(s, sh)
	return nil
}
