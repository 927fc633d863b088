package duel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
)

// random is a person's seat that makes random choices among the legal ones
// (and sometimes builds or fires nothing), from its own seed.
func random(r *rand.Rand) chooser {
	return chooser{
		build: func(v BuildView) BuildChoice {
			if len(v.Options) == 0 || r.IntN(4) == 0 {
				return BuildChoice{}
			}
			o := v.Options[r.IntN(len(v.Options))]
			return BuildChoice{Ship: o.Ship, Upgrade: o.Upgrade}
		},
		charges: func(v ChargeView) ChargeChoice {
			var c ChargeChoice
			for _, o := range v.Options {
				if r.IntN(3) > 0 {
					c.Fire = append(c.Fire, engine.Declaration{Ship: o.Ship, Target: o.Targets[r.IntN(len(o.Targets))]})
				}
			}
			return c
		},
	}
}

// contract checks the seed's rules on the trace of a game.
type contract struct {
	once      map[string]int  // ship/power -> ONCE_ONLY firings
	marked    map[string]bool // ships marked, not yet destroyed
	destroyed map[string]bool
	built     map[string]int      // ship -> turn built
	phases    []engine.PowerPhase // of the current turn
	fired     int
	errs      []string
}

func newContract() *contract {
	return &contract{once: map[string]int{}, marked: map[string]bool{}, destroyed: map[string]bool{}, built: map[string]int{}}
}

func (c *contract) fail(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *contract) see(tr engine.Trace) {
	switch tr.Step {
	case engine.StepPhase:
		if !tr.Phase.Iterable() {
			c.fail("turn %d: iterated %s", tr.Turn, tr.Phase)
		}
		if tr.Phase == engine.DiceRoll {
			c.phases = nil
		}
		c.phases = append(c.phases, tr.Phase)
	case engine.StepBuilt:
		c.built[tr.Ship] = tr.Turn
	case engine.StepFired:
		c.fired++
		switch tr.Timing {
		case engine.Passive:
			c.fail("turn %d: PASSIVE power %d of %s executed", tr.Turn, tr.Power, tr.Ship)
		case engine.OnceOnly:
			key := fmt.Sprintf("%s/%d", tr.Ship, tr.Power)
			if c.once[key]++; c.once[key] > 1 {
				c.fail("turn %d: ONCE_ONLY %s fired twice", tr.Turn, key)
			}
			if b, ok := c.built[tr.Ship]; ok && b != tr.Turn {
				c.fail("turn %d: ONCE_ONLY %s fired, built on turn %d", tr.Turn, key, b)
			}
		case engine.UponDestruction:
			if !c.marked[tr.Ship] || c.destroyed[tr.Ship] {
				c.fail("turn %d: UPON_DESTRUCTION of %s fired outside its destruction", tr.Turn, tr.Ship)
			}
		case engine.Continuous, engine.OnShipCompleted:
			if c.destroyed[tr.Ship] {
				c.fail("turn %d: %s power of destroyed %s fired", tr.Turn, tr.Timing, tr.Ship)
			}
		}
	case engine.StepMarked:
		c.marked[tr.Ship] = true
	case engine.StepDestroyed:
		if !c.marked[tr.Ship] {
			c.fail("turn %d: %s destroyed without being marked", tr.Turn, tr.Ship)
		}
		c.destroyed[tr.Ship] = true
	}
}

// TestPropertyNoRuleBroken plays 500 seeded games with random seats and
// checks the contract on every step: no PASSIVE executed, no EVENT (or other
// hook) iterated, the nine phases in order every turn, no ONCE_ONLY fired
// twice or off its build turn, UPON_DESTRUCTION only between marked and
// destroyed, nothing fired by a destroyed ship, no panic, sane numbers.
func TestPropertyNoRuleBroken(t *testing.T) {
	t.Parallel()
	games := 500
	if testing.Short() {
		games = 50
	}
	var turns, fired, destroyed int
	results := map[string]int{}
	for seed := range games {
		g := newGame(t, map[string]any{"seed": seed, "seats": people("person", "person")})
		c := newContract()
		g.observe = c.see
		r := rand.New(rand.NewPCG(uint64(seed), 99))
		ppl := Seats{P1: random(r), P2: random(r)}
		st := g.Initial()
		for !st.Over() {
			st = turn(t, g, st, ppl)
			turns++
			if !slices.Equal(c.phases, engine.Scheduled) {
				c.fail("turn %d played %v", st.Board.Turn, c.phases)
			}
			for _, p := range st.Board.Players {
				if p.Lines < 0 || p.Health < 0 || p.Health > p.MaxHealth || p.Dice < 1 || p.Dice > 6 {
					c.fail("turn %d: %+v", st.Board.Turn, *p)
				}
			}
			for _, sh := range st.Board.Ships {
				if !sh.Destroyed && sh.Health < 1 || sh.Charges < 0 {
					c.fail("turn %d: ship %+v", st.Board.Turn, *sh)
				}
			}
		}
		if len(c.errs) > 0 {
			t.Fatalf("seed %d: %d rules broken, first: %v", seed, len(c.errs), c.errs[:min(5, len(c.errs))])
		}
		fired += c.fired
		destroyed += len(c.destroyed)
		results[st.Result]++
	}
	if destroyed == 0 || fired == 0 {
		t.Errorf("%d games destroyed %d ships and fired %d powers: the games do not exercise the rules", games, destroyed, fired)
	}
	t.Logf("%d games, %d turns, %d powers fired, %d ships destroyed, results %v", games, turns, fired, destroyed, results)
}
