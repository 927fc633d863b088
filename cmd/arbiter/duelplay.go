package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// duelPlay is a duel at the terminal: each person's seat is a duelSeat, the
// duel.Chooser the game asks for a build and for charges as the turn
// reaches them.
type duelPlay struct {
	s *session.Session
	g *duel.Game
}

func (p *duelPlay) run(ctx context.Context, k *keyboard) error {
	fmt.Fprintf(k.out, "You play %s of the duel. When asked, type a ship to build (or none), and the\ncharges to spend as <ship> <target> pairs separated by commas (empty: none). /quit leaves.\n", strings.Join(k.people, " and "))
	seats := duel.Seats{}
	for _, seat := range k.people {
		seats[seat] = &duelSeat{k: k, seat: seat}
	}
	for {
		if over, how := p.g.Over(p.s.State()); over {
			fmt.Fprintf(k.out, "Game over: %s\n", how)
			return nil
		}
		read := k.read
		_, err := p.s.Turn(ctx, seats)
		if errors.Is(err, runner.ErrRefused) && !errors.Is(err, errQuit) && !errors.Is(err, errInputEnd) {
			if err := k.refused(ctx, err, read); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		fields, err := p.s.Status(ctx)
		if err != nil {
			return err
		}
		lines := make([]string, len(fields.Fields))
		for i, f := range fields.Fields {
			lines[i] = fmt.Sprintf("%-8s %s", f.Key+":", f.Value)
		}
		if err := k.tell(ctx, lines); err != nil {
			return err
		}
	}
}

// duelSeat is one person's seat of a duel at the keyboard.
type duelSeat struct {
	k    *keyboard
	seat string
}

func (p *duelSeat) sides(you, opp duel.PlayerView) {
	for _, v := range []duel.PlayerView{you, opp} {
		ships := make([]string, len(v.Fleet))
		for i, sh := range v.Fleet {
			ships[i] = fmt.Sprintf("%s %s (%d hp, %d charges)", sh.ID, sh.Ship, sh.Health, sh.Charges)
		}
		fmt.Fprintf(p.k.out, "  %s: health %d/%d, %d lines, die %d; fleet: %s\n", v.ID, v.Health, v.MaxHealth, v.Lines, v.Dice, strings.Join(ships, ", "))
	}
}

// Build asks which ship to build, or which of the seat's ships to upgrade;
// an answer that is not one of the options is said and asked again.
func (p *duelSeat) Build(ctx context.Context, v duel.BuildView) (duel.BuildChoice, error) {
	if err := p.k.handTo(ctx, p.seat); err != nil {
		return duel.BuildChoice{}, err
	}
	fmt.Fprintf(p.k.out, "\nTurn %d of %d · %s builds or upgrades\n", v.Turn, v.MaxTurns, p.seat)
	p.sides(v.You, v.Opponent)
	names := make([]string, len(v.Options))
	for i, o := range v.Options {
		names[i] = optionName(o)
		what := names[i]
		if i := slices.IndexFunc(v.You.Fleet, func(sh duel.ShipView) bool { return sh.ID == o.Upgrade }); i >= 0 {
			what += fmt.Sprintf(" (upgrades your %s %s)", o.Upgrade, v.You.Fleet[i].Ship)
		}
		fmt.Fprintf(p.k.out, "  - %s: cost %d, health %d. %s\n", what, o.Cost, o.Health, o.Text)
	}
	for {
		line, err := p.k.ask(ctx, "build (a ship above, \"<ship> <your ship>\" to upgrade, or none)> ")
		if err != nil {
			return duel.BuildChoice{}, err
		}
		if strings.EqualFold(line, "none") || line == "" {
			return duel.BuildChoice{}, nil
		}
		c, problem := readBuild(line, v.Options)
		if problem == "" {
			return c, nil
		}
		fmt.Fprintf(p.k.out, "%s: type one of %s, or none.\n", problem, strings.Join(names, ", "))
	}
}

// optionName is how a build option is shown and typed: "Fighter", or
// "Dreadnought p1-3" for the upgrade of ship p1-3 into a Dreadnought.
func optionName(o duel.ShipOption) string {
	if o.Upgrade == "" {
		return o.Ship
	}
	return o.Ship + " " + o.Upgrade
}

// readBuild reads "<ship>" (a new ship) or "<ship> <id>" (an upgrade of the
// seat's ship id into ship) against the options: the choice, or what is
// wrong. A ship offered only as an upgrade of one ship may be named alone.
func readBuild(line string, options []duel.ShipOption) (duel.BuildChoice, string) {
	line = strings.Join(strings.Fields(line), " ")
	var upgrades []duel.ShipOption
	for _, o := range options {
		switch {
		case strings.EqualFold(line, optionName(o)):
			return duel.BuildChoice{Ship: o.Ship, Upgrade: o.Upgrade}, ""
		case strings.EqualFold(line, o.Ship):
			upgrades = append(upgrades, o)
		}
	}
	switch len(upgrades) {
	case 0:
		return duel.BuildChoice{}, fmt.Sprintf("%q is not a ship you can build or upgrade into now", line)
	case 1:
		return duel.BuildChoice{Ship: upgrades[0].Ship, Upgrade: upgrades[0].Upgrade}, ""
	}
	return duel.BuildChoice{}, fmt.Sprintf("%s is offered as an upgrade of several of your ships: say which", line)
}

// Charges asks which charges to spend in this phase; a pair naming a ship or
// a target the phase does not offer is said and asked again.
func (p *duelSeat) Charges(ctx context.Context, v duel.ChargeView) (duel.ChargeChoice, error) {
	if err := p.k.handTo(ctx, p.seat); err != nil {
		return duel.ChargeChoice{}, err
	}
	fmt.Fprintf(p.k.out, "\nTurn %d · %s · %s's charges\n", v.Turn, v.Phase, p.seat)
	p.sides(v.You, v.Opponent)
	for _, o := range v.Options {
		fmt.Fprintf(p.k.out, "  - %s %s: %d damage, %d charges; targets %s\n", o.Ship, o.Name, o.Damage, o.Charges, strings.Join(o.Targets, ", "))
	}
	for {
		line, err := p.k.ask(ctx, "charges (<ship> <target>, ...; empty: none)> ")
		if err != nil {
			return duel.ChargeChoice{}, err
		}
		c, problem := readCharges(line, v.Options)
		if problem == "" {
			return c, nil
		}
		fmt.Fprintln(p.k.out, problem)
	}
}

// readCharges reads "<ship> <target>, ..." against the phase's options: ""
// and the choice, or what is wrong with the line.
func readCharges(line string, options []duel.ChargeOption) (duel.ChargeChoice, string) {
	var c duel.ChargeChoice
	for _, part := range strings.Split(line, ",") {
		f := strings.Fields(part)
		switch len(f) {
		case 0:
			continue
		case 2:
		default:
			return duel.ChargeChoice{}, fmt.Sprintf("%q: write <ship> <target> pairs, e.g. p1-2 opponent.", strings.TrimSpace(part))
		}
		i := slices.IndexFunc(options, func(o duel.ChargeOption) bool { return strings.EqualFold(o.Ship, f[0]) })
		if i < 0 {
			ships := make([]string, len(options))
			for j, o := range options {
				ships[j] = o.Ship
			}
			return duel.ChargeChoice{}, fmt.Sprintf("%s cannot spend a charge now: the ships that can are %s.", f[0], strings.Join(ships, ", "))
		}
		o := options[i]
		j := slices.IndexFunc(o.Targets, func(t string) bool { return strings.EqualFold(t, f[1]) })
		if j < 0 {
			return duel.ChargeChoice{}, fmt.Sprintf("%s cannot target %q: its targets are %s.", o.Ship, f[1], strings.Join(o.Targets, ", "))
		}
		c.Fire = append(c.Fire, engine.Declaration{Ship: o.Ship, Target: o.Targets[j]})
	}
	return c, ""
}
