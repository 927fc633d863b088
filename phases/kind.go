package phases

import (
	"context"
	"errors"
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/phases/cast"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/world"
)

func init() {
	session.Register(KindName, session.Opener{
		Kind:    (*Narrative)(nil),
		Section: Section,
		Reads:   world.Reads{Folders: []string{"characters", "evals", "locations", "prompts"}, Load: cast.Load, Default: true},
		Open:    open,
		Schemas: Schemas,
		Summary: summary,
		Templates: []session.PhaseTemplates{
			{Phase: PhaseIntention, Templates: []string{IntentionSystemTemplate, IntentionUserTemplate}, Entity: "a character"},
			{Phase: PhaseResolution, Templates: []string{ResolutionSystemTemplate, ResolutionUserTemplate}, Entity: "a location"},
		},
	})
}

// summary says how many characters and locations sim has.
func summary(sim *world.Simulation) []string {
	return []string{count(len(sim.Characters), "character"), count(len(sim.Locations), "location")}
}

// count is n nouns: "1 character", "6 characters".
func count(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// open builds the narrative of sim with its settings (ReadSettings), and
// every request of its first tick now (Lint), so that a missing key stops
// the command before any model call is paid for; a session opened to
// inspect a run renders nothing, and skips them. Every problem is listed:
// settings that do not read leave the defaults for the requests to be
// built with.
func open(sim *world.Simulation, pr *prompts.Renderer, set session.Settings) (session.Kind, error) {
	cfg := Of(set)
	n := &Narrative{Sim: sim, Prompts: pr, Intention: set.Params(cfg.Intention), Resolution: set.Params(cfg.Resolution.PhaseConfig), Logger: set.Logger,
		Context: set.Context, MaxCharacters: cfg.Resolution.MaxCharacters, MaxOutputTokens: set.MaxOutputTokens, Lockstep: set.Lockstep, Batch: set.Batch}
	if !set.Batch && len(set.BatchPhases) > 0 {
		n.Batch, n.BatchOnly = true, set.BatchPhases
	}
	answer, errs := ReadSettings(sim)
	if err := n.SetAnswer(answer); err != nil {
		return nil, err
	}
	if !set.Inspect {
		errs = append(errs, n.Lint()...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return n, nil
}

// BatchPhases: both phases' calls can go as Batch API jobs.
func (*Narrative) BatchPhases() []string { return []string{PhaseIntention, PhaseResolution} }

// NeedsModel is true: every character and location is played by a model.
func (n *Narrative) NeedsModel(...string) bool { return true }

// UseClient makes c the model of the phases' calls.
func (n *Narrative) UseClient(c *llm.Client) { n.Model = c }

// Manifest: the two phases' models, their four templates and schemas.
func (n *Narrative) Manifest() session.ManifestPart {
	return session.ManifestPart{
		Models:    []manifest.PhaseModel{{Phase: PhaseIntention, Model: n.Intention.Model}, {Phase: PhaseResolution, Model: n.Resolution.Model}},
		Templates: []string{IntentionSystemTemplate, IntentionUserTemplate, ResolutionSystemTemplate, ResolutionUserTemplate},
		Schemas:   n.env(n.Intention).schemas().named(),
	}
}

// Request is the call of phase intention (entity: a character) or
// resolution (a location; the characters' current external_intent stands
// in for that tick's intentions) after the state q holds, with the
// entity's past exchanges as of that tick.
func (n *Narrative) Request(ctx context.Context, q session.RequestQuery) (*session.Request, error) {
	st := q.State.(*world.State)
	req, err := n.Call(st, q.Phase, q.Entity)
	if err != nil {
		return nil, &session.InputError{Err: err}
	}
	var hist []llm.Exchange
	if q.Store != nil {
		recs, err := q.Store.History(ctx, q.Depth, st.Tick)
		if err != nil {
			return nil, err
		}
		for _, h := range recs[req.EntityKey] {
			hist = append(hist, llm.Exchange{User: h.User, Assistant: h.Assistant})
		}
	}
	return &session.Request{Phase: req.Phase, EntityKey: req.EntityKey, Tick: req.Tick, Model: req.Params.Model, MaxTokens: req.Params.MaxTokens,
		Messages: llm.Messages(req, hist, q.Depth), SchemaName: req.SchemaName, Schema: req.Schema}, nil
}

// Report is the story of every tick, from which the page draws each
// character's path, and the calls that fell back.
func (n *Narrative) Report(ctx context.Context, s *session.Session) (*session.ReportPart, error) {
	story, err := s.Story(ctx, session.StoryQuery{})
	if err != nil {
		return nil, err
	}
	return &session.ReportPart{Unit: "tick", ApplyErrors: "skipped updates", Timeline: story.Ticks,
		Fallbacks: fallbacksPerTick(story.Ticks, s.LastTick())}, nil
}

// fallbacksPerTick counts the calls that fell back per phase and tick:
// intentions and the game master's locations.
func fallbacksPerTick(ticks []session.StoryTick, last int) map[string][]float64 {
	out := map[string][]float64{PhaseIntention: make([]float64, last), PhaseResolution: make([]float64, last)}
	for _, t := range ticks {
		for _, l := range t.Locations {
			if l.Fallback {
				out[PhaseResolution][t.Tick-1]++
			}
			for _, c := range l.Characters {
				if c.IntentionFallback {
					out[PhaseIntention][t.Tick-1]++
				}
			}
		}
	}
	return out
}

// Help is the narrative's lines of the commands' --help.
func (*Narrative) Help(command string) string {
	switch command {
	case "arbiter":
		return `  A model plays every character (their intentions) and a model, the game
  master of each location, decides what happens there, all locations in
  parallel.
`
	case "report":
		return `  The timeline of ticks with each location's moment and each character's
  intentions and memory entries, and each character's path across locations
  as a chart.
`
	case "story":
		return `  Per tick and location: the moment at the end of the tick, each character's
  intention and memory entry, who moved where, the calls that fell back and
  the updates the apply step skipped (--location, --character narrow it).
`
	case "prompts render":
		return `  For resolution, the characters' current external_intent stands in for
  that tick's intentions.
`
	case "eval":
		return `  Assertions moves_to and mentions_present. The resolution answers are
  applied to the case's world in memory: the result shows what each would
  change.
`
	}
	return ""
}
