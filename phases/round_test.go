package phases

import (
	"runtime"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
)

// The pool starts a worker for each call waiting when none is idle, up to
// its bound, and none for a bound no tick reaches: llm.concurrency
// 1,000,000 started 2,000,000 workers (5.35 GB) for a tick of 72 calls.
// What the pool allocates is bounded by the calls that exist.
func TestPoolWorkersBoundedByCallsNotConcurrency(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		before := runtime.NumGoroutine()
		p := newPool(2 * llm.MaxConcurrency)
		if n := runtime.NumGoroutine() - before; n != 0 {
			t.Errorf("an idle pool of bound %d runs %d goroutines, want none", 2*llm.MaxConcurrency, n)
		}
		const calls = 3
		release := make(chan struct{})
		var running sync.WaitGroup
		for range calls {
			running.Add(1)
			p.submit(1, func() {
				running.Done()
				<-release
			})
		}
		running.Wait() // each call has a worker of its own: none waits for another
		if n := runtime.NumGoroutine() - before; n != calls {
			t.Errorf("%d calls in flight run on %d goroutines, want %d", calls, n, calls)
		}
		close(release)
		synctest.Wait() // the workers are idle
		var done sync.WaitGroup
		for range calls {
			done.Add(1)
			p.submit(2, done.Done)
		}
		done.Wait()
		if n := runtime.NumGoroutine() - before; n != calls {
			t.Errorf("%d more calls, one at a time on idle workers, left %d goroutines, want the same %d", calls, n, calls)
		}
		p.close()
	})
}

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
	n.ahead.setup(n.Sim, false)
	n.ahead.pool = newPool(2)
	defer n.ahead.drop()
	st := n.Sim.InitialState()
	if len(st.Characters) == 0 {
		t.Fatal("the test world has no characters")
	}

	r := n.newRound(t.Context(), 1, true)
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
	if c := srv.CallCount(); c < len(st.Characters) { // and game masters asked early
		t.Errorf("%d calls once the commit ended, want one per character (%d) at least", c, len(st.Characters))
	}
	// The tick before is not stored (afterStored), so no game master is
	// asked: the tasks hold no room for answers yet to come.
	r.mu.Lock()
	for i, task := range r.tasks {
		if task.called || task.parts != nil || task.logs != nil {
			t.Errorf("location %s: game master asked %v, room for %d answers before it is", n.Sim.Locations[i].ID, task.called, len(task.parts))
		}
	}
	if r.outs != nil {
		t.Errorf("room for %d locations' outcomes before any resolved", len(r.outs))
	}
	r.mu.Unlock()
	r.stop()
}

// TestLockstepIsTheWholeWorldsNeighbourhood: out of order, a location of
// the next round is ready once itself and the locations with a connection
// into it have resolved (the cellar, fed by the garden); in lockstep, no
// location is ready before every location has resolved, then all are.
func TestLockstepIsTheWholeWorldsNeighbourhood(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lockstep   bool
		afterTwo   []string // ready once the cellar and the garden have resolved
		afterThree []string // ready once the hall has too
	}{
		{false, []string{"cellar"}, []string{"cellar", "garden", "hall"}},
		{true, nil, []string{"cellar", "garden", "hall"}},
	} {
		n := &Narrative{Sim: testWorld(), Lockstep: tc.lockstep}
		n.ahead.setup(n.Sim, n.Lockstep)
		st := n.Sim.InitialState()
		r := n.newRound(t.Context(), 2, true)
		gate := make(chan struct{}) // held: ready, never started
		r.hold(gate)
		ready := func() []string {
			r.mu.Lock()
			defer r.mu.Unlock()
			var ids []string
			for _, i := range r.ready {
				ids = append(ids, n.Sim.Locations[i].ID)
			}
			slices.Sort(ids)
			return ids
		}
		index := func(id string) int { return n.ahead.index[id] }
		r.feed(index("cellar"), st)
		r.feed(index("garden"), st)
		if got := ready(); !slices.Equal(got, tc.afterTwo) {
			t.Errorf("lockstep %v: ready after the cellar and the garden = %v, want %v", tc.lockstep, got, tc.afterTwo)
		}
		r.feed(index("hall"), st)
		if got := ready(); !slices.Equal(got, tc.afterThree) {
			t.Errorf("lockstep %v: ready after every location = %v, want %v", tc.lockstep, got, tc.afterThree)
		}
		r.stop()
		close(gate)
	}
}

// A round made ahead exists for a whole tick before most of its calls
// end: it holds an outcome only for a call that has ended, so what it
// allocates before its calls is a few words a character, not a call's
// outcome each (about 600 bytes: 58 MB at 100,000 characters).
func TestRoundAheadHoldsNoOutcomeBeforeItsCall(t *testing.T) {
	const chars = 10000
	n := &Narrative{Sim: grid(chars, chars/10)}
	n.ahead.setup(n.Sim, false)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := n.newRound(t.Context(), 2, true)
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / chars; per > 256 {
		t.Errorf("a round of %d characters allocates %d bytes a character before any call, want at most 256", chars, per)
	}
	r.release()
}

// TestRoundLetsGoOfIntentionsOnceThePhaseHasThem: once the intention phase
// has a round's outcomes, the round holds none of them (a tick at 100,000
// characters held all its intentions' outcomes through its game masters'
// calls, 70 MB), and each character's exchange still enters the history
// when its location resolves.
func TestRoundLetsGoOfIntentionsOnceThePhaseHasThem(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	client, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "test", MaxAttempts: 1, Depth: 2, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	n, r := testRound(t, env, client)
	r.seed(n.Sim.InitialState())
	outs, err := r.intentions(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(n.Sim.Characters) {
		t.Fatalf("%d intentions, want %d", len(outs), len(n.Sim.Characters))
	}
	r.mu.Lock()
	intents, logs := r.intents, r.ilogs
	r.mu.Unlock()
	if intents != nil || logs != nil {
		t.Errorf("the round holds %d outcomes and %d logs once the phase has them", len(intents), len(logs))
	}
	if _, err := r.resolve(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i, c := range n.Sim.Characters {
		o := outs[i]
		if o.Call.Err != nil {
			t.Fatalf("%s: %v", c.ID, o.Call.Err)
		}
		h := client.History().Get(IntentionKey(c.ID))
		if len(h) != 1 || h[0].User != o.Call.Request.Record || h[0].Assistant != o.Call.Raw || h[0].User == "" {
			t.Errorf("%s's history %+v; want its intention's record and answer %q", c.ID, h, o.Call.Raw)
		}
	}
}

// TestResolvedLocationHoldsWhatTheRoundAfterNeeds: a location that has
// resolved holds neither its state before nor what its calls read from it,
// and its state after only until the round after is fed with it.
func TestResolvedLocationHoldsWhatTheRoundAfterNeeds(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	n, r := testRound(t, env, env.Model)
	r.seed(n.Sim.InitialState())
	if _, err := r.intentions(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := r.resolve(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	for i, task := range r.tasks {
		id := n.Sim.Locations[i].ID
		if task.before != nil || task.w != nil || task.asks != nil || task.parts != nil {
			t.Errorf("%s resolved, and holds its state before (%v), its snapshot (%v), its intentions (%d) or its answers (%d)",
				id, task.before != nil, task.w != nil, len(task.asks), len(task.parts))
		}
		if task.after == nil {
			t.Errorf("%s resolved with no round after, and holds no state after for it", id)
		}
	}
	r.mu.Unlock()
	next := n.newRound(t.Context(), 2, true)
	defer next.release()
	next.hold(make(chan struct{})) // fed, not started
	r.follow(next)
	r.mu.Lock()
	for i, task := range r.tasks {
		if task.after != nil {
			t.Errorf("%s holds its state after once the round after was fed with it", n.Sim.Locations[i].ID)
		}
	}
	r.mu.Unlock()
	next.mu.Lock()
	if ready := len(next.ready); ready != len(n.Sim.Locations) {
		t.Errorf("%d locations of the round after ready, want all %d", ready, len(n.Sim.Locations))
	}
	chars := 0
	for _, task := range next.tasks {
		chars += len(task.before.Characters)
	}
	if chars != len(n.Sim.Characters) {
		t.Errorf("the round after was fed %d characters, want %d", chars, len(n.Sim.Characters))
	}
	next.mu.Unlock()
}

// TestLastRoundHoldsNoStateAfter: a round no round follows (the run's last
// tick) holds no location's state after once resolved, nor its outcomes
// once the resolution phase has them.
func TestLastRoundHoldsNoStateAfter(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	n, r := testRound(t, env, env.Model)
	r.last()
	r.seed(n.Sim.InitialState())
	if _, err := r.intentions(t.Context()); err != nil {
		t.Fatal(err)
	}
	outs, err := r.resolve(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != len(n.Sim.Locations) {
		t.Errorf("%d outcomes, want one per location (%d)", len(outs), len(n.Sim.Locations))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.outs != nil {
		t.Error("the round holds its outcomes once the resolution phase has them")
	}
	for i, task := range r.tasks {
		if task.after != nil {
			t.Errorf("%s holds its state after, and no round follows", n.Sim.Locations[i].ID)
		}
	}
}

// testRound is the round of tick 1 of env's world, its calls made to
// model, not started; the test ends it.
func testRound(t *testing.T, env Env, model Client) (*Narrative, *round) {
	t.Helper()
	n := &Narrative{Sim: env.Sim, Prompts: env.Prompts, Model: model, Intention: env.Params, Resolution: env.Params, Logger: env.Logger}
	n.ahead.setup(n.Sim, false)
	n.ahead.pool = newPool(2)
	r := n.newRound(t.Context(), 1, true)
	t.Cleanup(func() {
		r.release()
		n.ahead.drop()
	})
	return n, r
}
