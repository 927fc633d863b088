package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
)

// UsageOptions are the inputs of `arbiter usage`.
type UsageOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
}

func newUsageCmd(io *IOStreams, g *globals, runF func(context.Context, *UsageOptions) error) *cobra.Command {
	opts := &UsageOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "usage <simulation-dir>",
		Short: "Tokens (and cost, when prices are configured) per phase, entity and tick",
		Long: `usage sums the model calls of every committed tick per phase, per entity and
per tick: calls, failed calls, prompt, completion and cached tokens, latency.
With prices in the configuration (prices: a list of {model, prompt,
completion} in USD per million tokens) it adds the cost, and the usage per
model. Each call is priced at the model that answered it, as stored with the
call; a call stored by an arbiter older than schema version 3 has no model
and is priced at the model its phase is configured with now (the report says
so). A model without a price leaves the cost unknown.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(g.configFile, nil, nil)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runUsage(cmd.Context(), opts)
		},
	}
}

// UsageReport is what `arbiter usage` prints.
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
	ByTick   []UsageLine `json:"by_tick"`
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

func runUsage(ctx context.Context, opts *UsageOptions) error {
	set, err := opts.Config.settings(false, "")
	if err != nil {
		return err
	}
	s, err := session.Open(ctx, opts.Dir, set, session.ReadOnly)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, err := s.Usage(ctx)
	if err != nil {
		return err
	}
	rep := buildUsage(s.Sim.ID, rows, opts.Config.phaseModel, opts.Config.prices())
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, rep)
	}
	return writeUsage(opts.IO, rep)
}

// phaseModel is the model a phase's calls are made with under c.
func (c *Config) phaseModel(phase string) string {
	var p PhaseConfig
	switch phase {
	case "intention":
		p = c.Phases.Intention
	case "resolution":
		p = c.Phases.Resolution
	case "chat":
		p = c.Chronicle.PhaseConfig
	case "orders", "build", "charges":
		p = c.Games.PhaseConfig
	}
	return c.params(p).Model
}

// buildUsage sums rows per model, phase, entity and tick and prices each
// row at its own model; model gives the phase's configured model for rows
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
			cost, ok = p.Cost(r.PromptTokens, r.CompletionTokens), true
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

func writeUsage(io *IOStreams, rep *UsageReport) error {
	w := io.Out
	t := rep.Total
	if t.Calls == 0 {
		fmt.Fprintf(w, "%s: no model calls committed yet\n", rep.Simulation)
		return nil
	}
	fmt.Fprintf(w, "%s: %s over %s, %d failed; %s (%d prompt, %d cached, %d completion); cost %s\n",
		rep.Simulation, plural(t.Calls, "call"), plural(len(rep.ByTick), "tick"), t.FailedCalls,
		plural(t.PromptTokens+t.CompletionTokens, "token"), t.PromptTokens, t.CachedTokens, t.CompletionTokens, costText(t.CostUSD))
	if !rep.Priced {
		fmt.Fprintf(w, "no price configured for %v: add them under prices: in config.yaml (USD per million tokens)\n", rep.Unpriced)
	}
	if rep.Assumed {
		fmt.Fprintln(w, "some calls were stored without their model (by an arbiter before schema version 3): counted at the model their phase is configured with now")
	}
	// The cost column shows when some phase's model has a price.
	costs := slices.ContainsFunc(rep.ByPhase, func(l UsageLine) bool { return l.CostUSD != nil })
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	section := func(title string, lines []UsageLine, key func(UsageLine) string) {
		fmt.Fprintf(tw, "\n%s\tcalls\tfailed\tprompt\tcompletion\tcached\tlatency", title)
		if costs {
			fmt.Fprint(tw, "\tcost")
		}
		fmt.Fprintln(tw)
		for _, l := range lines {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%dms", key(l), l.Calls, l.FailedCalls, l.PromptTokens, l.CompletionTokens, l.CachedTokens, l.LatencyMS)
			if costs {
				fmt.Fprintf(tw, "\t%s", costText(l.CostUSD))
			}
			fmt.Fprintln(tw)
		}
	}
	section("model", rep.ByModel, func(l UsageLine) string { return l.Key })
	section("phase (model)", rep.ByPhase, func(l UsageLine) string { return l.Key + " (" + l.Model + ")" })
	section("entity", rep.ByEntity, func(l UsageLine) string { return l.Key })
	section("tick", rep.ByTick, func(l UsageLine) string { return strconv.Itoa(l.Tick) })
	return tw.Flush()
}

func costText(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *c)
}
