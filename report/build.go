package report

import (
	"context"
	"fmt"
	"slices"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/games/duel"
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
	r := &Report{Simulation: s.Sim.ID, Title: s.Sim.Title, Kind: s.Sim.Kind, LastTick: last, Figures: figures(s.Sim.Kind, status)}
	if st := status.LastStop; st != nil {
		r.Stopped = fmt.Sprintf("the last run stopped at tick %d without committing it (%s): %s", st.Tick, st.Reason, st.Error)
	}
	// Fallbacks per phase and tick: the narrative's story marks them.
	fallbacks := map[string][]float64{}
	switch s.Sim.Kind {
	case world.KindNarrative:
		story, err := s.Story(ctx, session.StoryQuery{})
		if err != nil {
			return nil, err
		}
		r.Timeline = story.Ticks
		r.Paths = paths(s.Sim, story.Ticks)
		fallbacks = narrativeFallbacks(story.Ticks, last)
	case world.KindConquest, world.KindDuel:
		if err := r.addGame(ctx, s); err != nil {
			return nil, err
		}
	case world.KindChronicle:
		st, ok := s.State().(*chronicle.State)
		if !ok {
			return nil, fmt.Errorf("report: a chronicle's state is a %T", s.State())
		}
		tl := st.Timeline.Clone()
		r.Chronicle = &tl
	default:
		return nil, &session.InputError{Err: fmt.Errorf("%s: a %s simulation has no report", s.Dir, s.Sim.Kind)}
	}
	r.Calls, r.Phases = callCharts(usage, fallbacks, last)
	return r, nil
}

// figures are the run's headline numbers; what the apply step refused is
// a narrative's skipped updates and conquest's order errors.
func figures(kind string, st *session.Status) []runner.Field {
	t := st.Total
	out := []runner.Field{
		{Key: "model calls", Value: fmt.Sprint(t.Calls)},
		{Key: "failed calls", Value: fmt.Sprint(t.FailedCalls)},
		{Key: "fallbacks", Value: fmt.Sprint(st.Fallbacks)},
		{Key: "repairs", Value: fmt.Sprint(t.Repairs)},
	}
	switch kind {
	case world.KindNarrative:
		out = append(out, runner.Field{Key: "skipped updates", Value: fmt.Sprint(st.ApplyErrors)})
	case world.KindConquest:
		out = append(out, runner.Field{Key: "order errors", Value: fmt.Sprint(st.ApplyErrors)})
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

// narrativeFallbacks counts the calls that fell back per phase and tick:
// intentions and the arbiter's locations.
func narrativeFallbacks(ticks []session.StoryTick, last int) map[string][]float64 {
	out := map[string][]float64{"intention": make([]float64, last), "resolution": make([]float64, last)}
	for _, t := range ticks {
		for _, l := range t.Locations {
			if l.Fallback {
				out["resolution"][t.Tick-1]++
			}
			for _, c := range l.Characters {
				if c.IntentionFallback {
					out["intention"][t.Tick-1]++
				}
			}
		}
	}
	return out
}

// callCharts plots the calls of every phase per tick: tokens, mean latency,
// failed calls and fallbacks; and sums each phase.
func callCharts(rows []store.CallUsage, fallbacks map[string][]float64, last int) ([]Chart, []PhaseTotal) {
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
		if pt.Calls > 0 {
			pt.MeanLatencyMS = latSum / int64(pt.Calls)
		}
		tokens.Series = append(tokens.Series, Series{Name: ph, Values: tok})
		latency.Series = append(latency.Series, Series{Name: ph, Values: lat})
		failed.Series = append(failed.Series, Series{Name: ph + " failed", Values: fail})
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

// addGame adds every turn of a conquest or duel game: its log, the board
// after it, and each player's errors.
func (r *Report) addGame(ctx context.Context, s *session.Session) error {
	story, err := s.Story(ctx, session.StoryQuery{})
	if err != nil {
		return err
	}
	var players []string
	seat := func(string) string { return "" }
	switch g := s.Kind.(type) {
	case *conquest.Game:
		players, seat = g.Players(), g.Seat
	case *duel.Game:
		players, seat = g.Players(), g.Seat
	default:
		return fmt.Errorf("report: a %s game is a %T", s.Sim.Kind, s.Kind)
	}
	errs := map[string][]TurnError{}
	for _, t := range story.Turns {
		state, err := s.StateAt(ctx, t.Turn, false)
		if err != nil {
			return err
		}
		board, err := boardOf(ctx, s.Kind, state)
		if err != nil {
			return fmt.Errorf("board of turn %d: %w", t.Turn, err)
		}
		r.Turns = append(r.Turns, Turn{N: t.Turn, Lines: t.Lines, Errors: t.Errors, Board: board})
		for _, e := range t.Errors {
			errs[e.Player] = append(errs[e.Player], TurnError{Turn: t.Turn, Error: e.Error})
		}
	}
	for _, p := range players {
		r.Players = append(r.Players, PlayerErrors{Player: p, Seat: seat(p), Errors: errs[p]})
	}
	return nil
}

// boardOf is the board of a game's state: the kind's status lines (the
// map's text left out: it is drawn) and its drawing.
func boardOf(ctx context.Context, k session.Kind, state any) (Board, error) {
	fields, err := k.Status(ctx, nil, state)
	if err != nil {
		return Board{}, err
	}
	var b Board
	for _, f := range fields {
		if f.Key != "map" {
			b.Fields = append(b.Fields, f)
		}
	}
	switch st := state.(type) {
	case *conquest.State:
		b.Map = starMap(st)
	case *duel.State:
		for _, p := range st.Board.Players {
			b.Meters = append(b.Meters, Meter{Label: p.ID + " health", Value: p.Health, Max: p.MaxHealth})
		}
	}
	return b, nil
}

func starMap(st *conquest.State) *StarMap {
	m := &StarMap{Players: st.Players}
	for _, s := range st.Stars {
		m.Width, m.Height = max(m.Width, s.X+1), max(m.Height, s.Y+1)
		ships := s.Garrison
		for _, n := range s.Ships {
			ships += n
		}
		m.Stars = append(m.Stars, Star{ID: s.ID, X: s.X, Y: s.Y, Owner: s.Owner, Production: s.Production, Ships: ships})
	}
	for _, f := range st.Fleets {
		m.Fleets = append(m.Fleets, Fleet{Owner: f.Owner, From: f.From, To: f.To, Ships: f.Ships, Arrives: f.Arrives})
	}
	return m
}
