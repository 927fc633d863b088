package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// duelPlay is a person's seat of a duel at the terminal: it is the seat's
// duel.Chooser, asked by the game for a build and for charges as the turn
// reaches them.
type duelPlay struct {
	s    *session.Session
	g    *duel.Game
	seat string
	in   *lines
	out  io.Writer
}

func (p *duelPlay) run(ctx context.Context) error {
	fmt.Fprintf(p.out, "You play %s of the duel. When asked, type a ship to build (or none), and the\ncharges to spend as <ship> <target> pairs separated by commas (empty: none). /quit leaves.\n", p.seat)
	for {
		if over, how := p.g.Over(p.s.State()); over {
			fmt.Fprintf(p.out, "Game over: %s\n", how)
			return nil
		}
		_, err := p.s.Turn(ctx, duel.Seats{p.seat: p})
		if errors.Is(err, errQuit) || errors.Is(err, errInputEnd) {
			fmt.Fprintln(p.out, "Left the game; every turn played is saved. `arbiter play` goes on from here.")
			return nil
		}
		if errors.Is(err, runner.ErrRefused) {
			fmt.Fprintf(p.out, "Refused: %v\n", err)
			continue
		}
		if err != nil {
			return err
		}
		fields, err := p.s.Status(ctx)
		if err != nil {
			return err
		}
		for _, f := range fields.Fields {
			fmt.Fprintf(p.out, "  %-8s %s\n", f.Key+":", f.Value)
		}
	}
}

func (p *duelPlay) ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(p.out, prompt)
	line, ok, err := p.in.next(ctx)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errInputEnd
	}
	line = strings.TrimSpace(line)
	if strings.EqualFold(line, "/quit") {
		return "", errQuit
	}
	return line, nil
}

func (p *duelPlay) sides(you, opp duel.PlayerView) {
	for _, v := range []duel.PlayerView{you, opp} {
		ships := make([]string, len(v.Fleet))
		for i, sh := range v.Fleet {
			ships[i] = fmt.Sprintf("%s %s (%d hp, %d charges)", sh.ID, sh.Ship, sh.Health, sh.Charges)
		}
		fmt.Fprintf(p.out, "  %s: health %d/%d, %d lines, die %d; fleet: %s\n", v.ID, v.Health, v.MaxHealth, v.Lines, v.Dice, strings.Join(ships, ", "))
	}
}

// Build asks which ship to build.
func (p *duelPlay) Build(ctx context.Context, v duel.BuildView) (duel.BuildChoice, error) {
	fmt.Fprintf(p.out, "\nTurn %d of %d · build\n", v.Turn, v.MaxTurns)
	p.sides(v.You, v.Opponent)
	for _, o := range v.Options {
		fmt.Fprintf(p.out, "  - %s: cost %d, health %d. %s\n", o.Ship, o.Cost, o.Health, o.Text)
	}
	line, err := p.ask(ctx, "build (a ship above, or none)> ")
	if err != nil {
		return duel.BuildChoice{}, err
	}
	if strings.EqualFold(line, "none") || line == "" {
		return duel.BuildChoice{}, nil
	}
	for _, o := range v.Options {
		if strings.EqualFold(o.Ship, line) {
			return duel.BuildChoice{Ship: o.Ship}, nil
		}
	}
	return duel.BuildChoice{Ship: line}, nil // the game refuses it, saying why
}

// Charges asks which charges to spend in this phase.
func (p *duelPlay) Charges(ctx context.Context, v duel.ChargeView) (duel.ChargeChoice, error) {
	fmt.Fprintf(p.out, "\nTurn %d · %s · charges\n", v.Turn, v.Phase)
	p.sides(v.You, v.Opponent)
	for _, o := range v.Options {
		fmt.Fprintf(p.out, "  - %s %s: %d damage, %d charges; targets %s\n", o.Ship, o.Name, o.Damage, o.Charges, strings.Join(o.Targets, ", "))
	}
	line, err := p.ask(ctx, "charges (<ship> <target>, ...; empty: none)> ")
	if err != nil {
		return duel.ChargeChoice{}, err
	}
	var c duel.ChargeChoice
	for _, part := range strings.Split(line, ",") {
		f := strings.Fields(part)
		switch len(f) {
		case 0:
			continue
		case 2:
			c.Fire = append(c.Fire, engine.Declaration{Ship: f[0], Target: f[1]})
		default:
			return duel.ChargeChoice{}, fmt.Errorf("charges %q: write <ship> <target> pairs, e.g. p1-2 opponent: %w", part, runner.ErrRefused)
		}
	}
	return c, nil
}
