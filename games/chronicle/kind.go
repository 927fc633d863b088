package chronicle

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

func init() {
	session.Register(KindName, session.Opener{
		Kind:      (*Game)(nil),
		Section:   Section,
		Reads:     world.Reads{Folders: []string{"prompts"}},
		Open:      open,
		Tools:     tools,
		Templates: []session.PhaseTemplates{{Phase: PhaseChat, Templates: []string{PromptFile}}},
	})
}

func open(sim *world.Simulation, pr *prompts.Renderer, set session.Settings) (session.Kind, error) {
	g, err := Open(sim, pr)
	if err != nil {
		return nil, err
	}
	cfg := session.SectionOf[*Config](set, Section)
	g.Window, g.Params = cfg.Window, set.Params(cfg.PhaseConfig)
	return g, nil
}

// NeedsModel is true: the model is the person's partner.
func (g *Game) NeedsModel(...string) bool { return true }

// UseClient makes c the client of the model's turns.
func (g *Game) UseClient(c *llm.Client) { g.Client = c }

// Manifest: the chat's model and its system prompt.
func (g *Game) Manifest() session.ManifestPart {
	return session.ManifestPart{Models: []manifest.PhaseModel{{Phase: PhaseChat, Model: g.Params.Model}}, Templates: []string{PromptFile}}
}

// Request is the model's next chat call after the state q holds.
func (g *Game) Request(_ context.Context, q session.RequestQuery) (*session.Request, error) {
	if q.Phase != PhaseChat {
		return nil, &session.InputError{Err: fmt.Errorf("--phase %q: a chronicle has one phase, %s", q.Phase, PhaseChat)}
	}
	cr := g.ChatRequest(q.State.(*State))
	return &session.Request{Phase: q.Phase, EntityKey: cr.EntityKey, Tick: q.Tick + 1, Model: cr.Params.Model, MaxTokens: cr.Params.MaxTokens, Messages: cr.Messages}, nil
}

// CheckStory refuses: a chronicle's story is its timeline and its chat.
func (g *Game) CheckStory(dir string, _ session.StoryQuery) error {
	return &session.InputError{Err: fmt.Errorf("%s is a chronicle: `arbiter chronicle show %s` prints its timeline, and `arbiter chat %s` then /history its conversation", dir, dir, dir)}
}

// Story is never asked for: CheckStory refuses every query.
func (g *Game) Story(context.Context, *store.Store, int, int, session.StoryQuery, *session.Story) error {
	return errors.New("chronicle: no story by tick")
}

// Report is the timeline built so far, and the turns whose message was
// cut at the token limit. A committed turn's failed chat call is always
// such a message, kept as written: a turn makes one call, and the runner
// drops a turn whose every call failed unless the kind kept what it
// returned (runner.Call.Recovered). So the page counts it as truncated,
// not failed.
func (g *Game) Report(ctx context.Context, s *session.Session) (*session.ReportPart, error) {
	st, ok := s.State().(*State)
	if !ok {
		return nil, fmt.Errorf("report: a chronicle's state is a %T", s.State())
	}
	rows, err := s.Usage(ctx)
	if err != nil {
		return nil, err
	}
	cut := make([]float64, s.LastTick())
	for _, r := range rows {
		if r.Phase == PhaseChat && r.Tick >= 1 && r.Tick <= len(cut) {
			cut[r.Tick-1] += float64(r.FailedCalls)
		}
	}
	return &session.ReportPart{Unit: "turn", Outline: outline(st.Timeline), Truncated: map[string][]float64{PhaseChat: cut}}, nil
}

// outline is tl as the report draws it.
func outline(tl Timeline) *session.Outline {
	o := &session.Outline{BigPicture: tl.BigPicture, Stage: string(tl.Stage)}
	o.Palette.Yes, o.Palette.No = tl.Palette.Yes, tl.Palette.No
	for _, p := range tl.Periods {
		op := session.OutlinePeriod{Name: p.Name, Tone: string(p.Tone), Bookend: p.Bookend, Description: p.Description}
		for _, e := range p.Events {
			op.Events = append(op.Events, session.OutlineEvent{Name: e.Name, Tone: string(e.Tone), Description: e.Description})
		}
		o.Periods = append(o.Periods, op)
	}
	return o
}

// RunFiles: an earlier version saved a game in chronicle.json.
func (*Game) RunFiles() []string { return []string{FileName} }

// Saved is the chronicle.json an earlier version saved in dir, its
// timeline rebuilt from its conversation; nil when there is none.
func (g *Game) Saved(dir string) (*session.Saved, error) {
	path := filepath.Join(dir, FileName)
	saved, err := ReadSaved(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := g.Rebuild(saved)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &session.Saved{Path: path, State: st, Move: Import{State: saved}}, nil
}

// Help is the chronicle's lines of the commands' --help.
func (*Game) Help(command string) string {
	switch command {
	case "arbiter":
		return `  A person and a model build a history in conversation (arbiter chat).
`
	case "chat":
		return `  You and the model build its history together: bookends and palette in
  setup, then periods and events in play. Commands in messages (CREATE
  PERIOD, CREATE EVENT, CREATE PALETTE) change the timeline, a whole message
  or nothing of it. Type /help in the chat for its commands (/raw, /reparse,
  /restart, /copy, /timeline, /play). A chronicle.json saved by an earlier
  version is imported the first time.
`
	case "report":
		return `  Its timeline: the big picture, the palette, the periods and their events.
`
	case "story":
		return `  None by tick: ` + "`arbiter chronicle show DIR`" + ` prints its timeline, and /history
  in ` + "`arbiter chat DIR`" + ` its conversation.
`
	}
	return ""
}
