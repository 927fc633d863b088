package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// CustomFunc is the handler of a CUSTOM power: it reads the state (and asks
// the passive modifiers m what it needs, e.g. whether ships in upgrades
// count) and returns standard effects (Type, Amount, Ship, Target), which
// the engine applies. It must not change the state.
type CustomFunc func(s *State, src *Ship, m Modifiers) []Effect

// Effect is one standard effect to apply. Owner is the player whose power
// it is; Source, Power and Timing name that power.
type Effect struct {
	Type   EffectType
	Amount int
	Ship   string // BUILD_SHIP: the definition built
	Target string // DEAL_DAMAGE: a ship id; "" or "opponent" for the opposing player
	Owner  string
	Source string
	Power  int
	Timing Timing
}

// ErrNotStandard is returned when a CUSTOM handler resolves into an effect
// that is not standard.
var ErrNotStandard = errors.New("a power must resolve into standard effects only")

// Engine plays turns of one game: its catalog, its scheduled phases and its
// custom handlers.
type Engine struct {
	// Observer, when set, sees every step of every turn.
	Observer Observer

	cat    *Catalog
	phases []PowerPhase
	custom map[string]CustomFunc
	phase  PowerPhase // the phase being played, for traces
	err    error      // the first failure of an event hook in the phase
}

// fail keeps the first error of an event hook (fired deep inside damage or
// a build), for the phase to return.
func (e *Engine) fail(err error) {
	if e.err == nil {
		e.err = err
	}
}

// New returns an engine for a game that schedules phases, in that order.
// Only iterable phases may be scheduled; every CUSTOM power of the catalog
// needs its handler in custom.
func New(cat *Catalog, phases []PowerPhase, custom map[string]CustomFunc) (*Engine, error) {
	var errs []error
	for _, p := range phases {
		if !p.Iterable() {
			errs = append(errs, fmt.Errorf("phase %s cannot be scheduled: it is not an iterable phase (EVENT, DICE_MANIPULATION and PASSIVE never are)", p))
		}
	}
	if dup := duplicate(phases); dup != "" {
		errs = append(errs, fmt.Errorf("phase %s is scheduled twice", dup))
	}
	for _, d := range cat.defs {
		for i, p := range d.Powers {
			if p.Effect == Custom && custom[p.Logic.CustomID] == nil {
				errs = append(errs, &DefinitionError{Ship: d.ID, Power: i, Msg: fmt.Sprintf("CUSTOM logic %q has no handler", p.Logic.CustomID)})
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Engine{cat: cat, phases: slices.Clone(phases), custom: maps.Clone(custom)}, nil
}

func duplicate(phases []PowerPhase) PowerPhase {
	seen := map[PowerPhase]bool{}
	for _, p := range phases {
		if seen[p] {
			return p
		}
		seen[p] = true
	}
	return ""
}

func (e *Engine) trace(t Trace) {
	if e.Observer != nil {
		e.Observer(t)
	}
}

// Decider makes the players' choices of a turn: a build in DRAWING, charge
// declarations in FIRST_STRIKE and SIMULTANEOUS_DECLARATION. It is asked
// with the state as it stands (the other players' declarations of the same
// phase are buffered, not visible). A choice it returns is checked again
// (CheckBuild, CheckDeclarations); an invalid one stops the turn with an
// error wrapping ErrInvalidChoice.
type Decider interface {
	// Build returns what player builds or upgrades (Def "" for nothing).
	// options are what player can afford now.
	Build(ctx context.Context, s *State, player string, options []BuildOption) (BuildChoice, error)
	// Declare returns the charges player spends in phase. options are the
	// ships with a charge for it (possibly none, in SIMULTANEOUS_DECLARATION).
	Declare(ctx context.Context, s *State, phase PowerPhase, player string, options []ChargeOption) ([]Declaration, error)
}

// ErrInvalidChoice marks a choice that the rules refuse; errors.Is finds it
// in every *ChoiceError.
var ErrInvalidChoice = errors.New("invalid choice")

// ChoiceError says why the rules refuse a choice, in words for the player
// ("costs 6 lines, you have 4").
type ChoiceError struct{ Reason string }

func (e *ChoiceError) Error() string        { return e.Reason }
func (e *ChoiceError) Is(target error) bool { return target == ErrInvalidChoice }

func invalid(format string, args ...any) error {
	return &ChoiceError{Reason: fmt.Sprintf(format, args...)}
}

// Turn plays the next turn on s: each scheduled phase in order. roll returns
// a die (1 to 6). On an error the state is partly played: play on a Clone.
func (e *Engine) Turn(ctx context.Context, s *State, d Decider, roll func() int) error {
	if len(s.Players) != 2 {
		return fmt.Errorf("the engine plays two players, not %d", len(s.Players))
	}
	s.Turn++
	s.Charged = false
	defer func() { e.phase, e.err = "", nil }()
	for _, p := range e.phases {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := e.play(ctx, s, p, d, roll)
		if err == nil {
			err = e.err
		}
		if err != nil {
			return fmt.Errorf("turn %d, %s: %w", s.Turn, p, err)
		}
	}
	return nil
}

// play runs phase p: the engine's own step of the phase, then the powers the
// timings allow.
func (e *Engine) play(ctx context.Context, s *State, p PowerPhase, d Decider, roll func() int) error {
	e.phase = p
	e.trace(Trace{Step: StepPhase, Turn: s.Turn, Phase: p})
	switch p {
	case DiceRoll:
		e.rollDice(s, roll)
	case LineGeneration:
		for _, pl := range s.Players {
			pl.Lines = addSat(pl.Lines, pl.Dice)
			e.trace(Trace{Step: StepApplied, Turn: s.Turn, Phase: p, Player: pl.ID, Effect: GainLines, Amount: pl.Dice, Power: -1})
		}
	case Drawing:
		for _, pl := range s.Players {
			if err := e.drawing(ctx, s, pl.ID, d); err != nil {
				return err
			}
		}
	case FirstStrike, SimultaneousDeclaration:
		return e.declare(ctx, s, p, d)
	case ConditionalResponse:
		if !s.Charged {
			e.trace(Trace{Step: StepSkip, Turn: s.Turn, Phase: p})
			return nil
		}
	}
	return e.runPowers(s, p, p == Automatic)
}

// rollDice rolls each player's die: a passive override wins (no roll);
// otherwise DICE_MANIPULATION may reroll it, before the result is used.
func (e *Engine) rollDice(s *State, roll func() int) {
	m := e.Modifiers(s)
	for _, pl := range s.Players {
		if v, ok := m.DiceOverride(pl.ID); ok {
			pl.Dice = v
		} else {
			die := roll()
			if m.Reroll(pl.ID, die) {
				e.trace(Trace{Step: StepRerolled, Turn: s.Turn, Phase: DiceRoll, Player: pl.ID, Amount: die})
				die = roll()
			}
			pl.Dice = die
		}
		e.trace(Trace{Step: StepRolled, Turn: s.Turn, Phase: DiceRoll, Player: pl.ID, Amount: pl.Dice})
	}
}

// runPowers executes, for every ship, the powers of phase p that their
// timing allows now. Ships made during the phase are checked too. When
// simultaneous (AUTOMATIC), every effect is resolved against the state at
// the start of the phase and all are applied together (applyTogether), so
// the order ships were made in changes nothing.
func (e *Engine) runPowers(s *State, p PowerPhase, simultaneous bool) error {
	var queue []Effect
	for i := 0; i < len(s.Ships); i++ {
		sh := s.Ships[i]
		def, _ := e.cat.Get(sh.Def)
		for pi, pw := range def.Powers {
			if pw.Phase != p || !e.fires(s, sh, pi, pw) {
				continue
			}
			effs, err := e.fire(s, sh, pi, pw)
			if err != nil {
				return err
			}
			if simultaneous {
				queue = append(queue, effs...)
				continue
			}
			e.apply(s, effs)
		}
	}
	if simultaneous {
		e.applyTogether(s, queue)
	}
	return nil
}

// fires is the timing check of a scheduled phase (the power's phase is the
// current one).
func (e *Engine) fires(s *State, sh *Ship, pi int, pw Power) bool {
	switch pw.Timing {
	case Continuous:
		return sh.InPlay()
	case OnceOnly:
		// On its build turn, once; even when destroyed since.
		return sh.Built == s.Turn && !sh.Used(pi)
	default:
		// PASSIVE is queried, never executed; event hooks fire on their
		// events.
		return false
	}
}

// fire executes power pi of sh: records its usage and resolves it into
// standard effects.
func (e *Engine) fire(s *State, sh *Ship, pi int, pw Power) ([]Effect, error) {
	if pw.Timing == Passive {
		return nil, fmt.Errorf("ship %s power %d: a PASSIVE power is never executed", sh.ID, pi)
	}
	effs, err := e.resolve(s, sh, pi, pw)
	if err != nil {
		return nil, err
	}
	amount := 0
	for _, ef := range effs {
		amount = addSat(amount, ef.Amount)
	}
	sh.Usage = append(sh.Usage, Usage{Turn: s.Turn, Power: pi, Phase: e.phase, Effect: pw.Effect, Amount: amount})
	e.trace(Trace{Step: StepFired, Turn: s.Turn, Phase: e.phase, Player: sh.Owner, Ship: sh.ID, Def: sh.Def, Power: pi, Timing: pw.Timing, Effect: pw.Effect, Amount: amount})
	return effs, nil
}

// resolve turns a power into standard effects: a standard effect as it is,
// a CONDITIONAL into its branch, a CUSTOM into what its handler returns.
func (e *Engine) resolve(s *State, sh *Ship, pi int, pw Power) ([]Effect, error) {
	base := Effect{Owner: sh.Owner, Source: sh.ID, Power: pi, Timing: pw.Timing}
	var out []Effect
	switch {
	case pw.Effect.Standard():
		ef := base
		ef.Type, ef.Amount, ef.Ship = pw.Effect, pw.Amount(), pw.Logic.Ship
		out = []Effect{ef}
	case pw.Effect == Conditional:
		c := pw.Logic.Condition
		o := c.Else
		if e.holds(s, sh.Owner, c) {
			o = c.Then
		}
		ef := base
		ef.Type, ef.Amount, ef.Ship = o.Effect, o.Amount, o.Ship
		out = []Effect{ef}
	case pw.Effect == Custom:
		for _, ef := range e.custom[pw.Logic.CustomID](s, sh, e.Modifiers(s)) {
			if !ef.Type.Standard() {
				return nil, fmt.Errorf("ship %s power %d: CUSTOM %s returned %q: %w", sh.ID, pi, pw.Logic.CustomID, ef.Type, ErrNotStandard)
			}
			ef.Owner, ef.Source, ef.Power, ef.Timing = base.Owner, base.Source, base.Power, base.Timing
			out = append(out, ef)
		}
	default:
		return nil, fmt.Errorf("ship %s power %d: effect %q: %w", sh.ID, pi, pw.Effect, ErrNotStandard)
	}
	return out, nil
}

func (e *Engine) holds(s *State, player string, c *Condition) bool {
	me, them := s.Player(player), s.Opponent(player)
	switch c.When {
	case DiceAtLeast:
		return me.Dice >= c.Value
	case HealthBelowOpponent:
		return me.Health < them.Health
	}
	return false
}
