package phases

import (
	"context"
	"slices"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// batchPlan plays a tick with each phase's calls sent as one Batch API
// job: every intention of the tick in one job, then every game master call in
// another (or only the phases of Narrative.BatchOnly, the other's calls
// made live). A job answers all its calls at once, so the tick runs in
// lockstep (no location starts before the others, no tick ahead). The job
// of each phase is stored in state.db before the run waits for it
// (runner.Tick.BatchJob): a run stopped meanwhile polls that job when it
// plays the tick again. Each answer is then read exactly as a live one
// (outcome, fallback, apply, commit).
type batchPlan struct {
	n       *Narrative
	t       *runner.Tick
	st      *world.State
	w       *prompts.Snapshot
	intents map[string]string
	groups  [][]Group // per location: its calls
}

func (n *Narrative) batchPlan(t *runner.Tick, st *world.State) plan {
	n.ahead.drop()
	n.batchOnce.Do(func() {
		t.Log().Info("ticks run in lockstep: a phase's calls go as one Batch API job, answered together")
	})
	w := prompts.NewSnapshot(n.Sim, st)
	per := n.env(n.Resolution).perCall()
	groups := make([][]Group, len(n.Sim.Locations))
	for i, l := range n.Sim.Locations {
		groups[i] = Groups(w.Present(l.ID), per)
	}
	return &batchPlan{n: n, t: t, st: st, w: w, groups: groups}
}

func (p *batchPlan) intentions(ctx context.Context) ([]*Outcome[string], error) {
	env := p.n.env(p.n.Intention)
	reqs := make([]llm.Request, len(p.n.Sim.Characters))
	for i, c := range p.n.Sim.Characters {
		req, err := IntentionRequest(env, p.w, c.ID)
		if err != nil {
			return nil, err
		}
		reqs[i] = req
	}
	res, err := p.submit(ctx, PhaseIntention, reqs)
	if err != nil {
		return nil, err
	}
	out := make([]*Outcome[string], len(res))
	p.intents = make(map[string]string, len(res))
	for i, c := range p.n.Sim.Characters {
		o := intentionOutcome(ctx, env, p.st, c.ID, res[i])
		out[i] = &o
		p.intents[c.ID] = o.Value
	}
	return out, nil
}

func (p *batchPlan) resolve(ctx context.Context) ([]Outcome[MasterOutput], error) {
	env := p.n.env(p.n.Resolution)
	var reqs []llm.Request
	for i, l := range p.n.Sim.Locations {
		asks := IntentionsAt(p.intents, p.w.Present(l.ID))
		for _, g := range p.groups[i] {
			req, err := partRequest(env, p.w, l, asks, g)
			if err != nil {
				return nil, err
			}
			reqs = append(reqs, req)
		}
	}
	res, err := p.submit(ctx, PhaseResolution, reqs)
	if err != nil {
		return nil, err
	}
	outs := make([]Outcome[MasterOutput], len(p.n.Sim.Locations))
	c := 0
	for i, l := range p.n.Sim.Locations {
		parts := make([]Outcome[MasterOutput], len(p.groups[i]))
		for j, g := range p.groups[i] {
			parts[j] = resolutionOutcome(ctx, env, p.st, l, g, res[c])
			c++
		}
		outs[i] = mergeParts(p.st, l.ID, parts)
	}
	return outs, nil
}

// submit makes the calls of phase as one job, resuming the job a stopped
// run left in flight; a phase not in Narrative.BatchOnly makes them live.
func (p *batchPlan) submit(ctx context.Context, phase string, reqs []llm.Request) ([]llm.Result, error) {
	if p.n.BatchOnly != nil && !slices.Contains(p.n.BatchOnly, phase) {
		return p.n.Model.CreateEachThen(ctx, len(reqs), func(i int) (llm.Request, error) { return reqs[i], nil }, nil)
	}
	job, err := p.t.BatchJob(ctx, phase)
	if err != nil {
		return nil, err
	}
	return p.n.Model.CompleteBatch(ctx, phase, reqs, job)
}

func (p *batchPlan) resolutions() int {
	n := 0
	for _, g := range p.groups {
		n += len(g)
	}
	return n
}

func (p *batchPlan) calls(cs []runner.Call) []runner.Call { return cs }

func (p *batchPlan) end(*world.State) {}
