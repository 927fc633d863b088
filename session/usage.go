package session

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// UsageReport is what a simulation's committed calls used and cost, as
// `arbiter usage` prints it.
type UsageReport struct {
	Simulation string `json:"simulation"`
	// Priced: every model used has a price, so every cost is known.
	Priced bool `json:"priced"`
	// Unpriced lists the models used that have no price.
	Unpriced []string `json:"unpriced_models"`
	// Assumed: some calls were stored without their model (before schema
	// version 3) and are priced at their phase's configured model.
	Assumed  bool        `json:"assumed_models"`
	Total    UsageLine   `json:"total"`
	ByModel  []UsageLine `json:"by_model"`
	ByPhase  []UsageLine `json:"by_phase"`
	ByEntity []UsageLine `json:"by_entity"`
	// TextsDroppedThrough is the last tick whose prompt and answer texts
	// `arbiter compact` dropped; 0 when it dropped none.
	TextsDroppedThrough int         `json:"texts_dropped_through,omitempty"`
	ByTick              []UsageLine `json:"by_tick"`
	// ByEndpoint is the calls per endpoint that answered them and the
	// attempts each failed (not priced: the model prices them), a row for
	// every endpoint the latest run configured; none in a state.db written
	// before schema version 6.
	ByEndpoint []UsageLine `json:"by_endpoint,omitempty"`
}

// UsageLine is the usage of one group of calls.
type UsageLine struct {
	Key   string `json:"key,omitempty"`   // phase or entity
	Tick  int    `json:"tick,omitempty"`  // by_tick
	Model string `json:"model,omitempty"` // by_phase: the models that answered, comma-separated
	store.Usage
	// CostUSD is nil when no price is configured for a model of these calls.
	CostUSD *float64 `json:"cost_usd"`
}

// UsageReport sums the committed calls per model, phase, entity and tick,
// each priced at its model with the prices of the session's settings.
func (s *Session) UsageReport(ctx context.Context) (*UsageReport, error) {
	rows, err := s.Usage(ctx)
	if err != nil {
		return nil, err
	}
	rep := buildUsage(s.Sim.ID, rows, s.phaseModel, s.settings.Run.Prices)
	if s.store != nil {
		sum, err := s.store.Summary(ctx)
		if err != nil {
			return nil, err
		}
		_, m, err := s.lastRun(ctx)
		if err != nil {
			return nil, err
		}
		if m != nil {
			sum.ByEndpoint = configuredEndpoints(sum.ByEndpoint, m.Endpoints)
		}
		for _, g := range sum.ByEndpoint {
			rep.ByEndpoint = append(rep.ByEndpoint, UsageLine{Key: g.Key, Usage: g.Usage})
		}
		rep.TextsDroppedThrough = sum.TextsDroppedThrough
	}
	return rep, nil
}

// buildUsage sums rows per model, phase, entity and tick and prices each
// row at its own model, its batch tokens at the model's batch discount; model gives the phase's configured model for rows
// stored without one.
func buildUsage(sim string, rows []store.CallUsage, model func(phase string) string, price map[string]runner.Price) *UsageReport {
	rep := &UsageReport{Simulation: sim, Unpriced: []string{}, ByModel: []UsageLine{}, ByPhase: []UsageLine{}, ByEntity: []UsageLine{}, ByTick: []UsageLine{}}
	total := newAcc()
	models, phases, entities, ticks := map[string]*acc{}, map[string]*acc{}, map[string]*acc{}, map[int]*acc{}
	phaseModels := map[string][]string{}
	for _, r := range rows {
		m := r.Model
		if m == "" {
			m = model(r.Phase)
			rep.Assumed = true
		}
		cost, ok := 0.0, false
		if p, found := price[m]; found {
			cost, ok = p.CostOf(r.Usage), true
		} else if r.Calls > 0 && !slices.Contains(rep.Unpriced, m) {
			rep.Unpriced = append(rep.Unpriced, m)
		}
		for _, a := range []*acc{total, get(models, m), get(phases, r.Phase), get(entities, r.EntityKey), get(ticks, r.Tick)} {
			a.add(r.Usage, cost, ok)
		}
		if !slices.Contains(phaseModels[r.Phase], m) {
			phaseModels[r.Phase] = append(phaseModels[r.Phase], m)
		}
	}
	slices.Sort(rep.Unpriced)
	rep.Priced = len(rep.Unpriced) == 0
	rep.Total = total.line()
	for _, k := range sortedKeys(models) {
		l := models[k].line()
		l.Key, l.Model = k, k
		rep.ByModel = append(rep.ByModel, l)
	}
	for _, k := range sortedKeys(phases) {
		l := phases[k].line()
		slices.Sort(phaseModels[k])
		l.Key, l.Model = k, strings.Join(phaseModels[k], ", ")
		rep.ByPhase = append(rep.ByPhase, l)
	}
	for _, k := range sortedKeys(entities) {
		l := entities[k].line()
		l.Key = k
		rep.ByEntity = append(rep.ByEntity, l)
	}
	for _, k := range sortedKeys(ticks) {
		l := ticks[k].line()
		l.Tick = k
		rep.ByTick = append(rep.ByTick, l)
	}
	return rep
}

// acc sums usage and cost; the cost is unknown once one part of it is.
type acc struct {
	UsageLine
	cost    float64
	unknown bool
}

func newAcc() *acc { return &acc{} }

func get[K comparable](m map[K]*acc, k K) *acc {
	if m[k] == nil {
		m[k] = newAcc()
	}
	return m[k]
}

func (a *acc) add(u store.Usage, cost float64, priced bool) {
	a.Calls += u.Calls
	a.FailedCalls += u.FailedCalls
	a.Repairs += u.Repairs
	a.PromptTokens += u.PromptTokens
	a.CompletionTokens += u.CompletionTokens
	a.CachedTokens += u.CachedTokens
	a.LatencyMS += u.LatencyMS
	a.BatchPromptTokens += u.BatchPromptTokens
	a.BatchCompletionTokens += u.BatchCompletionTokens
	a.cost += cost
	a.unknown = a.unknown || !priced
}

func (a *acc) line() UsageLine {
	l := a.UsageLine
	if !a.unknown {
		c := a.cost
		l.CostUSD = &c
	}
	return l
}

func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	keys := make([]K, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
