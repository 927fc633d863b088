package duel

import (
	"context"
	"strings"
	"testing"
)

// TestReadBuild: a person's build answer names a new ship or an upgrade of
// one of theirs (issue 21 item 11 at the terminal).
func TestReadBuild(t *testing.T) {
	options := []ShipOption{
		{Ship: "Fighter", Cost: 2},
		{Ship: "Dreadnought", Cost: 4, Upgrade: "p1-1"},
		{Ship: "Guardian", Cost: 1, Upgrade: "p1-2"},
		{Ship: "Guardian", Cost: 1, Upgrade: "p1-3"},
		{Ship: "Guardian", Cost: 4},
		{Ship: "Defense Swarm", Cost: 1, Upgrade: "p1-4"},
		{Ship: "Leviathan", Cost: 3, Upgrade: "p1-5"},
		{Ship: "Leviathan", Cost: 3, Upgrade: "p1-6"},
	}
	for _, tc := range []struct {
		line, ship, upgrade, problem string
	}{
		{"fighter", "Fighter", "", ""},
		{"Dreadnought", "Dreadnought", "p1-1", ""}, // only offered as an upgrade of one ship
		{"dreadnought  P1-1", "Dreadnought", "p1-1", ""},
		{"Guardian", "Guardian", "", ""}, // a new one, also offered
		{"Guardian p1-3", "Guardian", "p1-3", ""},
		{"Defense Swarm p1-4", "Defense Swarm", "p1-4", ""},
		{"Leviathan", "", "", "Leviathan is offered as an upgrade of several of your ships: say which"},
		{"Guardian p1-9", "", "", `"Guardian p1-9" is not a ship you can build or upgrade into now`},
		{"Nonesuch", "", "", `"Nonesuch" is not a ship you can build or upgrade into now`},
	} {
		c, problem := readBuild(tc.line, options)
		if c.Ship != tc.ship || c.Upgrade != tc.upgrade || problem != tc.problem {
			t.Errorf("readBuild(%q) = %+v, %q; want %s %s, %q", tc.line, c, problem, tc.ship, tc.upgrade, tc.problem)
		}
	}
}

// TestCatalogueShownOncePerSeat: a person's first build screen shows every
// ship and what it does; the next turns' screens name the options with
// their costs only, and /ships shows the catalogue at any prompt.
func TestCatalogueShownOncePerSeat(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "bot")})
	tbl := g.Table(false)
	st := g.Initial()
	p := &scripted{answers: []string{"none", "none", "none"}}
	for range 2 {
		move, err := tbl.Move(context.Background(), st, []string{P1}, p)
		if err != nil {
			t.Fatal(err)
		}
		st = turn(t, g, st, move.(Seats))
	}
	const what = "  - Fighter: cost 2, health 3. End of every turn, deal 2 damage to the opponent.\n"
	if len(p.screens) != 2 || !strings.Contains(p.screens[0], what) || strings.Contains(p.screens[1], what) {
		t.Fatalf("screens: want the catalogue on the first only:\n%s", strings.Join(p.screens, "\n----\n"))
	}
	if !strings.Contains(p.screens[1], "  - Fighter: cost 2\n") {
		t.Errorf("the second screen does not name the options with their costs:\n%s", p.screens[1])
	}
	if len(p.shortcuts) == 0 || p.shortcuts[0].Line != "/ships" || !strings.Contains(p.shortcuts[0].Show, what) {
		t.Errorf("shortcuts %+v: want /ships showing the catalogue", p.shortcuts)
	}
}

// TestUpgradeNote: an upgrade's cost is explained from the cost of the new
// ship to this seat and of the one it replaces, with the floor of 1 said
// when it applies; a new ship has no note.
func TestUpgradeNote(t *testing.T) {
	t.Parallel()
	p := &personSeat{}
	fleet := []ShipView{{ID: "p1-1", Ship: "Fighter"}, {ID: "p1-2", Ship: "Interceptor"}}
	for _, tc := range []struct {
		o    ShipOption
		want string
	}{
		{ShipOption{Ship: "Fighter", Cost: 2}, ""},
		{ShipOption{Ship: "Dreadnought", Cost: 4, Upgrade: "p1-1", Full: 6, Credit: 2}, " (upgrades your Fighter p1-1: a Dreadnought costs you 6, less the 2 a Fighter cost)"},
		{ShipOption{Ship: "Guardian", Cost: 1, Upgrade: "p1-2", Full: 3, Credit: 3}, " (upgrades your Interceptor p1-2: a Guardian costs you 3, less the 3 an Interceptor cost, at least 1)"},
	} {
		if got := p.upgradeNote(tc.o, fleet); got != tc.want {
			t.Errorf("upgradeNote(%+v) = %q, want %q", tc.o, got, tc.want)
		}
	}
}
