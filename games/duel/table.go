package duel

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/session"
)

// Table is a duel at the terminal: each person's seat is a Chooser that
// asks its build and its charges as the turn reaches them; after a turn,
// the table reads what it did, in words, and the board. The ship catalogue
// is shown on each person's first build screen, and on /ships.
func (g *Game) Table(bool) *session.Table {
	shown := map[string]bool{} // the seats that have seen the catalogue
	catalogue := g.catalogue()
	return &session.Table{
		Players: g.Players(),
		People:  session.SeatsOf(g.Seats, SeatPerson),
		Intro:   g.intro,
		Over: func(state any) (bool, string) {
			over, how := g.Over(state)
			return over, fmt.Sprintf("Game over: %s\n", how)
		},
		Move: func(_ context.Context, _ any, people []string, p session.Person) (any, error) {
			kinds := map[string]string{}
			for _, pl := range g.Players() {
				kinds[pl] = g.Seats[pl]
			}
			for _, seat := range people {
				kinds[seat] = SeatPerson
			}
			seats := Seats{}
			for _, seat := range people {
				seats[seat] = &personSeat{p: p, seat: seat, kinds: kinds, catalogue: catalogue, shown: shown}
			}
			return seats, nil
		},
		Told: g.told,
	}
}

// catalogue is every ship of the game's catalogue as a person reads it:
// its cost, health and what it does; then the ships only powers make.
func (g *Game) catalogue() string {
	var b, tokens strings.Builder
	b.WriteString("The ships (/ships shows them again):\n")
	for _, d := range g.cat.Definitions() {
		if d.Token {
			fmt.Fprintf(&tokens, "  - %s: health %d, never built (other ships' powers make it). %s\n", d.ID, d.Health, d.Text)
			continue
		}
		fmt.Fprintf(&b, "  - %s: cost %d, health %d. %s\n", d.ID, d.Cost, d.Health, d.Text)
	}
	b.WriteString(tokens.String())
	b.WriteString("An upgrade replaces one of your ships by a new one (with a new id), and costs the new ship's cost less the cost of the ship it replaces, at least 1.\n")
	return b.String()
}

// intro is what the people read first: the game in a few lines, and what
// "lines" and "die" mean. Its paragraphs are not broken: the terminal's
// width breaks them.
func (g *Game) intro(people []string) string {
	return fmt.Sprintf(`You play %s of the duel. Two fleets fight until a player's health falls to 0, or for %d turns (then the healthier player wins). Each turn:
  1. Each player rolls a die (1 to 6) and gains that many lines. Lines are what ships cost; lines not spent are kept for later turns.
  2. You build one ship, upgrade one of yours, or build none. Only the ships you can pay for now are offered, so the list grows as your lines do.
  3. Ships with charges spend them at a target, the opponent or an enemy ship: first strikes, then charges both players declare in secret.
  4. At the end of the turn every ship's lasting power works, all at once (damage, healing).
After each turn you are told what happened. Type a ship to build (or none), and charges as <ship> <target> pairs separated by commas (empty: none). /ships shows every ship and what it does, /quit leaves.
`, strings.Join(people, " and "), g.MaxTurns)
}

// told is what the table reads after a turn: what it did, event by event,
// then the board.
func (g *Game) told(ctx context.Context, state any) ([]string, error) {
	st := state.(*State)
	var lines []string
	if st.Log != nil {
		lines = append(lines, fmt.Sprintf("What turn %d did:", st.Log.Turn))
		for _, e := range st.Log.Events {
			lines = append(lines, "  "+e)
		}
		for _, r := range st.Log.Rejected {
			lines = append(lines, "  refused: "+r)
		}
		lines = append(lines, fmt.Sprintf("After turn %d:", st.Log.Turn))
	}
	fields, err := g.Status(ctx, nil, state)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		lines = append(lines, fmt.Sprintf("  %-8s %s", f.Key+":", f.Value))
	}
	return lines, nil
}

// personSeat is a person's seat: the Chooser that asks them. kinds is how
// each seat is played (person, bot, model), as the screens name it.
type personSeat struct {
	p     session.Person
	seat  string
	kinds map[string]string
	// catalogue is every ship, shown on the seat's first build screen
	// (shown records the seats that have seen it) and on /ships.
	catalogue string
	shown     map[string]bool
}

// sides shows both sides: "p1 (you, person): health 30/30, 4 lines to
// spend, die 4; fleet: ...".
func (p *personSeat) sides(you, opp PlayerView) string {
	var b strings.Builder
	for i, v := range []PlayerView{you, opp} {
		who := p.kinds[v.ID]
		if i == 0 {
			who = "you, " + who
		}
		ships := make([]string, len(v.Fleet))
		for i, sh := range v.Fleet {
			ships[i] = fmt.Sprintf("%s %s (%d hp, %s)", sh.ID, sh.Ship, sh.Health, plural(sh.Charges, "charge"))
		}
		fleet := strings.Join(ships, ", ")
		if fleet == "" {
			fleet = "none"
		}
		fmt.Fprintf(&b, "  %s (%s): health %d/%d, %d lines to spend, die %d; fleet: %s\n", v.ID, who, v.Health, v.MaxHealth, v.Lines, v.Dice, fleet)
	}
	return b.String()
}

// Build asks which ship to build, or which of the seat's ships to upgrade;
// an answer that is not one of the options is said and asked again. The
// options are named with their cost (an upgrade's explained); what each
// ship does is the catalogue's, shown on the seat's first build screen
// and on /ships.
func (p *personSeat) Build(ctx context.Context, v BuildView) (BuildChoice, error) {
	var screen strings.Builder
	if p.catalogue != "" && !p.shown[p.seat] {
		if p.shown != nil {
			p.shown[p.seat] = true
		}
		screen.WriteString("\n" + p.catalogue)
	}
	fmt.Fprintf(&screen, "\nTurn %d of %d · %s builds or upgrades\n%s", v.Turn, v.MaxTurns, p.seat, p.sides(v.You, v.Opponent))
	fmt.Fprintf(&screen, "With %d lines you can pay for these (more as your lines grow; /ships shows what each does):\n", v.You.Lines)
	names := make([]string, len(v.Options))
	for i, o := range v.Options {
		names[i] = optionName(o)
		fmt.Fprintf(&screen, "  - %s: cost %d%s\n", names[i], o.Cost, p.upgradeNote(o, v.You.Fleet))
	}
	c, err := p.p.Ask(ctx, session.Question{Seat: p.seat, Screen: screen.String(),
		Prompt:    "build (a ship above, \"<ship> <your ship>\" to upgrade, or none)> ",
		Shortcuts: []session.Shortcut{{Line: "/ships", Show: p.catalogue}},
		Read: func(line string) (any, string) {
			if strings.EqualFold(line, "none") || line == "" {
				return BuildChoice{}, ""
			}
			c, problem := readBuild(line, v.Options)
			if problem != "" {
				return nil, fmt.Sprintf("%s: type one of %s, or none.", problem, strings.Join(names, ", "))
			}
			if err := v.Check(c); err != nil {
				return nil, fmt.Sprintf("The rules refuse it: %v. Choose again.", err)
			}
			return c, ""
		}})
	if err != nil {
		return BuildChoice{}, err
	}
	return c.(BuildChoice), nil
}

// upgradeNote explains an upgrade's cost beside a new ship's: " (upgrades
// your Fighter p1-1: a Dreadnought costs you 6, less the 2 a Fighter
// cost)"; "" for a new ship.
func (p *personSeat) upgradeNote(o ShipOption, fleet []ShipView) string {
	if o.Upgrade == "" {
		return ""
	}
	old := "ship"
	if i := slices.IndexFunc(fleet, func(sh ShipView) bool { return sh.ID == o.Upgrade }); i >= 0 {
		old = fleet[i].Ship
	}
	least := ""
	if o.Full-o.Credit < 1 {
		least = ", at least 1"
	}
	return fmt.Sprintf(" (upgrades your %s %s: %s costs you %d, less the %d %s cost%s)", old, o.Upgrade, article(o.Ship), o.Full, o.Credit, article(old), least)
}

// optionName is how a build option is shown and typed: "Fighter", or
// "Dreadnought p1-3" for the upgrade of ship p1-3 into a Dreadnought.
func optionName(o ShipOption) string {
	if o.Upgrade == "" {
		return o.Ship
	}
	return o.Ship + " " + o.Upgrade
}

// readBuild reads "<ship>" (a new ship) or "<ship> <id>" (an upgrade of the
// seat's ship id into ship) against the options: the choice, or what is
// wrong. A ship offered only as an upgrade of one ship may be named alone.
func readBuild(line string, options []ShipOption) (BuildChoice, string) {
	line = strings.Join(strings.Fields(line), " ")
	var upgrades []ShipOption
	for _, o := range options {
		switch {
		case strings.EqualFold(line, optionName(o)):
			return BuildChoice{Ship: o.Ship, Upgrade: o.Upgrade}, ""
		case strings.EqualFold(line, o.Ship):
			upgrades = append(upgrades, o)
		}
	}
	switch len(upgrades) {
	case 0:
		return BuildChoice{}, fmt.Sprintf("%q is not a ship you can build or upgrade into now", line)
	case 1:
		return BuildChoice{Ship: upgrades[0].Ship, Upgrade: upgrades[0].Upgrade}, ""
	}
	return BuildChoice{}, fmt.Sprintf("%s is offered as an upgrade of several of your ships: say which", line)
}

// Charges asks which charges to spend in this phase; a pair naming a ship or
// a target the phase does not offer is said and asked again.
func (p *personSeat) Charges(ctx context.Context, v ChargeView) (ChargeChoice, error) {
	var screen strings.Builder
	fmt.Fprintf(&screen, "\nTurn %d · %s · %s's charges\n%s", v.Turn, phaseName(v.Phase), p.seat, p.sides(v.You, v.Opponent))
	offered := make([]string, len(v.Options))
	for i, o := range v.Options {
		offered[i] = fmt.Sprintf("%s (targets %s)", o.Ship, strings.Join(o.Targets, ", "))
		fmt.Fprintf(&screen, "  - %s %s: %d damage, %s left; targets %s\n", o.Ship, o.Name, o.Damage, plural(o.Charges, "charge"), strings.Join(o.Targets, ", "))
	}
	c, err := p.p.Ask(ctx, session.Question{Seat: p.seat, Screen: screen.String(),
		Prompt:    "charges (<ship> <target>, ...; empty: none)> ",
		Shortcuts: []session.Shortcut{{Line: "/ships", Show: p.catalogue}},
		Read: func(line string) (any, string) {
			c, problem := readCharges(line, v.Options)
			if problem != "" {
				return nil, problem
			}
			if err := v.Check(c); err != nil {
				return nil, fmt.Sprintf("The rules refuse it: %v. The ships that can spend a charge now: %s. Type the charges again.", err, strings.Join(offered, "; "))
			}
			return c, ""
		}})
	if err != nil {
		return ChargeChoice{}, err
	}
	return c.(ChargeChoice), nil
}

// phaseName names a phase in which charges are spent.
func phaseName(p engine.PowerPhase) string {
	switch p {
	case engine.FirstStrike:
		return "first strike (before the charges declared in secret)"
	case engine.SimultaneousDeclaration:
		return "charges declared in secret (the other side's are revealed with yours)"
	}
	return string(p)
}

// readCharges reads "<ship> <target>, ..." against the phase's options: ""
// and the choice, or what is wrong with the line.
func readCharges(line string, options []ChargeOption) (ChargeChoice, string) {
	var c ChargeChoice
	for _, part := range strings.Split(line, ",") {
		f := strings.Fields(part)
		switch len(f) {
		case 0:
			continue
		case 2:
		default:
			return ChargeChoice{}, fmt.Sprintf("%q: write <ship> <target> pairs, e.g. p1-2 opponent.", strings.TrimSpace(part))
		}
		i := slices.IndexFunc(options, func(o ChargeOption) bool { return strings.EqualFold(o.Ship, f[0]) })
		if i < 0 {
			ships := make([]string, len(options))
			for j, o := range options {
				ships[j] = o.Ship
			}
			return ChargeChoice{}, fmt.Sprintf("%s cannot spend a charge now: the ships that can are %s.", f[0], strings.Join(ships, ", "))
		}
		o := options[i]
		j := slices.IndexFunc(o.Targets, func(t string) bool { return strings.EqualFold(t, f[1]) })
		if j < 0 {
			return ChargeChoice{}, fmt.Sprintf("%s cannot target %q: its targets are %s.", o.Ship, f[1], strings.Join(o.Targets, ", "))
		}
		c.Fire = append(c.Fire, engine.Declaration{Ship: o.Ship, Target: o.Targets[j]})
	}
	return c, ""
}
