package phases

import (
	"container/heap"
	"context"
	"log/slog"
	"slices"
	"sync"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// Out-of-order ticks (AI Metropolis, arXiv 2411.03519). Whatever a tick
// asks about location L, its characters' intentions and its game master's
// resolution, depends on the world after the tick before only through L and
// the characters in L then; those came from L or from a location with a
// connection into L. So L may play tick k+1 as soon as L and every location
// with a connection into it have resolved tick k, while the rest of the
// world still works on tick k: a slow call holds up its neighbourhood, not
// the world.
//
// A round is one tick played that way: one task per location, started when
// its neighbourhood of the round before has resolved, each task asking the
// intentions of the characters present and then its game master, and applying
// the answer to its own characters and location (applyAt, the code Apply
// runs for each location). The prompts of a task are rendered from a state
// that holds only the characters present and the location, and are the
// very prompts lockstep renders from the whole world (prompts/data.go shows
// a prompt nothing else). The entity histories sent back are the same too:
// a task puts its exchanges in the client's history once it has resolved,
// before any next call of those entities can start, and each entity makes
// one call a tick. So for the same answers the ticks are the same as in
// lockstep.
//
// The runner still sees one tick at a time: Step waits in the intention
// phase until every intention of its tick is in, in the resolution phase
// until every location has resolved, then applies the whole tick as in
// lockstep and returns it for the runner to commit whole. What the next
// round did meanwhile is held in memory, its calls included, until its own
// Step reports them: if the run stops first, that work is dropped and a
// resumed run asks again. The next round starts only once the tick before
// the one Step plays is committed (the runner commits a tick while the
// next one plays): the runner then holds at most two ticks' calls, the
// one Step plays and the next, as in lockstep the tick played and the one
// committing. The rules of a tick hold per tick as in lockstep:
// a location's game master is asked early only when its characters' intentions
// all succeeded and some intention call of the tick did (otherwise when
// the resolution phase begins, after the runner has judged the intention
// phase); each phase's deadline, set when the phase begins, bounds the calls
// started early; and no tick past the run's last is started.

// ahead is a narrative's out-of-order schedule between its Steps: the
// round of the next tick, already under way, and the state it starts from.
type ahead struct {
	once  sync.Once // the neighbourhoods, and the lockstep notice
	in    [][]int   // per location: itself and the locations with a connection into it
	out   [][]int   // per location: itself and the locations it connects to
	index map[string]int
	chars map[string]int // character id -> index in the simulation

	next *round       // the round of the tick after the last Step, if started
	base *world.State // the state that round starts from (the last Step's)
	pool *pool        // the workers of the rounds under way
}

// setup builds the neighbourhoods of sim's locations, once.
func (a *ahead) setup(sim *world.Simulation) {
	a.index = make(map[string]int, len(sim.Locations))
	for i, l := range sim.Locations {
		a.index[l.ID] = i
	}
	a.chars = make(map[string]int, len(sim.Characters))
	for i, c := range sim.Characters {
		a.chars[c.ID] = i
	}
	a.in, a.out = make([][]int, len(sim.Locations)), make([][]int, len(sim.Locations))
	for i := range sim.Locations {
		a.in[i], a.out[i] = []int{i}, []int{i}
	}
	for i, l := range sim.Locations {
		for _, c := range l.Connections {
			j, ok := a.index[c]
			if !ok || slices.Contains(a.out[i], j) {
				continue
			}
			a.out[i] = append(a.out[i], j)
			a.in[j] = append(a.in[j], i)
		}
	}
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

// outOfOrder reports whether tick t is played out of order, saying once
// why not when a setting rules it out.
func (n *Narrative) outOfOrder(t *runner.Tick) bool {
	if n.Lockstep {
		return false
	}
	if t.Budgeted() {
		n.ahead.once.Do(func() {
			t.Log().Info("ticks run in lockstep: a token or cost budget is checked before each phase, so no call may start before its phase")
		})
		return false
	}
	n.ahead.once.Do(func() { n.ahead.setup(n.Sim) })
	return true
}

// round returns the round of tick t.N from st: the one the last Step
// started, when it starts from st, or a new one with every location ready.
// With t.N before the run's last tick, the round of the next tick is made
// too, to start each location as soon as this round lets it.
func (n *Narrative) round(ctx context.Context, t *runner.Tick, st *world.State) *round {
	a := &n.ahead
	r := a.next
	if r == nil || a.base != st {
		a.drop()
		a.pool = newPool(n.Model.Workers())
		r = n.newRound(ctx, t.N)
		r.seed(st)
	}
	a.next, a.base = nil, nil
	// Its gate is closed by now (the runner has awaited that commit), but
	// hold's goroutine may not have started the locations ready yet: the
	// phases count on every location having started once the round
	// before has resolved.
	r.open()
	if t.N < t.Last() {
		next := n.newRound(ctx, t.N+1)
		next.hold(t.Before())
		r.follow(next)
	}
	return r
}

// settle ends Step's use of round r, whose tick became next: the round
// after it, if any, starts from next. With no round after it, the workers
// go.
func (n *Narrative) settle(r *round, next *world.State) {
	r.release()
	a := &n.ahead
	if r.next == nil {
		a.drop()
		return
	}
	a.next, a.base = r.next, next
}

// round is one tick played location by location (see the top of this file).
type round struct {
	n          *Narrative
	tick       int
	ienv, renv Env
	ictx, rctx *lateContext // of the intention and resolution calls
	pool       *pool
	remember   *llm.History // nil when the model keeps none

	mu        sync.Mutex
	tasks     []task
	waiting   []int // per location: locations of the round before still to resolve
	answered  bool  // an intention call of the round has succeeded
	resolving bool  // Step is in the resolution phase: every game master may be asked
	dropped   bool
	intents   []Outcome[string]       // per character, in the simulation's order
	outs      []Outcome[MasterOutput] // per location
	ilogs     [][]heldRecord          // per character: what its intention logged, held
	leftI     int
	leftR     int
	allI      chan struct{} // closed when every intention is in
	allR      chan struct{} // closed when every location has resolved
	buildErr  error
	next      *round
	// held is set while the commit of the tick two before r's may still
	// be running (hold, until gate is closed): the locations ready
	// meanwhile wait in ready.
	held  bool
	gate  <-chan struct{}
	ready []int
}

// task is one location's part of a round.
type task struct {
	started  bool
	before   *world.State // the tick before: only the characters present and the location
	w        *prompts.Snapshot
	present  []string
	pending  int // intentions still to come
	fellBack bool
	asks     map[string]string
	called   bool    // its game master's calls are queued
	groups   []Group // its crowd, one game master call per group
	parts    []Outcome[MasterOutput]
	left     int // game master calls still to end
	after    *world.State
	logs     [][]heldRecord // per call: what it logged, held
}

func (n *Narrative) newRound(ctx context.Context, tick int) *round {
	a := &n.ahead
	r := &round{n: n, tick: tick, ienv: n.env(n.Intention), renv: n.env(n.Resolution), pool: a.pool,
		ictx: newLateContext(ctx), rctx: newLateContext(ctx),
		tasks: make([]task, len(n.Sim.Locations)), waiting: make([]int, len(n.Sim.Locations)),
		intents: make([]Outcome[string], len(n.Sim.Characters)), outs: make([]Outcome[MasterOutput], len(n.Sim.Locations)),
		ilogs: make([][]heldRecord, len(n.Sim.Characters)),
		leftI: len(n.Sim.Characters), leftR: len(n.Sim.Locations), allI: make(chan struct{}), allR: make(chan struct{})}
	if h, ok := n.Model.(interface{ History() *llm.History }); ok {
		r.remember = h.History()
	}
	if r.leftI == 0 {
		close(r.allI)
	}
	if r.leftR == 0 {
		close(r.allR)
	}
	for i := range r.tasks {
		r.tasks[i].before = &world.State{Tick: tick - 1, Characters: map[string]world.CharacterState{}, Locations: map[string]world.LocationState{}}
		r.waiting[i] = len(a.in[i])
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
	var done []int
	for i := range r.tasks {
		if r.tasks[i].after != nil {
			done = append(done, i)
		}
	}
	r.mu.Unlock()
	for _, i := range done {
		next.feed(i, r.tasks[i].after)
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
	for _, j := range a.out[i] {
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
// commit span at most the tick played and r's, as in lockstep the tick
// played and the one committing do. Called before r is fed.
func (r *round) hold(gate <-chan struct{}) {
	select {
	case <-gate:
		return
	default:
	}
	r.held, r.gate = true, gate
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

// start asks the intentions of location i's characters; r.mu is held.
func (r *round) start(i int) {
	t := &r.tasks[i]
	t.started = true
	t.w = prompts.NewSnapshot(r.n.Sim, t.before)
	t.present = t.w.Present(r.n.Sim.Locations[i].ID)
	t.pending = len(t.present)
	t.asks = make(map[string]string, len(t.present))
	t.groups = Groups(t.present, r.renv.perCall())
	t.parts, t.logs, t.left = make([]Outcome[MasterOutput], len(t.groups)), make([][]heldRecord, len(t.groups)), len(t.groups)
	for _, id := range t.present {
		r.pool.submit(r.tick, func() { r.intention(i, id) })
	}
	r.tryResolve(i)
}

// intention makes character id's intention call, in location i.
func (r *round) intention(i int, id string) {
	t := &r.tasks[i] // its fields read here are set before the call is queued
	c := r.n.ahead.chars[id]
	if r.isDropped() {
		return
	}
	env := r.ienv
	env.Logger = slog.New(holdLog{next: r.ienv.logger().Handler(), held: &r.ilogs[c]})
	req, err := IntentionRequest(env, t.w, id)
	var out Outcome[string]
	if err != nil {
		r.fail(err)
	} else {
		out = intentionOutcome(r.ictx, env, t.before, id, r.n.Model.Complete(r.ictx, req))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.intents[c] = out
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

// tryResolve queues location i's game master call if it may be made now (see
// overlap.arrived for the rule); r.mu is held.
func (r *round) tryResolve(i int) {
	t := &r.tasks[i]
	if !t.started || t.called || t.pending > 0 {
		return
	}
	if !r.resolving && (!r.answered || t.fellBack) {
		return
	}
	t.called = true
	for c := range t.groups {
		r.pool.submit(r.tick, func() { r.resolution(i, c) })
	}
}

// resolution makes call c of location i's game master; the last of them to
// end applies the answers to the location and the characters there.
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
		env.Logger = slog.New(holdLog{next: r.renv.logger().Handler(), held: &t.logs[c]})
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
	last := t.left == 0
	r.mu.Unlock()
	if !last {
		return
	}
	var out Outcome[MasterOutput]
	var after *world.State
	if !failed {
		out = mergeParts(t.before, loc.ID, t.parts)
		after = t.before.Clone()
		after.Tick = r.tick
		applyAt(r.n.Sim, t.before, after, loc, out.Value) // its errors are the whole tick's Apply's to report
		r.keep(t, out)
	}
	r.mu.Lock()
	r.outs[i], t.after = out, after
	if r.leftR--; r.leftR == 0 {
		close(r.allR)
	}
	next := r.next
	r.mu.Unlock()
	if next != nil && after != nil {
		next.feed(i, after)
	}
}

// keep puts the exchanges of task t's calls in the history, before the
// next calls of its entities can start (see Remembered).
func (r *round) keep(t *task, out Outcome[MasterOutput]) {
	if r.remember == nil {
		return
	}
	for _, id := range t.present {
		r.remember.Commit(r.intents[r.n.ahead.chars[id]].Call)
	}
	if out.Parts == nil {
		r.remember.Commit(out.Call)
		return
	}
	for _, p := range out.Parts {
		r.remember.Commit(p.Call)
	}
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
func (r *round) intentions(pctx context.Context) ([]Outcome[string], error) {
	defer r.ictx.endWith(pctx)()
	<-r.allI
	flush(pctx, r.ilogs)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buildErr != nil {
		return nil, r.buildErr
	}
	return r.intents, nil
}

// resolve is the resolution phase of r's tick: every location's game master
// may now be asked, under pctx's deadline; the outcomes come back in the
// simulation's order once all locations have resolved.
func (r *round) resolve(pctx context.Context) ([]Outcome[MasterOutput], error) {
	defer r.rctx.endWith(pctx)()
	r.mu.Lock()
	r.resolving = true
	for i := range r.tasks {
		r.tryResolve(i)
	}
	r.mu.Unlock()
	<-r.allR
	var logs [][]heldRecord
	for i := range r.tasks {
		logs = append(logs, r.tasks[i].logs...)
	}
	flush(pctx, logs)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.buildErr != nil {
		return nil, r.buildErr
	}
	return r.outs, nil
}

// stop drops r and the rounds after it: their calls are cancelled, and
// nothing more starts.
func (r *round) stop() {
	for ; r != nil; r = r.next {
		r.mu.Lock()
		r.dropped = true
		r.mu.Unlock()
		r.release()
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

// flush writes held log records, in order.
func flush(ctx context.Context, logs [][]heldRecord) {
	lctx := context.WithoutCancel(ctx)
	for _, held := range logs {
		for _, h := range held {
			h.next.Handle(lctx, h.r) // a log handler's failure is not the tick's
		}
	}
}

// pool runs the calls of the rounds under way on at most max workers,
// those of the earliest tick first: the tick the runner waits for is never
// queued behind work ahead of it. A worker is started when a job finds
// none idle, so the workers are bounded by the calls that exist, not by
// max (llm.concurrency can be far larger than a tick's calls).
type pool struct {
	mu      sync.Mutex
	cond    *sync.Cond
	jobs    jobs
	seq     int
	closed  bool
	max     int // workers at most
	workers int // started
	idle    int // waiting for a job
	wg      sync.WaitGroup
}

type job struct {
	tick, seq int
	run       func()
}

// jobs is a heap of jobs by tick, then by the order they came in.
type jobs []job

func (h jobs) Len() int { return len(h) }
func (h jobs) Less(i, j int) bool {
	if h[i].tick != h[j].tick {
		return h[i].tick < h[j].tick
	}
	return h[i].seq < h[j].seq
}
func (h jobs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobs) Push(x any)   { *h = append(*h, x.(job)) }
func (h *jobs) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = job{} // a job run keeps no round alive: its slot is reused only by a later push
	*h = old[:len(old)-1]
	return j
}

func newPool(workers int) *pool {
	p := &pool{max: max(1, workers)}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// submit queues run as work of tick, starting a worker when none is idle
// and fewer than max run; after close it is dropped.
func (p *pool) submit(tick int, run func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.seq++
	heap.Push(&p.jobs, job{tick: tick, seq: p.seq, run: run})
	if p.idle < len(p.jobs) && p.workers < p.max {
		p.workers++
		p.wg.Add(1)
		go p.work()
		return
	}
	p.cond.Signal()
}

func (p *pool) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.jobs) == 0 && !p.closed {
			p.idle++
			p.cond.Wait()
			p.idle--
		}
		if len(p.jobs) == 0 {
			p.mu.Unlock()
			return
		}
		j := heap.Pop(&p.jobs).(job)
		p.mu.Unlock()
		j.run()
	}
}

// close runs the jobs queued (those of dropped rounds return at once) and
// stops the workers.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}

// plan is how Step plays the two phases of a tick: in lockstep (with the
// intention and resolution phases overlapping within the tick, overlap.go)
// or out of order (a round).
type plan interface {
	intentions(ctx context.Context) ([]Outcome[string], error)
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
	if n.outOfOrder(t) {
		return &roundPlan{n: n, r: n.round(ctx, t, st)}
	}
	n.ahead.drop()
	w := prompts.NewSnapshot(n.Sim, st)
	// A location's game master starts once its characters' intentions are in,
	// unless a budget is checked before each phase (no resolution call may
	// then be made before the resolution phase's check).
	ov := newOverlap(ctx, n.env(n.Resolution), st, w, !t.Budgeted(), n.Model.Workers())
	return &lockstepPlan{n: n, st: st, w: w, ov: ov}
}

type lockstepPlan struct {
	n  *Narrative
	st *world.State
	w  *prompts.Snapshot
	ov *overlap
}

func (p *lockstepPlan) intentions(ctx context.Context) ([]Outcome[string], error) {
	return intentions(ctx, p.n.env(p.n.Intention), p.st, p.w, p.ov.arrived)
}

func (p *lockstepPlan) resolve(ctx context.Context) ([]Outcome[MasterOutput], error) {
	return p.ov.resolve(ctx)
}

func (p *lockstepPlan) resolutions() int { return p.ov.calls() }

func (p *lockstepPlan) calls(cs []runner.Call) []runner.Call { return cs }

func (p *lockstepPlan) end(*world.State) { p.ov.stop() }

type roundPlan struct {
	n *Narrative
	r *round
}

func (p *roundPlan) intentions(ctx context.Context) ([]Outcome[string], error) {
	return p.r.intentions(ctx)
}

func (p *roundPlan) resolve(ctx context.Context) ([]Outcome[MasterOutput], error) {
	return p.r.resolve(ctx)
}

// resolutions counts the groups of every location: by the resolution
// phase, the round before has resolved, so every location has started.
func (p *roundPlan) resolutions() int {
	p.r.mu.Lock()
	defer p.r.mu.Unlock()
	n := 0
	for i := range p.r.tasks {
		n += len(p.r.tasks[i].groups)
	}
	return n
}

func (p *roundPlan) calls(cs []runner.Call) []runner.Call {
	if p.r.remember != nil {
		for i := range cs {
			cs[i].Remembered = true
		}
	}
	return cs
}

func (p *roundPlan) end(next *world.State) {
	if next == nil {
		p.r.stop()
		p.n.ahead.drop()
		return
	}
	p.n.settle(p.r, next)
}
