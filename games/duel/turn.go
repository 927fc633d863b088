package duel

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// Errors of Step. Each wraps runner.ErrRefused: the turn is not played and
// nothing is recorded.
var (
	ErrGameOver   = runner.Refusal("the game is over")
	ErrNeedPerson = runner.Refusal("a person's seat has no chooser")
)

// personError is a person's choice that the rules refuse: both
// runner.ErrRefused (the turn is played again) and engine.ErrInvalidChoice.
type personError struct{ err error }

func (e *personError) Error() string { return e.err.Error() }
func (e *personError) Unwrap() []error {
	return []error{e.err, runner.ErrRefused}
}

// Step plays one whole turn (the nine phases) from s, a *State. in is nil,
// or Seats with the Chooser of every person seat.
func (g *Game) Step(ctx context.Context, t *runner.Tick, s, in any) (any, error) {
	cur := s.(*State)
	var people Seats
	switch m := in.(type) {
	case nil:
	case Seats:
		people = m
	default:
		return nil, fmt.Errorf("a duel takes duel.Seats as its move, not %T: %w", in, runner.ErrRefused)
	}
	next, err := g.play(ctx, cur, &seats{g: g, t: t, people: people})
	if err != nil {
		return nil, err
	}
	for _, r := range next.Log.Rejected {
		t.Record.ApplyErrors = append(t.Record.ApplyErrors, store.ApplyError{LocationID: "duel", CharacterID: strings.SplitN(r, ":", 2)[0], Reason: r})
	}
	return next, nil
}

// play plays the next turn on a copy of cur with the seats' choices.
func (g *Game) play(ctx context.Context, cur *State, se *seats) (*State, error) {
	if cur.Over() {
		return nil, fmt.Errorf("%w after turn %d (%s); `arbiter reset` starts a new one", ErrGameOver, cur.Board.Turn, resultText(cur.Result))
	}
	for _, p := range []string{P1, P2} {
		if g.Seats[p] == SeatPerson && se.people[p] == nil && se.capture == nil {
			return nil, fmt.Errorf("seat %s: %w (play it with `arbiter play --seat %s`)", p, ErrNeedPerson, p)
		}
	}
	next := cur.clone()
	pcg := new(rand.PCG)
	if err := pcg.UnmarshalBinary(next.RNG); err != nil {
		return nil, fmt.Errorf("random state: %w", err)
	}
	rng := rand.New(pcg)
	eng, err := engine.New(g.cat, engine.Scheduled, custom)
	if err != nil {
		return nil, err
	}
	log := &TurnLog{Turn: next.Board.Turn + 1, Events: []string{}, Choices: []string{}, Rejected: []string{}}
	kinds := map[string]string{}
	for _, p := range []string{P1, P2} {
		kinds[p] = se.seat(p)
	}
	narr := newNarrator(next.Board, kinds)
	eng.Observer = func(tr engine.Trace) {
		if line := narr.line(tr); line != "" {
			log.Events = append(log.Events, line)
		}
		if g.observe != nil {
			g.observe(tr)
		}
	}
	se.eng, se.log, se.narr = eng, log, narr
	if err := eng.Turn(ctx, next.Board, se, func() int { return rng.IntN(6) + 1 }); err != nil {
		return nil, err
	}
	if next.RNG, err = pcg.MarshalBinary(); err != nil {
		return nil, err
	}
	next.Result = g.result(next.Board)
	if next.Result != "" {
		log.Events = append(log.Events, "Game over: "+g.overText(next))
	}
	for p := range se.people {
		if !slices.Contains(next.People, p) {
			next.People = append(next.People, p)
		}
	}
	slices.Sort(next.People)
	next.Log = log
	return next, nil
}

// overText says how a game ended: "p1 won, p2's health fell to 0", "a
// draw after the last turn, 12 health to 12".
func (g *Game) overText(s *State) string {
	p1, p2 := s.Board.Player(P1).Health, s.Board.Player(P2).Health
	switch {
	case p1 <= 0 && p2 <= 0:
		return "a draw, both players' health fell to 0"
	case p1 <= 0 || p2 <= 0:
		loser := P1
		if p2 <= 0 {
			loser = P2
		}
		return fmt.Sprintf("%s, %s's health fell to 0", resultText(s.Result), loser)
	}
	return fmt.Sprintf("%s after the last turn, %d health to %d", resultText(s.Result), max(p1, p2), min(p1, p2))
}

// result decides the game after a turn: a player at 0 health loses (both:
// a draw); after the last turn the healthier player wins (equal: a draw).
func (g *Game) result(b *engine.State) string {
	p1, p2 := b.Player(P1).Health, b.Player(P2).Health
	switch {
	case p1 <= 0 && p2 <= 0:
		return "draw"
	case p1 <= 0:
		return P2
	case p2 <= 0:
		return P1
	case b.Turn < g.MaxTurns:
		return ""
	case p1 > p2:
		return P1
	case p2 > p1:
		return P2
	}
	return "draw"
}

func resultText(r string) string {
	if r == "draw" {
		return "a draw"
	}
	return r + " won"
}

// seats is the engine's Decider for one turn: each seat's choices, by kind.
type seats struct {
	g      *Game
	t      *runner.Tick // nil outside the runner: then no seat may be a model
	people Seats
	eng    *engine.Engine
	log    *TurnLog
	narr   *narrator
	// capture, when set, plays the turn only up to its seat's first model
	// call (try.go): that seat is a model, every other a bot.
	capture *capture
}

func (se *seats) reject(seat, msg string) {
	se.log.Rejected = append(se.log.Rejected, seat+": "+msg)
}

func (se *seats) Build(ctx context.Context, b *engine.State, seat string, opts []engine.BuildOption) (engine.BuildChoice, error) {
	var c engine.BuildChoice
	switch se.seat(seat) {
	case SeatPerson:
		v := se.g.buildView(se.eng, b, seat, opts)
		v.check = func(pc BuildChoice) error { return se.g.checkBuild(se.eng, b, seat, buildChoice(pc)) }
		pc, err := se.people[seat].Build(ctx, v)
		if err != nil {
			return c, err
		}
		c = buildChoice(pc)
		if err := se.g.checkBuild(se.eng, b, seat, c); err != nil {
			return c, &personError{err}
		}
	case SeatModel:
		var err error
		if c, err = se.modelBuild(ctx, b, seat, opts); err != nil {
			return c, err
		}
	default:
		c = se.g.botBuild(b, seat, opts)
	}
	se.log.Choices = append(se.log.Choices, choiceText(b, seat, c))
	if c.Def == "" {
		se.log.Events = append(se.log.Events, se.narr.who(seat)+" builds nothing")
	}
	if i := slices.IndexFunc(opts, func(o engine.BuildOption) bool { return o.Def == c.Def && o.Upgrade == c.Upgrade }); i >= 0 {
		se.narr.built(seat, c, opts[i].Cost)
	}
	return c, nil
}

// buildChoice is a person's build as the engine takes it.
func buildChoice(pc BuildChoice) engine.BuildChoice {
	return engine.BuildChoice{Def: normalShip(pc.Ship), Upgrade: normalShip(pc.Upgrade)}
}

// choiceText is the turn log's line of a DRAWING choice: "p1 builds
// Orbital", "p1 upgrades p1-3 Fighter into Dreadnought", "p1 builds none".
func choiceText(b *engine.State, seat string, c engine.BuildChoice) string {
	switch {
	case c.Def == "":
		return seat + " builds none"
	case c.Upgrade != "":
		from := c.Upgrade
		if sh := b.Ship(from); sh != nil {
			from += " " + sh.Def
		}
		return fmt.Sprintf("%s upgrades %s into %s", seat, from, c.Def)
	}
	return seat + " builds " + c.Def
}

func (se *seats) Declare(ctx context.Context, b *engine.State, phase engine.PowerPhase, seat string, opts []engine.ChargeOption) ([]engine.Declaration, error) {
	if len(opts) == 0 {
		// Nothing to declare: ready at once, no one is asked.
		return nil, nil
	}
	var decls []engine.Declaration
	switch se.seat(seat) {
	case SeatPerson:
		v := chargeView(b, phase, seat, opts)
		v.check = func(c ChargeChoice) error { return checkCharges(se.eng, b, phase, seat, c.Fire) }
		c, err := se.people[seat].Charges(ctx, v)
		if err != nil {
			return nil, err
		}
		if err := checkCharges(se.eng, b, phase, seat, c.Fire); err != nil {
			return nil, &personError{err}
		}
		decls = c.Fire
	case SeatModel:
		var err error
		if decls, err = se.modelCharges(ctx, b, phase, seat, opts); err != nil {
			return nil, err
		}
	default:
		decls = botCharges(b, opts)
	}
	for _, d := range decls {
		se.log.Choices = append(se.log.Choices, fmt.Sprintf("%s: %s fires %s at %s", phase, seat, d.Ship, cmpTarget(d.Target)))
	}
	return decls, nil
}

func cmpTarget(t string) string {
	if t == "" {
		return engine.TargetOpponent
	}
	return t
}

// normalShip reads "none" (any case) and "" as building nothing.
func normalShip(s string) string {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "none") {
		return ""
	}
	return s
}

// checkBuild is the build rule in the player's words, e.g.
// build choice "Dreadnought": costs 6 lines, you have 4 (choose one of: Defender, Orbital, Dreadnought upgrading p1-2, none)
func (g *Game) checkBuild(eng *engine.Engine, b *engine.State, seat string, c engine.BuildChoice) error {
	err := eng.CheckBuild(b, seat, c)
	if err == nil {
		return nil
	}
	names := []string{}
	for _, o := range eng.BuildOptions(b, seat) {
		names = append(names, optionText(o))
	}
	names = append(names, "none")
	what := fmt.Sprintf("build choice %q", c.Def)
	if c.Upgrade != "" {
		what = fmt.Sprintf("build choice %q upgrading %q", c.Def, c.Upgrade)
	}
	return fmt.Errorf("%s: %w (choose one of: %s)", what, err, strings.Join(names, ", "))
}

// optionText names a build option: "Orbital", "Dreadnought upgrading p1-2".
func optionText(o engine.BuildOption) string {
	if o.Upgrade != "" {
		return o.Def + " upgrading " + o.Upgrade
	}
	return o.Def
}

// checkCharges is the charge rule in the player's words.
func checkCharges(eng *engine.Engine, b *engine.State, phase engine.PowerPhase, seat string, decls []engine.Declaration) error {
	if err := eng.CheckDeclarations(b, phase, seat, decls); err != nil {
		return fmt.Errorf("charge declaration: %w", err)
	}
	return nil
}

// botBuild is the bot's build: the dearest ship it can get now, built new
// or upgraded (dearest by the ship's catalog cost; among equals the
// cheaper now, then the first in catalog order); a new Defender instead
// when its health is below half and it can afford one.
func (g *Game) botBuild(b *engine.State, seat string, opts []engine.BuildOption) engine.BuildChoice {
	if len(opts) == 0 {
		return engine.BuildChoice{}
	}
	me := b.Player(seat)
	if me.Health*2 < me.MaxHealth {
		if i := slices.IndexFunc(opts, func(o engine.BuildOption) bool { return o.Def == "Defender" && o.Upgrade == "" }); i >= 0 {
			return engine.BuildChoice{Def: opts[i].Def}
		}
	}
	worth := func(o engine.BuildOption) int {
		d, _ := g.cat.Get(o.Def)
		return d.Cost
	}
	best := opts[0]
	for _, o := range opts[1:] {
		if w, bw := worth(o), worth(best); w > bw || w == bw && o.Cost < best.Cost {
			best = o
		}
	}
	return engine.BuildChoice{Def: best.Def, Upgrade: best.Upgrade}
}

// botCharges is the bot's declaration: every charge, each at the weakest
// enemy ship it would destroy, else at the opponent.
func botCharges(b *engine.State, opts []engine.ChargeOption) []engine.Declaration {
	out := make([]engine.Declaration, 0, len(opts))
	for _, o := range opts {
		target, weakest := engine.TargetOpponent, 0
		for _, id := range o.Targets[1:] {
			sh := b.Ship(id)
			if sh.Health <= o.Amount && (weakest == 0 || sh.Health < weakest) {
				target, weakest = id, sh.Health
			}
		}
		out = append(out, engine.Declaration{Ship: o.Ship, Target: target})
	}
	return out
}

// seat is how seat plays this turn: a person when a Chooser was given for
// it (arbiter play seats a person over any configured seat), else as
// configured.
func (se *seats) seat(seat string) string {
	if se.capture != nil {
		if seat == se.capture.seat {
			return SeatModel
		}
		return SeatBot
	}
	if se.people[seat] != nil {
		return SeatPerson
	}
	return se.g.Seats[seat]
}
