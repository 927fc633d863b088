package engine

import (
	"context"
	"fmt"
)

// BuildOption is a ship a player can build now, at its cost for them.
type BuildOption struct {
	Def  string
	Cost int
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

// BuildOptions lists the ships player can afford now, in catalog order.
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
	}
	return out
}

// CheckBuild says why player cannot build def now; nil when they can. ""
// (build nothing) is always allowed.
func (e *Engine) CheckBuild(s *State, player, def string) error {
	if def == "" {
		return nil
	}
	pl := s.Player(player)
	d, ok := e.cat.Get(def)
	switch {
	case pl == nil:
		return invalid("no player %q", player)
	case !ok:
		return invalid("there is no such ship")
	case d.Token:
		return invalid("it is made by other ships' powers, never built")
	}
	if c := e.Cost(s, player, def); c > pl.Lines {
		return invalid("costs %d lines, you have %d", c, pl.Lines)
	}
	return nil
}

// drawing asks player for a build, pays for it and puts the ship in play;
// its owner's ON_SHIP_COMPLETED hooks fire. The DRAWING powers run after every
// player has built, so a ship built now fires its ONCE_ONLY_AUTOMATIC
// DRAWING power at once.
func (e *Engine) drawing(ctx context.Context, s *State, player string, d Decider) error {
	opts := e.BuildOptions(s, player)
	if len(opts) == 0 {
		return nil
	}
	def, err := d.Build(ctx, s, player, opts)
	if err != nil {
		return err
	}
	if def == "" {
		return nil
	}
	if err := e.CheckBuild(s, player, def); err != nil {
		return fmt.Errorf("%s builds %q: %w", player, def, err)
	}
	s.Player(player).Lines -= e.Cost(s, player, def)
	e.complete(s, player, def)
	return nil
}
