package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// Build reads the committed run of s into a Report. A simulation with no
// committed tick is a *session.InputError saying to run it first.
func Build(ctx context.Context, s *session.Session) (*Report, error) {
	last := s.LastTick()
	if last == 0 {
		return nil, &session.InputError{Err: fmt.Errorf("%s: no tick committed yet, nothing to report; run it first (`arbiter run %s`)", s.Dir, s.Dir)}
	}
	status, err := s.Status(ctx)
	if err != nil {
		return nil, err
	}
	usage, err := s.Usage(ctx)
	if err != nil {
		return nil, err
	}
	part, err := s.ReportPart(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Simulation: s.Sim.ID, Title: s.Sim.Title, Kind: s.Sim.Kind, Unit: part.Unit, LastTick: last,
		Timeline: part.Timeline, Turns: part.Turns, Players: part.Players, Outline: part.Outline,
		Ending: part.Ending, Trends: trendCharts(part.Trends, part.Unit)}
	if r.TickRuns, err = tickRuns(ctx, s); err != nil {
		return nil, err
	}
	if st := status.LastStop; st != nil {
		r.Stopped = fmt.Sprintf("the last run stopped at tick %d without committing it (%s): %s", st.Tick, st.Reason, st.Error)
	}
	if part.Timeline != nil {
		r.Paths = paths(s.Sim, part.Timeline)
	}
	r.Calls, r.Phases = callCharts(usage, part.Fallbacks, part.Truncated, last)
	r.KeepsCuts = part.Truncated != nil
	r.Figures = figures(part, status, r.Phases)
	return r, nil
}

// trendCharts plots each trend over the turns, one line per player.
func trendCharts(trends []session.Trend, unit string) []Chart {
	var out []Chart
	for _, tr := range trends {
		c := Chart{Title: tr.Title, Unit: tr.Unit, Axis: unit}
		for _, s := range tr.Series {
			c.Series = append(c.Series, Series{Name: s.Name, Values: s.Values})
			for len(c.Ticks) < len(s.Values) {
				c.Ticks = append(c.Ticks, len(c.Ticks)+1)
			}
		}
		out = append(out, c)
	}
	return out
}

// figures are the run's headline numbers. part.ApplyErrors names what the
// rules refused (updates skipped, orders refused),
// "" when the kind has none to show; a kind that keeps cut answers has
// them counted as truncated (summed over phases), not failed.
func figures(part *session.ReportPart, st *session.Status, phases []PhaseTotal) []runner.Field {
	t := st.Total
	if t.Calls == 0 && len(phases) == 0 {
		// A run without model calls (a game of bots and people): what the
		// rules refused comes first, and the calls are said to be none
		// last, not as a row of zeros.
		var out []runner.Field
		if part.ApplyErrors != "" {
			out = append(out, runner.Field{Key: part.ApplyErrors, Value: fmt.Sprint(st.ApplyErrors)})
		}
		return append(out, runner.Field{Key: "model calls", Value: "none"})
	}
	truncated := 0
	for _, p := range phases {
		truncated += p.Truncated
	}
	out := []runner.Field{
		{Key: "model calls", Value: fmt.Sprint(t.Calls)},
		{Key: "failed calls", Value: fmt.Sprint(t.FailedCalls - truncated)},
	}
	if part.Truncated != nil {
		out = append(out, runner.Field{Key: "truncated", Value: fmt.Sprint(truncated)})
	}
	out = append(out, runner.Field{Key: "fallbacks", Value: fmt.Sprint(st.Fallbacks)},
		runner.Field{Key: "repairs", Value: fmt.Sprint(t.Repairs)})
	if part.ApplyErrors != "" {
		out = append(out, runner.Field{Key: part.ApplyErrors, Value: fmt.Sprint(st.ApplyErrors)})
	}
	return append(out, runner.Field{Key: "tokens", Value: fmt.Sprintf("%d prompt (%d cached) + %d completion", t.PromptTokens, t.CachedTokens, t.CompletionTokens)})
}

// paths is where each character of sim was at the start (tick 0) and after
// each tick of the story, which tells every character at every tick.
func paths(sim *world.Simulation, ticks []session.StoryTick) *PathChart {
	pc := &PathChart{Ticks: []int{0}}
	for _, l := range sim.Locations {
		pc.Locations = append(pc.Locations, Place{ID: l.ID, Name: l.Name})
	}
	at := map[string][]string{}
	for i, t := range ticks {
		pc.Ticks = append(pc.Ticks, t.Tick)
		for _, l := range t.Locations {
			for _, c := range l.Characters {
				if i == 0 {
					at[c.ID] = []string{c.From}
				}
				at[c.ID] = append(at[c.ID], c.To)
			}
		}
	}
	for _, c := range sim.Characters {
		p := Path{ID: c.ID, Name: c.Name, At: at[c.ID]}
		if len(p.At) == len(pc.Ticks) {
			pc.Paths = append(pc.Paths, p)
		}
	}
	return pc
}

// callCharts plots the calls of every phase per tick: tokens, mean latency,
// failed calls and fallbacks (and truncated calls, of a phase that keeps
// cut answers: taken out of its failed calls); and sums each phase.
func callCharts(rows []store.CallUsage, fallbacks, truncated map[string][]float64, last int) ([]Chart, []PhaseTotal) {
	if len(rows) == 0 {
		return nil, nil
	}
	ticks := make([]int, last)
	for i := range ticks {
		ticks[i] = i + 1
	}
	var phases []string
	for _, r := range rows {
		if !slices.Contains(phases, r.Phase) {
			phases = append(phases, r.Phase)
		}
	}
	slices.Sort(phases)
	tokens := Chart{Title: "Tokens per tick", Unit: "tokens", Ticks: ticks}
	latency := Chart{Title: "Mean latency of a call", Unit: "ms", Ticks: ticks}
	failed := Chart{Title: "Failed calls and fallbacks per tick", Unit: "calls", Bars: true, Ticks: ticks}
	if len(truncated) > 0 {
		failed.Title = "Failed and truncated calls and fallbacks per tick"
	}
	var totals []PhaseTotal
	for _, ph := range phases {
		tok, lat, fail := make([]float64, last), make([]float64, last), make([]float64, last)
		calls := make([]int, last)
		pt := PhaseTotal{Phase: ph}
		var latSum int64
		for _, r := range rows {
			if r.Phase != ph || r.Tick < 1 || r.Tick > last {
				continue
			}
			i := r.Tick - 1
			tok[i] += float64(r.PromptTokens + r.CompletionTokens)
			lat[i] += float64(r.LatencyMS)
			calls[i] += r.Calls
			fail[i] += float64(r.FailedCalls)
			pt.Calls += r.Calls
			pt.Failed += r.FailedCalls
			pt.Repairs += r.Repairs
			pt.PromptTokens += r.PromptTokens
			pt.CompletionTokens += r.CompletionTokens
			latSum += r.LatencyMS
		}
		for i := range lat {
			if calls[i] > 0 {
				lat[i] /= float64(calls[i])
			}
		}
		// A phase's truncated calls are some of its failed ones: never more.
		kept, keeps := truncated[ph]
		cut := make([]float64, last)
		for i := range cut {
			if i < len(kept) {
				cut[i] = min(kept[i], fail[i])
			}
			fail[i] -= cut[i]
			pt.Truncated += int(cut[i])
		}
		pt.Failed -= pt.Truncated
		if pt.Calls > 0 {
			pt.MeanLatencyMS = latSum / int64(pt.Calls)
		}
		tokens.Series = append(tokens.Series, Series{Name: ph, Values: tok})
		latency.Series = append(latency.Series, Series{Name: ph, Values: lat})
		failed.Series = append(failed.Series, Series{Name: ph + " failed", Values: fail})
		if keeps {
			failed.Series = append(failed.Series, Series{Name: ph + " truncated", Values: cut})
		}
		if fb, ok := fallbacks[ph]; ok {
			failed.Series = append(failed.Series, Series{Name: ph + " fallbacks", Values: fb})
			for _, v := range fb {
				pt.Fallbacks += int(v)
			}
		}
		totals = append(totals, pt)
	}
	return []Chart{tokens, latency, failed}, totals
}
