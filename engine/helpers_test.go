package engine

import (
	"context"
	"slices"
	"testing"
)

func amt(n int) *int { return &n }

// rig is an engine on a test catalog, a two-player state and the trace of
// everything that happened.
type rig struct {
	t     *testing.T
	e     *Engine
	s     *State
	trace []Trace
	dice  []int // the dice roll returns, in order (then 3s)
	d     *decider
}

func newRig(t *testing.T, defs ...Definition) *rig {
	t.Helper()
	custom := map[string]CustomFunc{
		"two_lines": func(*State, *Ship, Modifiers) []Effect { return []Effect{{Type: GainLines, Amount: 2}} },
	}
	cat, err := NewCatalog(defs, []string{"two_lines"})
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(cat, Scheduled, custom)
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{t: t, e: e, s: NewState(30, "p1", "p2"), d: &decider{}}
	e.Observer = func(tr Trace) { r.trace = append(r.trace, tr) }
	return r
}

// place puts a ship of def into play for player as if built on turn.
func (r *rig) place(player, def string, turn int) *Ship {
	was := r.s.Turn
	r.s.Turn = turn
	sh := r.e.create(r.s, player, def)
	r.s.Turn = was
	return sh
}

func (r *rig) turn() {
	r.t.Helper()
	if err := r.e.Turn(context.Background(), r.s, r.d, r.roll); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) roll() int {
	if len(r.dice) == 0 {
		return 3
	}
	d := r.dice[0]
	r.dice = r.dice[1:]
	return d
}

// steps returns the traces of step st (of ship, when not "").
func (r *rig) steps(st Step, ship string) []Trace {
	var out []Trace
	for _, tr := range r.trace {
		if tr.Step == st && (ship == "" || tr.Ship == ship) {
			out = append(out, tr)
		}
	}
	return out
}

func (r *rig) fired(ship string) int { return len(r.steps(StepFired, ship)) }

// decider builds what build says on each turn and declares what declare
// says; it records who was asked.
type decider struct {
	build   map[int]map[string]string // turn -> player -> def
	upgrade map[int]map[string]string // turn -> player -> the ship upgraded into build's def
	declare func(s *State, phase PowerPhase, player string, opts []ChargeOption) []Declaration
	asked   []string
}

func (d *decider) Build(_ context.Context, s *State, player string, _ []BuildOption) (BuildChoice, error) {
	if up := d.upgrade[s.Turn][player]; up != "" {
		return BuildChoice{Def: d.build[s.Turn][player], Upgrade: up}, nil
	}
	return BuildChoice{Def: d.build[s.Turn][player]}, nil
}

func (d *decider) Declare(_ context.Context, s *State, phase PowerPhase, player string, opts []ChargeOption) ([]Declaration, error) {
	d.asked = append(d.asked, string(phase)+" "+player)
	if d.declare == nil || len(opts) == 0 {
		return nil, nil
	}
	return d.declare(s, phase, player, opts), nil
}

func phasesOf(trace []Trace) []PowerPhase {
	var out []PowerPhase
	for _, tr := range trace {
		if tr.Step == StepPhase {
			out = append(out, tr.Phase)
		}
	}
	return out
}

func ship(id string, cost, health int, powers ...Power) Definition {
	return Definition{ID: id, Cost: cost, Health: health, Powers: powers}
}

func index(trace []Trace, match func(Trace) bool) int { return slices.IndexFunc(trace, match) }
