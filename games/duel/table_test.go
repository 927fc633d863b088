package duel

import "testing"

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
