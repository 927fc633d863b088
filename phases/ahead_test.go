package phases

import (
	"sync"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// A job the pool has run is no longer reachable from its queue: a round's
// jobs hold the round, and a round holds its tick's calls, prompts kept
// for the commit included, so a popped slot left in the heap's backing
// array kept finished ticks in memory.
func TestPoolForgetsJobsItRan(t *testing.T) {
	p := newPool(2)
	var wg sync.WaitGroup
	for tick := range 3 {
		for range 100 {
			wg.Add(1)
			p.submit(tick, wg.Done)
		}
	}
	wg.Wait()
	p.close()
	if len(p.jobs) != 0 {
		t.Fatalf("%d jobs still queued after close", len(p.jobs))
	}
	for i, j := range p.jobs[:cap(p.jobs)] {
		if j.run != nil {
			t.Fatalf("slot %d of the queue's array still holds a job that ran (tick %d)", i, j.tick)
		}
	}
}

// A round held behind the runner's commit (runner.Tick.Before) starts no
// location, and makes no call, until the commit has ended; then every
// location whose neighbourhood has resolved starts.
func TestHeldRoundWaitsForTheCommitBefore(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	n := &Narrative{Sim: env.Sim, Prompts: env.Prompts, Model: env.Model, Intention: env.Params, Resolution: env.Params, Logger: env.Logger}
	n.ahead.setup(n.Sim)
	n.ahead.pool = newPool(2)
	defer n.ahead.drop()
	st := n.Sim.InitialState()
	if len(st.Characters) == 0 {
		t.Fatal("the test world has no characters")
	}

	r := n.newRound(t.Context(), 1)
	gate := make(chan struct{})
	r.hold(gate)
	for i := range n.Sim.Locations {
		r.feed(i, st)
	}
	r.mu.Lock()
	for i, task := range r.tasks {
		if task.started {
			t.Errorf("location %s started while the commit before was in flight", n.Sim.Locations[i].ID)
		}
	}
	ready := len(r.ready)
	r.mu.Unlock()
	if ready != len(n.Sim.Locations) {
		t.Errorf("%d locations ready, want all %d", ready, len(n.Sim.Locations))
	}
	if c := srv.CallCount(); c != 0 {
		t.Errorf("%d calls made while the commit before was in flight", c)
	}

	close(gate)
	<-r.allI
	if c := srv.CallCount(); c < len(st.Characters) { // and arbiters asked early
		t.Errorf("%d calls once the commit ended, want one per character (%d) at least", c, len(st.Characters))
	}
	r.stop()
}
