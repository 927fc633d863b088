package duel

import (
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
)

// fuzzBoard is a board with ships that can build and fire, and its engine.
func fuzzBoard(t testing.TB) (*Game, *engine.Engine, *State) {
	g := newGame(t, nil)
	st := g.Initial()
	st.Board.Turn = 2
	st.Board.Player(P1).Lines = 4
	give(st, P1, "Guardian", 5, 2)
	give(st, P1, "Interceptor", 3, 1)
	give(st, P2, "Zenith", 6, 0)
	eng, err := engine.New(g.cat, engine.Scheduled, custom)
	if err != nil {
		t.Fatal(err)
	}
	return g, eng, st
}

// FuzzParseBuild: whatever a model answers, the parser never panics, and
// what it accepts is a build the rules allow.
func FuzzParseBuild(f *testing.F) {
	for _, s := range []string{`{"ship":"Orbital","reason":"x"}`, `{"ship":"none","reason":""}`, `{"ship":"Dreadnought","reason":"x"}`,
		`{"ship":"Xenite"}`, `{}`, `[]`, `{"ship":1}`, `{"ship":"Orbital"} {}`, `{"ship":"Orbital","extra":1}`, ``, `null`,
		`{"ship":"Guardian","upgrade":"p1-2","reason":"x"}`, `{"ship":"Guardian","upgrade":"p1-1","reason":"x"}`, `{"ship":"none","upgrade":"p1-2"}`,
		`{"ship":"Dreadnought","upgrade":"p2-3"}`, `{"ship":"Orbital","upgrade":"none"}`} {
		f.Add([]byte(s))
	}
	g, eng, st := fuzzBoard(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := g.ParseBuild(eng, st.Board, P1, raw)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "build choice") {
				t.Errorf("error %q does not say it is about the build choice", err)
			}
			return
		}
		if err := eng.CheckBuild(st.Board, P1, c); err != nil {
			t.Errorf("accepted %+v, which the rules refuse: %v", c, err)
		}
	})
}

// FuzzParseCharges: the same for charge declarations.
func FuzzParseCharges(f *testing.F) {
	for _, s := range []string{`{"charges":[]}`, `{"charges":[{"ship":"p1-1","target":"opponent"}]}`,
		`{"charges":[{"ship":"p1-1","target":"p2-3"},{"ship":"p1-1","target":"p2-3"}]}`,
		`{"charges":[{"ship":"p2-3","target":"opponent"}]}`, `{"charges":null}`, `{"charges":[{}]}`, `{`, `{"charges":[{"ship":"p1-1","target":"p1-2"}]}`} {
		f.Add([]byte(s))
	}
	_, eng, st := fuzzBoard(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, phase := range []engine.PowerPhase{engine.FirstStrike, engine.SimultaneousDeclaration} {
			decls, err := ParseCharges(eng, st.Board, phase, P1, raw)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "charge declaration") {
					t.Errorf("error %q does not say it is about the declaration", err)
				}
				continue
			}
			if err := eng.CheckDeclarations(st.Board, phase, P1, decls); err != nil {
				t.Errorf("accepted %v, which the rules refuse: %v", decls, err)
			}
		}
	})
}

// FuzzParseCatalog: whatever a simulation's ships.yaml holds, the reader
// never panics, and a catalog it accepts has no PASSIVE power with a
// baseAmount, written or null (Rule 10).
func FuzzParseCatalog(f *testing.F) {
	for _, s := range []string{string(shipsYAML),
		"ships:\n  - {id: A, cost: 1, health: 1, powers: [{phase: PASSIVE, timing: PASSIVE, baseAmount: null, specialLogic: {protectsShips: true}}]}\n",
		"ships:\n  - {id: A, cost: 1, health: 1, powers: [{phase: PASSIVE, timing: PASSIVE, specialLogic: {protectsShips: true}}]}\n",
		"ships:\n  - {id: A, cost: 1, health: 1, powers: [{phase: AUTOMATIC, timing: CONTINUOUS, effectType: HEAL, baseAmount: 2}]}\n",
		"ships: [{id: A, powers: [null, {}]}]\n", "ships: {}\n", "", "---\n", "ships:\n  - id: A\n    powers:\n      - baseAmount: 1\n        baseAmount: 2\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		cat, err := ParseCatalog("f.yaml", []byte(doc))
		if err != nil {
			return
		}
		for _, d := range cat.Definitions() {
			for i, p := range d.Powers {
				if p.Timing == engine.Passive && (p.BaseAmount != nil || p.BaseAmountSet) {
					t.Fatalf("%s power %d: a PASSIVE power with a baseAmount loaded from %q", d.ID, i, doc)
				}
			}
		}
	})
}
