package phases

import (
	"context"
	"slices"
	"sync"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// plan is how Step plays the two phases of a tick: location by location
// (a round, round.go), or as Batch API jobs (batch.go).
type plan interface {
	intentions(ctx context.Context) ([]*Outcome[string], error)
	resolve(ctx context.Context) ([]Outcome[MasterOutput], error)
	// resolutions is how many game master calls the tick makes.
	resolutions() int
	// calls marks a phase's calls whose exchanges the plan has put in the
	// history itself.
	calls([]runner.Call) []runner.Call
	// end is told the state after the tick, nil when it did not play.
	end(next *world.State)
}

// plan picks tick t's plan from st.
func (n *Narrative) plan(ctx context.Context, t *runner.Tick, st *world.State) plan {
	if n.Batch {
		return n.batchPlan(t, st)
	}
	return &roundPlan{n: n, r: n.round(ctx, t, st)}
}

// ahead is a narrative's schedule between its Steps: the neighbourhoods
// of its locations, the round of the next tick, already under way, and
// the state it starts from. Only Step and DropAhead use it, one at a time.
type ahead struct {
	once   sync.Once // the neighbourhoods
	budget sync.Once // the notice that a budget plays each phase whole
	index  map[string]int
	chars  map[string]int // character id -> index in the simulation
	// need is, per location, how many locations of the round before it
	// waits for: itself and those with a connection into it. dependents
	// are those that wait for it: itself and those it connects to; in
	// lockstep, every location (all).
	need, all []int
	out       [][]int

	next *round       // the round of the tick after the last Step, if started
	base *world.State // the state that round starts from (the last Step's)
	pool *pool        // the workers of the rounds under way
}

// setup builds the neighbourhoods of sim's locations: with whole, every
// location's is the whole world.
func (a *ahead) setup(sim *world.Simulation, whole bool) {
	a.index = make(map[string]int, len(sim.Locations))
	for i, l := range sim.Locations {
		a.index[l.ID] = i
	}
	a.chars = make(map[string]int, len(sim.Characters))
	for i, c := range sim.Characters {
		a.chars[c.ID] = i
	}
	if whole {
		a.all = make([]int, len(sim.Locations))
		for i := range a.all {
			a.all[i] = i
		}
		return
	}
	a.need, a.out = make([]int, len(sim.Locations)), make([][]int, len(sim.Locations))
	for i := range sim.Locations {
		a.need[i], a.out[i] = 1, []int{i}
	}
	for i, l := range sim.Locations {
		for _, c := range l.Connections {
			j, ok := a.index[c]
			if !ok || slices.Contains(a.out[i], j) {
				continue
			}
			a.out[i] = append(a.out[i], j)
			a.need[j]++
		}
	}
}

// needs is how many locations of the round before location i waits for.
func (a *ahead) needs(i int) int {
	if a.all != nil {
		return len(a.all)
	}
	return a.need[i]
}

// dependents are the locations that wait for location i to resolve.
func (a *ahead) dependents(i int) []int {
	if a.all != nil {
		return a.all
	}
	return a.out[i]
}

// drop stops the work ahead, if any, and the workers.
func (a *ahead) drop() {
	if a.next != nil {
		a.next.stop()
		a.next, a.base = nil, nil
	}
	if a.pool != nil {
		a.pool.close()
		a.pool = nil
	}
}

// DropAhead drops the work started for ticks the run will not play
// (runner.Ahead): the run has stopped.
func (n *Narrative) DropAhead() { n.ahead.drop() }

// round returns the round of tick t.N from st: the one the last Step
// started, when it starts from st, or a new one with every location ready.
// With t.N before the run's last tick, the round of the next tick is made
// too, to start each location as soon as this round lets it. Under a
// budget, the round starts when its intention phase begins, and none is
// made ahead (invariant 3).
func (n *Narrative) round(ctx context.Context, t *runner.Tick, st *world.State) *round {
	a := &n.ahead
	a.once.Do(func() { a.setup(n.Sim, n.Lockstep) })
	early := !t.Budgeted()
	if !early {
		a.budget.Do(func() {
			t.Log().Info("ticks run in lockstep: a token or cost budget is checked before each phase, so no call may start before its phase")
		})
	}
	r := a.next
	if r == nil || a.base != st {
		a.drop()
		a.pool = newPool(n.Model.Workers())
		r = n.newRound(ctx, t.N, early)
		if early {
			r.seed(st)
		} else {
			r.from = st
		}
	}
	a.next, a.base = nil, nil
	r.afterStored(t.Before())
	// Its gate is closed by now (the runner has awaited that commit), but
	// hold's goroutine may not have started the locations ready yet: the
	// phases count on every location having started once the round
	// before has resolved.
	r.open()
	if early && t.N < t.Last() {
		next := n.newRound(ctx, t.N+1, true)
		next.hold(t.Before())
		r.follow(next)
	} else {
		r.last()
	}
	return r
}

// roundPlan plays a tick as a round.
type roundPlan struct {
	n *Narrative
	r *round
}

func (p *roundPlan) intentions(ctx context.Context) ([]*Outcome[string], error) {
	return p.r.intentions(ctx)
}

func (p *roundPlan) resolve(ctx context.Context) ([]Outcome[MasterOutput], error) {
	return p.r.resolve(ctx)
}

func (p *roundPlan) resolutions() int { return p.r.calls() }

func (p *roundPlan) calls(cs []runner.Call) []runner.Call {
	if p.r.remember != nil {
		for i := range cs {
			cs[i].Remembered = true
		}
	}
	return cs
}

// end ends Step's use of the round, whose tick became next: the round
// after it, if any, starts from next. With no round after it, or when the
// tick did not play, the workers go.
func (p *roundPlan) end(next *world.State) {
	r, a := p.r, &p.n.ahead
	if next == nil {
		r.stop()
		a.drop()
		return
	}
	r.release()
	r.mu.Lock()
	after := r.next
	r.mu.Unlock()
	if after == nil {
		a.drop()
		return
	}
	a.next, a.base = after, next
}
