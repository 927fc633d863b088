package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ChargeOption is a ship that can spend a charge in a phase: its power,
// charges left, and the targets it may choose ("opponent" first).
type ChargeOption struct {
	Ship    string
	Def     string
	Power   int
	Effect  EffectType
	Amount  int
	Charges int
	Targets []string
}

// Declaration spends one charge of Ship on Target (a ship id, or
// "opponent"; "" means the opponent).
type Declaration struct {
	Ship   string `json:"ship"`
	Target string `json:"target"`
}

// ChargeOptions lists player's ships in play with a charge left and a
// charge power of phase (a CONTINUOUS power of FIRST_STRIKE or
// SIMULTANEOUS_DECLARATION).
func (e *Engine) ChargeOptions(s *State, phase PowerPhase, player string) []ChargeOption {
	var out []ChargeOption
	for _, sh := range s.Fleet(player) {
		if sh.Charges < 1 {
			continue
		}
		def, _ := e.cat.Get(sh.Def)
		for pi, pw := range def.Powers {
			if pw.Phase != phase || pw.Timing != Continuous {
				continue
			}
			o := ChargeOption{Ship: sh.ID, Def: sh.Def, Power: pi, Effect: pw.Effect, Amount: pw.Amount(), Charges: sh.Charges, Targets: []string{TargetOpponent}}
			if pw.Logic.Target == TargetChosen {
				for _, enemy := range s.Ships {
					if enemy.Owner != player && enemy.InPlay() {
						o.Targets = append(o.Targets, enemy.ID)
					}
				}
			}
			out = append(out, o)
			break // one charge power per ship and phase
		}
	}
	return out
}

// CheckDeclarations says why player cannot make decls in phase; nil when
// they can. Each ship spends at most one charge per phase.
func (e *Engine) CheckDeclarations(s *State, phase PowerPhase, player string, decls []Declaration) error {
	opts := e.ChargeOptions(s, phase, player)
	seen := map[string]bool{}
	for _, d := range decls {
		i := slices.IndexFunc(opts, func(o ChargeOption) bool { return o.Ship == d.Ship })
		if i < 0 {
			ships := make([]string, len(opts))
			for j, o := range opts {
				ships[j] = o.Ship
			}
			if len(ships) == 0 {
				return invalid("ship %q has no charge to spend in %s (you have no ship that can)", d.Ship, phase)
			}
			return invalid("ship %q has no charge to spend in %s (ships that can: %s)", d.Ship, phase, strings.Join(ships, ", "))
		}
		if seen[d.Ship] {
			return invalid("ship %q spends a charge twice in %s (one charge per ship and phase)", d.Ship, phase)
		}
		seen[d.Ship] = true
		if t := d.Target; t != "" && !slices.Contains(opts[i].Targets, t) {
			return invalid("ship %q cannot target %q (targets: %s)", d.Ship, t, strings.Join(opts[i].Targets, ", "))
		}
	}
	return nil
}

// ErrNotReady is returned by Reveal while a player has not declared.
var ErrNotReady = errors.New("not every player is ready")

// Buffer holds the secret declarations of one simultaneous phase until every
// player is ready (Rule 3). Nothing a player submits touches the state before
// Reveal.
type Buffer struct {
	e       *Engine
	s       *State
	phase   PowerPhase
	players []string
	ready   map[string]bool
	decls   map[string][]Declaration
}

// NewBuffer opens the declarations of phase on s.
func (e *Engine) NewBuffer(s *State, phase PowerPhase) *Buffer {
	b := &Buffer{e: e, s: s, phase: phase, ready: map[string]bool{}, decls: map[string][]Declaration{}}
	for _, p := range s.Players {
		b.players = append(b.players, p.ID)
	}
	return b
}

// Submit buffers player's declarations and marks them ready. Declarations
// the rules refuse are an error wrapping ErrInvalidChoice, and the player
// stays not ready.
func (b *Buffer) Submit(player string, decls []Declaration) error {
	if !slices.Contains(b.players, player) {
		return invalid("no player %q", player)
	}
	if b.ready[player] {
		return invalid("%s is already ready in %s", player, b.phase)
	}
	if err := b.e.CheckDeclarations(b.s, b.phase, player, decls); err != nil {
		return err
	}
	b.decls[player] = slices.Clone(decls)
	b.ready[player] = true
	b.e.trace(Trace{Step: StepReady, Turn: b.s.Turn, Phase: b.phase, Player: player, Amount: len(decls)})
	return nil
}

// autoReady readies a player who has nothing to declare.
func (b *Buffer) autoReady(player string) {
	b.ready[player] = true
	b.e.trace(Trace{Step: StepAutoReady, Turn: b.s.Turn, Phase: b.phase, Player: player})
}

// Pending lists the players not ready yet, in seat order.
func (b *Buffer) Pending() []string {
	var out []string
	for _, p := range b.players {
		if !b.ready[p] {
			out = append(out, p)
		}
	}
	return out
}

// Reveal executes the buffered declarations once every player is ready: each
// spends its charge and fires its power, all resolved first, then applied in
// seat order. Before that it returns ErrNotReady and changes nothing.
func (e *Engine) Reveal(b *Buffer) error {
	if p := b.Pending(); len(p) > 0 {
		return fmt.Errorf("%w in %s: waiting for %s", ErrNotReady, b.phase, strings.Join(p, ", "))
	}
	s := b.s
	prev := e.phase
	e.phase = b.phase
	defer func() { e.phase = prev }()
	e.trace(Trace{Step: StepRevealed, Turn: s.Turn, Phase: b.phase})
	var queue []Effect
	for _, player := range b.players {
		for _, d := range b.decls[player] {
			sh := s.Ship(d.Ship)
			def, _ := e.cat.Get(sh.Def)
			opt := e.ChargeOptions(s, b.phase, player)
			i := slices.IndexFunc(opt, func(o ChargeOption) bool { return o.Ship == d.Ship })
			if i < 0 {
				return fmt.Errorf("ship %s lost its charge before the reveal", d.Ship)
			}
			pi := opt[i].Power
			sh.Charges--
			s.Charged = true
			effs, err := e.fire(s, sh, pi, def.Powers[pi])
			if err != nil {
				return err
			}
			for k := range effs {
				if effs[k].Type == DealDamage && def.Powers[pi].Logic.Target == TargetChosen && d.Target != TargetOpponent {
					effs[k].Target = d.Target
				}
			}
			queue = append(queue, effs...)
		}
	}
	e.apply(s, queue)
	return nil
}

// declare runs a simultaneous phase: every player declares in secret (in
// FIRST_STRIKE a player with no charge for it is readied without being
// asked), then the declarations are revealed together.
func (e *Engine) declare(ctx context.Context, s *State, phase PowerPhase, d Decider) error {
	b := e.NewBuffer(s, phase)
	for _, player := range b.players {
		opts := e.ChargeOptions(s, phase, player)
		if phase == FirstStrike && len(opts) == 0 {
			b.autoReady(player)
			continue
		}
		decls, err := d.Declare(ctx, s, phase, player, opts)
		if err != nil {
			return err
		}
		if err := b.Submit(player, decls); err != nil {
			return fmt.Errorf("%s declares: %w", player, err)
		}
	}
	return e.Reveal(b)
}
