package phases

import (
	"context"
	"log/slog"
	"sync"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// A narrative plays its ticks location by location (AI Metropolis, arXiv
// 2411.03519). Whatever a tick asks about location L, its characters'
// intentions and its game master's resolution, depends on the world after
// the tick before only through L and the characters in L then; those came
// from L or from a location with a connection into L. So L may play tick
// k+1 as soon as L and every location with a connection into it (its
// neighbourhood) have resolved tick k, while the rest of the world still
// works on tick k: a slow call holds up its neighbourhood, not the world.
// Lockstep is the same schedule with every location's neighbourhood the
// whole world: no location starts tick k+1 before all have resolved k.
//
// A round is one tick played that way: one task per location, started when
// its neighbourhood has resolved the round before, each task asking the
// intentions of the characters present and then its game master, and
// applying the answer to its own characters and location (applyAt, the
// code Apply runs for each location). The prompts of a task are rendered
// from a state that holds only the characters present and the location,
// and are the very prompts the whole world renders (prompts/data.go shows
// a prompt nothing else), so for the same answers the ticks are the same
// whatever the order of the calls.
//
// The runner still sees one tick at a time: Step waits in the intention
// phase until every intention of its tick is in, in the resolution phase
// until every location has resolved, then applies the whole tick and
// returns it for the runner to commit whole. What the next round did
// meanwhile is held in memory, its calls included, until its own Step
// reports them: if the run stops first, that work is dropped and a resumed
// run asks again.
//
// The invariants:
//  1. A task starts only once its neighbourhood has resolved the round
//     before, so its state before is whole when it starts: every character
//     that can be in its location came from there (a move goes to the
//     location itself or one it connects to; Apply refuses any other).
//  2. No round starts past the run's last tick, and a round's tasks start
//     only once the commit of the tick two before it has ended (hold): the
//     runner holds at most the calls of the tick Step plays and the next,
//     besides the tick committing.
//  3. A location's game master is asked before the resolution phase begins
//     only when all its characters' intentions succeeded, some intention
//     call of the round did, and the tick before the round's is stored
//     (afterStored; Step begins the resolution phase only then too): a
//     tick played while the tick before commits holds its intentions, not
//     its game masters' long answers besides. Under a token or cost budget
//     (early false) never, no round is started ahead, and the intention
//     calls start when their phase begins: the runner checks the budget
//     before each phase.
//  4. Each phase's deadline, set when the phase begins, bounds the calls of
//     that phase started before it (lateContext).
//  5. A task puts its exchanges in the history once it has resolved, before
//     any next call of those entities can start (each entity makes one call
//     a tick), so the histories sent are those of a tick played whole.
//  6. What a call logs is held and written when Step reaches its phase, in
//     the simulation's order.
//  7. A prompt or schema that cannot be built stops the round: the calls
//     under way are cancelled and no other starts.
//  8. Every field of round and task is either set before start (before the
//     first call that reads it is queued, and never written after: the
//     calls read it without the lock) or guarded by mu.

// round is one tick played location by location.
type round struct {
	n          *Narrative      // set before start
	tick       int             // set before start
	ienv, renv Env             // set before start
	ictx, rctx *lateContext    // of the intention and game master calls; set before start
	pool       *pool           // set before start
	remember   *llm.History    // nil when the model keeps none; set before start
	early      bool            // a game master may be asked before its phase (invariant 3); set before start
	from       *world.State    // under a budget, the state seeded when the intention phase begins; set before start
	allI, allR chan struct{}   // closed (under mu) when every intention is in, every location resolved; set before start
	gate       <-chan struct{} // see held; set before start (hold)

	mu        sync.Mutex
	tasks     []task                  // guarded by mu, but for the fields task says
	waiting   []int                   // per location: locations of the round before still to resolve; guarded by mu
	answered  bool                    // an intention call of the round has succeeded; guarded by mu
	stored    bool                    // the tick before r's is stored (afterStored); guarded by mu
	resolving bool                    // Step is in the resolution phase: every game master may be asked; guarded by mu
	dropped   bool                    // guarded by mu
	intents   []*Outcome[string]      // per character, in the simulation's order, nil until its call ends; nil once the phase has them; guarded by mu
	ilogs     [][]heldRecord          // per character: what its intention call logged, held; guarded by mu
	said      []said                  // per character, what its intention call adds to the history (keep), once it ends; nil without one; guarded by mu
	outs      []Outcome[MasterOutput] // per location, made when the first resolves, nil once the phase has them; guarded by mu
	leftI     int                     // intentions still to come; guarded by mu
	leftR     int                     // locations still to resolve; guarded by mu
	buildErr  error                   // guarded by mu
	next      *round                  // guarded by mu
	alone     bool                    // no round follows r (follow will not be called); guarded by mu
	// held is set while the commit of the tick two before r's may still
	// be running (hold, until gate is closed): the locations ready
	// meanwhile wait in ready.
	held  bool  // guarded by mu
	ready []int // guarded by mu
}

// task is one location's part of a round.
type task struct {
	// Filled by feed (under mu) until the task starts, then read-only;
	// let go (under mu) once it has resolved, as w and asks are.
	before *world.State // the tick before: only the characters present and the location
	// Set by start (under mu) before the task's first call is queued.
	w       *prompts.Snapshot
	present []string
	groups  []Group // its crowd, one game master call per group

	started  bool                    // guarded by mu
	pending  int                     // intentions still to come; guarded by mu
	fellBack bool                    // guarded by mu
	asks     map[string]string       // guarded by mu
	called   bool                    // its game master's calls are queued; guarded by mu
	parts    []Outcome[MasterOutput] // per call, made when they are queued, nil once it resolved; guarded by mu
	logs     [][]heldRecord          // per call: what it logged, held; made with parts; guarded by mu
	left     int                     // game master calls still to end; guarded by mu
	// after is its state after, held once it resolved until the round
	// after is fed with it (follow); guarded by mu.
	after *world.State
}

func (n *Narrative) newRound(ctx context.Context, tick int, early bool) *round {
	a := &n.ahead
	r := &round{n: n, tick: tick, ienv: n.env(n.Intention), renv: n.env(n.Resolution), pool: a.pool, early: early,
		ictx: newLateContext(ctx), rctx: newLateContext(ctx),
		tasks: make([]task, len(n.Sim.Locations)), waiting: make([]int, len(n.Sim.Locations)),
		intents: make([]*Outcome[string], len(n.Sim.Characters)),
		ilogs:   make([][]heldRecord, len(n.Sim.Characters)),
		leftI:   len(n.Sim.Characters), leftR: len(n.Sim.Locations), allI: make(chan struct{}), allR: make(chan struct{})}
	if h, ok := n.Model.(interface{ History() *llm.History }); ok {
		r.remember = h.History()
		r.said = make([]said, len(n.Sim.Characters))
	}
	if r.leftI == 0 {
		close(r.allI)
	}
	if r.leftR == 0 {
		close(r.allR)
	}
	for i := range r.tasks {
		r.tasks[i].before = &world.State{Tick: tick - 1, Characters: map[string]world.CharacterState{}, Locations: map[string]world.LocationState{}}
		r.waiting[i] = a.needs(i)
	}
	return r
}

// seed starts every location of r from st, the whole world after the tick
// before.
func (r *round) seed(st *world.State) {
	occ := st.Occupancy()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, l := range r.n.Sim.Locations {
		b := r.tasks[i].before
		for _, id := range occ[l.ID] {
			b.Characters[id] = st.Characters[id]
		}
		b.Locations[l.ID] = st.Locations[l.ID]
		r.waiting[i] = 0
		r.start(i)
	}
}

// follow makes next the round after r: each of its locations starts once
// its neighbourhood has resolved in r, those that already have at once.
func (r *round) follow(next *round) {
	r.mu.Lock()
	r.next = next
	done := map[int]*world.State{}
	for i := range r.tasks {
		if t := &r.tasks[i]; t.after != nil {
			done[i], t.after = t.after, nil
		}
	}
	r.mu.Unlock()
	for i := range r.tasks {
		if after, ok := done[i]; ok {
			next.feed(i, after)
		}
	}
}

// last says no round follows r: its locations keep no state after for
// one (a run's last tick, or one played under a budget).
func (r *round) last() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.alone = true
	for i := range r.tasks {
		r.tasks[i].after = nil
	}
}

// feed takes location i's state after the round before (after: its
// characters then, wherever they went, and the location).
func (r *round) feed(i int, after *world.State) {
	a := &r.n.ahead
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dropped {
		return
	}
	for id, cs := range after.Characters {
		if j, ok := a.index[cs.Location]; ok {
			r.tasks[j].before.Characters[id] = cs
		}
	}
	id := r.n.Sim.Locations[i].ID
	r.tasks[i].before.Locations[id] = after.Locations[id]
	for _, j := range a.dependents(i) {
		if r.waiting[j]--; r.waiting[j] > 0 {
			continue
		}
		if r.held {
			r.ready = append(r.ready, j)
			continue
		}
		r.start(j)
	}
}

// hold keeps r's locations from starting until gate is closed: the
// runner closes it once the tick before the one it plays is committed
// (runner.Tick.Before), so the work ahead and the calls it holds for its
// commit span at most the tick played and r's, as the tick played and
// the one committing do. Called before r is fed.
func (r *round) hold(gate <-chan struct{}) {
	select {
	case <-gate:
		return
	default:
	}
	r.gate = gate
	r.mu.Lock()
	r.held = true
	r.mu.Unlock()
	go func() {
		<-gate // closed when the commit ends, stored or not
		r.open()
	}()
}

// open starts the locations of r held ready, once its gate is closed.
func (r *round) open() {
	if r.gate != nil {
		<-r.gate
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.held {
		return
	}
	r.held = false
	if r.dropped {
		return
	}
	for _, i := range r.ready {
		r.start(i)
	}
	r.ready = nil
}

// afterStored lets r's game masters be asked before the resolution phase
// once gate is closed: the runner closes it once the tick before r's is
// stored (runner.Tick.Before), or its commit has failed.
func (r *round) afterStored(gate <-chan struct{}) {
	open := func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.stored = true
		if r.dropped {
			return
		}
		for i := range r.tasks {
			r.tryResolve(i)
		}
	}
	select {
	case <-gate:
		open()
	default:
		go func() {
			<-gate
			open()
		}()
	}
}

// start asks the intentions of location i's characters; r.mu is held.
func (r *round) start(i int) {
	t := &r.tasks[i]
	t.started = true
	t.w = prompts.NewSnapshot(r.n.Sim, t.before)
	t.present = t.w.Present(r.n.Sim.Locations[i].ID)
	t.pending = len(t.present)
	t.asks = make(map[string]string, len(t.present))
	t.groups = Groups(t.present, r.renv.perCall())
	t.left = len(t.groups)
	for _, id := range t.present {
		r.pool.submit(r.tick, func() { r.intention(i, id) })
	}
	r.tryResolve(i)
}

// intention makes character id's intention call, in location i.
func (r *round) intention(i int, id string) {
	t := &r.tasks[i]
	c := r.n.ahead.chars[id]
	if r.isDropped() {
		return
	}
	env := r.ienv
	env.Logger = slog.New(holdLog{next: r.ienv.logger().Handler(), held: &r.ilogs[c], mu: &r.mu})
	req, err := IntentionRequest(env, t.w, id)
	var out Outcome[string]
	if err != nil {
		r.fail(err)
	} else {
		out = intentionOutcome(r.ictx, env, t.before, id, r.n.Model.Complete(r.ictx, req))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intents[c] = &out
	if r.said != nil {
		ex, ok := out.Call.Exchange()
		r.said[c] = said{key: out.Call.Request.EntityKey, ex: ex, ok: ok}
	}
	t.pending--
	t.fellBack = t.fellBack || out.Fallback || err != nil
	t.asks[id] = out.Value
	if r.leftI--; r.leftI == 0 {
		close(r.allI)
	}
	if err == nil && !out.Fallback && !r.answered {
		r.answered = true
		for j := range r.tasks {
			r.tryResolve(j)
		}
		return
	}
	r.tryResolve(i)
}

// tryResolve queues location i's game master calls if they may be made
// now (invariant 3); r.mu is held.
func (r *round) tryResolve(i int) {
	t := &r.tasks[i]
	if !t.started || t.called || t.pending > 0 {
		return
	}
	if !r.resolving && (!r.early || !r.answered || !r.stored || t.fellBack) {
		return
	}
	t.called = true
	// Made now, not at start: a round ahead holds its tasks a tick
	// before their game masters are asked.
	t.parts, t.logs = make([]Outcome[MasterOutput], len(t.groups)), make([][]heldRecord, len(t.groups))
	for c := range t.groups {
		r.pool.submit(r.tick, func() { r.resolution(i, c) })
	}
}

// resolution makes call c of location i's game master; the last of them
// to end resolves the location (resolved).
func (r *round) resolution(i, c int) {
	t := &r.tasks[i]
	loc := r.n.Sim.Locations[i]
	if r.isDropped() {
		return
	}
	r.mu.Lock()
	failed := r.buildErr != nil
	asks := t.asks
	r.mu.Unlock()
	var part Outcome[MasterOutput]
	if !failed { // else no game master call is of use any more
		env := r.renv
		env.Logger = slog.New(holdLog{next: r.renv.logger().Handler(), held: &t.logs[c], mu: &r.mu})
		req, err := partRequest(env, t.w, loc, asks, t.groups[c])
		if err != nil {
			r.fail(err)
			failed = true
		} else {
			part = resolutionOutcome(r.rctx, env, t.before, loc, t.groups[c], r.n.Model.Complete(r.rctx, req))
		}
	}
	r.mu.Lock()
	t.parts[c] = part
	failed = failed || r.buildErr != nil
	t.left--
	last, parts := t.left == 0, t.parts
	r.mu.Unlock()
	if last {
		r.resolved(i, parts, failed)
	}
}

// resolved applies the answers of location i's game master, parts, to the
// location and the characters there, and lets the round after it go on.
// With failed, the round stops (invariant 7): nothing is applied.
func (r *round) resolved(i int, parts []Outcome[MasterOutput], failed bool) {
	t := &r.tasks[i]
	loc := r.n.Sim.Locations[i]
	var out Outcome[MasterOutput]
	var after *world.State
	if !failed {
		out = mergeParts(t.before, loc.ID, parts)
		after = t.before.Clone()
		after.Tick = r.tick
		applyAt(r.n.Sim, t.before, after, loc, out.Value) // its errors are the whole tick's Apply's to report
		r.keep(t, out)
	}
	r.mu.Lock()
	if r.outs == nil { // made by the first to resolve, as parts are (tryResolve)
		r.outs = make([]Outcome[MasterOutput], len(r.tasks))
	}
	r.outs[i] = out
	if r.leftR--; r.leftR == 0 {
		close(r.allR)
	}
	next := r.next
	if next == nil && !r.alone {
		t.after = after // for follow
	}
	// Every call of the task has ended: what they read is let go (a
	// round holds no state of a location it has resolved but what the
	// round after still waits for).
	t.before, t.w, t.asks, t.parts = nil, nil, nil, nil
	r.mu.Unlock()
	if next != nil && after != nil {
		next.feed(i, after)
	}
}

// keep puts the exchanges of task t's calls in the history, before the
// next calls of its entities can start (invariant 5).
func (r *round) keep(t *task, out Outcome[MasterOutput]) {
	if r.remember == nil {
		return
	}
	r.mu.Lock()
	for _, id := range t.present {
		if s := r.said[r.n.ahead.chars[id]]; s.ok {
			r.remember.Append(s.key, s.ex)
		}
	}
	r.mu.Unlock()
	if out.Parts == nil {
		r.remember.Commit(out.Call)
		return
	}
	for _, p := range out.Parts {
		r.remember.Commit(p.Call)
	}
}

// said is what an intention call adds to its entity's history: ex, under
// key, when ok (it succeeded).
type said struct {
	key string
	ex  llm.Exchange
	ok  bool
}

// fail records a prompt or schema that cannot be built: the tick stops,
// so the calls still under way are cancelled.
func (r *round) fail(err error) {
	r.mu.Lock()
	if r.buildErr == nil {
		r.buildErr = err
	}
	r.mu.Unlock()
	r.ictx.cancel(context.Canceled)
	r.rctx.cancel(context.Canceled)
}

func (r *round) isDropped() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dropped
}

// intentions is the intention phase of r's tick: pctx's deadline now
// bounds its calls, those under way included, and the outcomes come back
// in the simulation's order once all are in.
func (r *round) intentions(pctx context.Context) ([]*Outcome[string], error) {
	defer r.ictx.endWith(pctx)()
	if r.from != nil {
		r.seed(r.from)
	}
	<-r.allI
	r.mu.Lock()
	// The phase has the outcomes from here, and the history what keep
	// needs of them (said): the round lets them go.
	logs, outs, err := r.ilogs, r.intents, r.buildErr
	r.ilogs, r.intents = nil, nil
	r.mu.Unlock()
	flush(pctx, logs...)
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// resolve is the resolution phase of r's tick: every location's game
// master may now be asked, under pctx's deadline; the outcomes come back in
// the simulation's order once all locations have resolved.
func (r *round) resolve(pctx context.Context) ([]Outcome[MasterOutput], error) {
	defer r.rctx.endWith(pctx)()
	r.mu.Lock()
	r.resolving = true
	for i := range r.tasks {
		r.tryResolve(i)
	}
	r.mu.Unlock()
	<-r.allR
	r.mu.Lock()
	var logs [][]heldRecord
	for i := range r.tasks {
		logs = append(logs, r.tasks[i].logs...)
	}
	outs, err := r.outs, r.buildErr
	r.outs = nil // the phase's from here
	r.mu.Unlock()
	flush(pctx, logs...)
	if err != nil {
		return nil, err
	}
	return outs, nil
}

// calls is how many game master calls r makes: by the resolution phase,
// the round before has resolved, so every location has started.
func (r *round) calls() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for i := range r.tasks {
		n += len(r.tasks[i].groups)
	}
	return n
}

// stop drops r and the rounds after it: their calls are cancelled, and
// nothing more starts.
func (r *round) stop() {
	for r != nil {
		r.mu.Lock()
		r.dropped = true
		next := r.next
		r.mu.Unlock()
		r.release()
		r = next
	}
}

// release cancels what is left of r's calls and stops watching the
// context it was made in.
func (r *round) release() {
	r.ictx.cancel(context.Canceled)
	r.rctx.cancel(context.Canceled)
	r.ictx.release()
	r.rctx.release()
}
