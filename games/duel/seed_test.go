package duel

import (
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
)

// The four test cases of seed 003, on the duel's own catalog.

// Test 1: Zenith destroyed by a Guardian charge makes 3 Xenites before it
// is removed.
func TestZenithDestructionMakesThreeXenitesBeforeRemoval(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "person")})
	st := g.Initial()
	guardian := give(st, P1, "Guardian", 5, 3)
	zenith := give(st, P2, "Zenith", 4, 0)
	var xenitesAtFire, xenitesAtRemoval = -1, -1
	zenithAliveAtFire := false
	var next *State
	count := func() int {
		n := 0
		for _, sh := range next.Board.Ships {
			if sh.Owner == P2 && sh.Def == "Xenite" && !sh.Destroyed {
				n++
			}
		}
		return n
	}
	g.observe = func(tr engine.Trace) {
		if tr.Ship != zenith.ID {
			return
		}
		switch {
		case tr.Step == engine.StepFired && tr.Timing == engine.UponDestruction:
			xenitesAtFire = count()
			zenithAliveAtFire = !next.Board.Ship(zenith.ID).Destroyed
		case tr.Step == engine.StepDestroyed:
			xenitesAtRemoval = count()
		}
	}
	fire := chooser{charges: func(v ChargeView) ChargeChoice {
		return ChargeChoice{Fire: []engine.Declaration{{Ship: guardian.ID, Target: zenith.ID}}}
	}}
	// The observer reads the board being played, so the engine's turn is
	// played here on a clone we hold.
	next = st.clone()
	eng, err := engine.New(g.cat, engine.Scheduled, custom)
	if err != nil {
		t.Fatal(err)
	}
	eng.Observer = g.observe
	se := &seats{g: g, people: Seats{P1: fire, P2: chooser{}}, eng: eng, log: &TurnLog{}}
	if err := eng.Turn(t.Context(), next.Board, se, func() int { return 1 }); err != nil {
		t.Fatal(err)
	}
	if xenitesAtFire != 0 || !zenithAliveAtFire {
		t.Errorf("when its power fired: %d Xenites, Zenith alive %v; want 0 and alive", xenitesAtFire, zenithAliveAtFire)
	}
	if xenitesAtRemoval != 3 {
		t.Errorf("%d Xenites when the Zenith was marked destroyed, want 3", xenitesAtRemoval)
	}
	if !next.Board.Ship(zenith.ID).Destroyed || count() != 3 {
		t.Errorf("after the turn: Zenith destroyed %v, %d Xenites", next.Board.Ship(zenith.ID).Destroyed, count())
	}
}

// Test 2: an Orbital built on turn 1 gains 1 line on turn 1 and none on
// turn 2.
func TestOrbitalFiresOnBuildTurnOnly(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "person")})
	built := false
	orbital := chooser{build: func(v BuildView) BuildChoice {
		if built {
			return BuildChoice{}
		}
		built = true
		return BuildChoice{Ship: "Orbital"}
	}}
	gained := map[int]int{}
	g.observe = func(tr engine.Trace) {
		if tr.Step == engine.StepApplied && tr.Ship != "" && tr.Effect == engine.GainLines {
			gained[tr.Turn] += tr.Amount
		}
	}
	st := g.Initial()
	st = turn(t, g, st, Seats{P1: orbital, P2: chooser{}})
	st = turn(t, g, st, Seats{P1: orbital, P2: chooser{}})
	if gained[1] != 1 || gained[2] != 0 {
		t.Errorf("Orbital gained %d lines on turn 1 and %d on turn 2, want 1 and 0", gained[1], gained[2])
	}
	if u := st.Board.Ship("p1-1").Usage; len(u) != 1 || u[0].Turn != 1 {
		t.Errorf("usage %+v, want one firing on turn 1", u)
	}
}

// Test 3: with a Leviathan in play its owner's dice always show 6.
func TestLeviathanForcesSix(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "person"), "seed": 3})
	st := g.Initial()
	give(st, P1, "Leviathan", 10, 0)
	other := map[int]bool{}
	for range 12 { // the Leviathan's 2 damage a turn ends the game on turn 15
		st = turn(t, g, st, Seats{P1: chooser{}, P2: chooser{}})
		if d := st.Board.Player(P1).Dice; d != 6 {
			t.Fatalf("turn %d: p1 rolled %d with a Leviathan", st.Board.Turn, d)
		}
		other[st.Board.Player(P2).Dice] = true
	}
	if len(other) < 3 {
		t.Errorf("p2 rolled only %v in 12 turns: the dice are not rolled", other)
	}
}

// Test 4: a Science Vessel doubles a Defender's healing, 6 instead of 3.
func TestScienceVesselDoublesDefenderHealingToSix(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		vessel  bool
		healing int
	}{{"with a Science Vessel", true, 6}, {"without", false, 3}} {
		t.Run(tt.name, func(t *testing.T) {
			g := newGame(t, map[string]any{"seats": people("person", "person")})
			st := g.Initial()
			st.Board.Player(P1).Health = 20
			defender := give(st, P1, "Defender", 4, 0)
			if tt.vessel {
				give(st, P1, "Science Vessel", 3, 0)
			}
			healed := -1
			g.observe = func(tr engine.Trace) {
				if tr.Step == engine.StepApplied && tr.Ship == defender.ID && tr.Effect == engine.Heal {
					healed = tr.Amount
				}
			}
			st = turn(t, g, st, Seats{P1: chooser{}, P2: chooser{}})
			if healed != tt.healing || st.Board.Player(P1).Health != 20+tt.healing {
				t.Errorf("Defender healed %d (health %d), want %d", healed, st.Board.Player(P1).Health, tt.healing)
			}
		})
	}
}

// Sacrificial Pool, the seed's example of a passive: "Ships cannot be
// destroyed". Its owner's ships, the Pool itself included, survive lethal
// damage at 1 health while it is in play; the Pool is queried, never fired.
// issue 21 item 11
func TestSacrificialPoolShipsCannotBeDestroyed(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "person")})
	st := g.Initial()
	guardian := give(st, P1, "Guardian", 5, 3)
	pool := give(st, P2, "Sacrificial Pool", 5, 0)
	fighter := give(st, P2, "Fighter", 3, 0)
	target := pool.ID
	fire := chooser{charges: func(v ChargeView) ChargeChoice {
		return ChargeChoice{Fire: []engine.Declaration{{Ship: guardian.ID, Target: target}}}
	}}
	ppl := Seats{P1: fire, P2: chooser{}}
	st = turn(t, g, st, ppl) // 4 damage to the Pool at 5 health: 1 left
	st = turn(t, g, st, ppl) // 4 more, lethal
	if sh := st.Board.Ship(pool.ID); sh.Destroyed || sh.Health != 1 {
		t.Errorf("the Pool after lethal damage: health %d destroyed %v; want 1, not destroyed", sh.Health, sh.Destroyed)
	}
	target = fighter.ID
	st = turn(t, g, st, ppl)
	for _, id := range []string{pool.ID, fighter.ID} {
		if sh := st.Board.Ship(id); sh.Destroyed || sh.Health != 1 {
			t.Errorf("%s %s: health %d destroyed %v; want it kept at 1", id, sh.Def, sh.Health, sh.Destroyed)
		}
	}
	if !strings.Contains(strings.Join(st.Log.Events, "\n"), "survives at 1 health (protected)") {
		t.Errorf("the turn log does not say the Fighter was protected: %v", st.Log.Events)
	}
}

// Hive, the seed's example of a passive: "Ships in upgrades count". A ship
// its owner upgraded into another still counts as one of their ships while
// the upgrade is in play: the Ark of Knowledge (1 line for every 2 other
// ships) counts it with a Hive, and not without one.
// issue 21 item 11
func TestHiveCountsShipsInUpgrades(t *testing.T) {
	t.Parallel()
	arkLines := func(withHive bool) int {
		g := newGame(t, map[string]any{"seats": people("person", "person")})
		st := g.Initial()
		ark := give(st, P1, "Ark of Knowledge", 6, 0)
		defender := give(st, P1, "Defender", 4, 0)
		swarm := give(st, P1, "Defense Swarm", 4, 0)
		defender.UpgradedInto = swarm.ID
		give(st, P1, "Orbital", 2, 0)
		if withHive {
			give(st, P1, "Hive", 4, 0)
		} else {
			give(st, P1, "Orbital", 2, 0) // as many ships in play
		}
		lines, queried := 0, false
		g.observe = func(tr engine.Trace) {
			if tr.Step == engine.StepApplied && tr.Ship == ark.ID && tr.Effect == engine.GainLines {
				lines += tr.Amount
			}
			if tr.Step == engine.StepQuery && tr.Query == "upgrades_count" {
				queried = true
			}
			if tr.Step == engine.StepFired && tr.Def == "Hive" {
				t.Errorf("the Hive's PASSIVE power fired")
			}
		}
		turn(t, g, st, Seats{P1: chooser{}, P2: chooser{}})
		if queried != withHive {
			t.Errorf("with Hive %v: upgrades_count queried %v", withHive, queried)
		}
		return lines
	}
	// Ark, Swarm, an Orbital and a fourth ship in play: 3 others, 1 line.
	// With a Hive, the Defender in the Swarm's upgrade counts too: 4
	// others, 2 lines.
	if got := arkLines(false); got != 1 {
		t.Errorf("without a Hive the Ark gained %d lines, want 1", got)
	}
	if got := arkLines(true); got != 2 {
		t.Errorf("with a Hive the Ark gained %d lines, want 2", got)
	}
}

// DRAWING is "Build/upgrade ships": a person upgrades a Fighter into a
// Dreadnought, paying the difference (6-2 = 4); the Fighter leaves play
// into it, and the turn log says so.
// issue 21 item 11
func TestDrawingUpgradesAFighterIntoADreadnought(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "person")})
	st := g.Initial()
	fighter := give(st, P1, "Fighter", 3, 0)
	st.Board.Player(P1).Lines = 3
	var seen []ShipOption
	up := chooser{build: func(v BuildView) BuildChoice {
		seen = v.Options
		return BuildChoice{Ship: "Dreadnought", Upgrade: fighter.ID}
	}}
	st = turn(t, g, st, Seats{P1: up, P2: chooser{}})
	if !slices.ContainsFunc(seen, func(o ShipOption) bool { return o.Ship == "Dreadnought" && o.Upgrade == fighter.ID && o.Cost == 4 }) {
		t.Errorf("options %+v: want Dreadnought upgrading %s for 4", seen, fighter.ID)
	}
	old := st.Board.Ship(fighter.ID)
	fleet := st.Board.Fleet(P1)
	if old.UpgradedInto == "" || old.Destroyed || len(fleet) != 1 || fleet[0].Def != "Dreadnought" || fleet[0].ID != old.UpgradedInto {
		t.Errorf("Fighter %+v, fleet %v: want the Fighter upgraded into the Dreadnought in play", *old, fleet)
	}
	if want := 3 + st.Board.Player(P1).Dice - 4; st.Board.Player(P1).Lines != want {
		t.Errorf("lines %d, want %d", st.Board.Player(P1).Lines, want)
	}
	if !slices.Contains(st.Log.Choices, "p1 upgrades p1-1 Fighter into Dreadnought") {
		t.Errorf("choices %q", st.Log.Choices)
	}
}
