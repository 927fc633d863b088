package chronicle

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// The moves of a chronicle; each is one turn of the runner.
type (
	// Say is a message of the person. Its commands, if any, apply all or
	// nothing, as the model's do.
	Say struct{ Text string }
	// Reply asks the model for its next message and posts it: its commands
	// apply all or nothing and a system message says what happened. A
	// message cut off at max_tokens is kept (seed 001: the model's message
	// goes into history) with none of its commands applied and an error note
	// the model sees next turn. When the call fails otherwise the turn is
	// dropped (quorum_failure) and nothing changes.
	Reply struct{}
	// Restart deletes model message N and every message after it, rebuilds
	// the timeline without them, and asks the model again from the prior
	// context ("restart from here"). If the call fails, nothing is deleted.
	Restart struct{ N int }
	// Reparse reads model message N again with the current parser, against
	// the current timeline, and applies its commands if they are valid now.
	// Either way a system message says what happened. A message whose
	// commands were applied already, or that has none, is refused.
	Reparse struct{ N int }
	// StartPlay moves the game from setup to play; both bookends must exist.
	StartPlay struct{}
	// Import makes a game saved by an earlier version (chronicle.json) the
	// first turn of a chronicle that has none.
	Import struct{ State *State }
)

// PhaseChat is the phase, and Stream the record stream, of a chronicle.
const (
	PhaseChat = "chat"
	Stream    = "message"
)

// Step plays one move on s (a *State) and returns the state after it.
func (g *Game) Step(ctx context.Context, t *runner.Tick, s, in any) (any, error) {
	cur := s.(*State)
	next := cur.clone()
	switch m := in.(type) {
	case Say:
		g.post(next, Person, m.Text)
	case Reply:
		if err := g.ask(ctx, t, next); err != nil {
			return nil, err
		}
	case Restart:
		if _, err := cur.modelMessage(m.N); err != nil {
			return nil, err
		}
		kept := slices.Clone(cur.Messages[:m.N-1])
		tl, err := g.replay(kept)
		if err != nil {
			return nil, err
		}
		next.Messages, next.Timeline = kept, tl
		if err := g.ask(ctx, t, next); err != nil {
			return nil, err
		}
	case Reparse:
		if err := g.reparse(next, m.N); err != nil {
			return nil, err
		}
	case StartPlay:
		if err := g.play(next); err != nil {
			return nil, err
		}
	case Import:
		if len(cur.Messages) > 0 {
			return nil, ErrImport
		}
		imported, err := g.Rebuild(m.State)
		if err != nil {
			return nil, err
		}
		next = imported
	default:
		return nil, fmt.Errorf("a chronicle takes Say, Reply, Restart, Reparse, StartPlay or Import, not %T: %w", in, runner.ErrRefused)
	}
	return next, nil
}

// ask makes the turn's one model call and posts its answer on s.
func (g *Game) ask(ctx context.Context, t *runner.Tick, s *State) error {
	if g.Client == nil {
		return errors.New("chronicle: no model client to ask")
	}
	var res llm.ChatResult
	_, err := t.Phase(ctx, runner.Phase{Name: PhaseChat, Calls: 1, Strategy: "keep_cut_message", Final: true},
		func(ctx context.Context) ([]runner.Call, error) {
			res = g.Client.Chat(ctx, g.chatRequest(s))
			call := runner.Call{Result: &llm.Result{
				Request:  llm.Request{EntityKey: res.Request.EntityKey, Phase: PhaseChat, Tick: t.N, Params: res.Request.Params},
				Messages: res.Request.Messages, Raw: res.Content,
				Attempts: res.Attempts, Latency: res.Latency, Usage: res.Usage, Err: res.Err,
				Recoveries: res.Recoveries, Endpoint: res.Endpoint, EndpointFailures: res.EndpointFailures,
				PromptTruncated: res.PromptTruncated, ContextTokens: res.ContextTokens,
			}}
			call.Recovered = cutWithText(res)
			return []runner.Call{call}, nil
		})
	if le, ok := errors.AsType[*llm.Error](err); ok && le.Code == "context_length_exceeded" {
		return fmt.Errorf("%w; the whole conversation (%d messages) no longer fits: set chronicle.window (--window N) to send only the latest N messages", err, len(s.Messages))
	}
	if err != nil {
		return err
	}
	if res.Err != nil {
		g.postCut(s, res.Content, res.Err)
		return nil
	}
	g.post(s, Model, res.Content)
	return nil
}

// cutWithText reports whether the answer was cut at max_tokens after some
// text, which the chronicle keeps.
func cutWithText(res llm.ChatResult) bool {
	return errors.Is(res.Err, llm.ErrTruncated) && strings.TrimSpace(res.Content) != ""
}

func (g *Game) reparse(s *State, n int) error {
	m, err := s.modelMessage(n)
	if err != nil {
		return err
	}
	if s.applied(n) {
		return fmt.Errorf("message %d: %w; its commands are in the timeline", n, ErrApplied)
	}
	cmds, tl, perr := Interpret(s.Timeline, m.Text)
	if perr == nil && len(cmds) == 0 {
		return fmt.Errorf("message %d: %w to reparse", n, ErrNoCommands)
	}
	note := Message{Role: System, Source: n, Time: g.now()}
	if perr != nil {
		note.Text = ErrorPrefix + perr.Error()
	} else {
		note.Text = fmt.Sprintf("%s (reparse of message %d)", appliedNote(cmds), n)
		note.Applied = cmds
		s.Timeline = tl
	}
	s.Messages = append(s.Messages, note)
	return nil
}

func (g *Game) play(s *State) error {
	if s.Timeline.stage() == Play {
		return fmt.Errorf("the game is already in play phase: %w", ErrStage)
	}
	for _, b := range []string{First, Last} {
		if s.Timeline.bookend(b) < 0 {
			return fmt.Errorf("setup is not finished: the %s bookend is missing (CREATE PERIOD <name> %s TONE light|dark DESCRIPTION <text>): %w",
				strings.ToUpper(b), strings.ToUpper(b), ErrStage)
		}
	}
	s.Messages = append(s.Messages, Message{Role: System, Stage: Play, Time: g.now(), Text: "The game moves from setup to play. " +
		"Periods now go AFTER or BEFORE an existing period, events go IN a period, one command per message."})
	s.Timeline.Stage = Play
	return nil
}

// chatRequest is the conversation as the model sees it: the system prompt,
// then the messages (the person's as user turns, the model's as assistant
// turns, the system's as user turns starting "System:") — the last Window of
// them when Window is set, after a note that earlier ones are left out — then
// the current timeline, which carries everything the left-out messages built.
// Turns of the same role in a row are joined, for servers that require user
// and assistant to alternate.
func (g *Game) chatRequest(s *State) llm.ChatRequest {
	msgs := []llm.Message{{Role: "system", Content: g.prompt}}
	add := func(role, content string) {
		if last := &msgs[len(msgs)-1]; last.Role == role && len(msgs) > 1 {
			last.Content += "\n\n" + content
			return
		}
		msgs = append(msgs, llm.Message{Role: role, Content: content})
	}
	sent := s.Messages
	if g.Window > 0 && len(sent) > g.Window {
		sent = sent[len(sent)-g.Window:]
		add("user", fmt.Sprintf("System: the %d earliest messages of this conversation are left out; the timeline at the end is complete and current.", len(s.Messages)-len(sent)))
	}
	for _, m := range sent {
		switch m.Role {
		case Person:
			add("user", m.Text)
		case Model:
			add("assistant", m.Text)
		default:
			add("user", "System: "+m.Text)
		}
	}
	add("user", "System: the current timeline.\n"+s.Timeline.Tree()+"\nWrite your next message to the person.")
	return llm.ChatRequest{EntityKey: "chronicle:" + g.ID, Phase: PhaseChat, Params: g.Params, Messages: msgs}
}

// stored is a chronicle's row in the ticks table: the timeline (derived,
// kept for people and tools that read state.db) and how many messages the
// conversation has; the messages are rows of Stream.
type stored struct {
	Timeline
	Messages int `json:"messages"`
}

// Load returns the state after turn tick: the big picture for 0, else the
// conversation as it stood, with the timeline rebuilt by replaying it.
func (g *Game) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return g.Initial(), nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var row stored
	if err := json.Unmarshal(raw, &row); err != nil {
		return nil, fmt.Errorf("read chronicle of turn %d: %w", tick, err)
	}
	recs, err := st.Records(ctx, Stream, row.Messages, tick)
	if err != nil {
		return nil, err
	}
	if len(recs) != row.Messages {
		return nil, fmt.Errorf("%w: turn %d has %d of its %d messages stored", runner.ErrStateMismatch, tick, len(recs), row.Messages)
	}
	s := &State{Messages: make([]Message, len(recs))}
	for i, r := range recs {
		if err := json.Unmarshal(r.Body, &s.Messages[i]); err != nil {
			return nil, fmt.Errorf("read message %d of turn %d: %w", r.N, tick, err)
		}
	}
	if s.Timeline, err = g.replay(s.Messages); err != nil {
		return nil, fmt.Errorf("%w: turn %d: %w", runner.ErrStateMismatch, tick, err)
	}
	return s, nil
}

// Encode writes the timeline and message count as the turn's row, and the
// messages this turn added or changed as rows of Stream.
func (g *Game) Encode(rec *store.TickRecord, prev, s any) error {
	before, after := prev.(*State), s.(*State)
	b, err := json.Marshal(stored{Timeline: after.Timeline.normalized(), Messages: len(after.Messages)})
	if err != nil {
		return err
	}
	rec.State = b
	from := 0
	for from < len(before.Messages) && from < len(after.Messages) && reflect.DeepEqual(before.Messages[from], after.Messages[from]) {
		from++
	}
	for i := from; i < len(after.Messages); i++ {
		body, err := json.Marshal(after.Messages[i])
		if err != nil {
			return err
		}
		rec.Records = append(rec.Records, store.Record{Stream: Stream, N: i + 1, Body: body})
	}
	return nil
}

// Export is the chronicle as `arbiter export` prints it: the timeline and
// the whole conversation.
func (g *Game) Export(_ context.Context, _ *store.Store, s any) (any, error) {
	st := s.(*State)
	return struct {
		Timeline
		Messages []Message `json:"messages"`
	}{st.Timeline.normalized(), st.Messages}, nil
}

// Status is the chronicle's part of `arbiter status`.
func (g *Game) Status(_ context.Context, _ *store.Store, s any) ([]runner.Field, error) {
	st := s.(*State)
	events := 0
	for _, p := range st.Timeline.Periods {
		events += len(p.Events)
	}
	return []runner.Field{
		{Key: "phase", Value: string(st.Timeline.stage())},
		{Key: "timeline", Value: fmt.Sprintf("%d periods, %d events, palette %d yes / %d no", len(st.Timeline.Periods), events, len(st.Timeline.Palette.Yes), len(st.Timeline.Palette.No))},
		{Key: "messages", Value: fmt.Sprint(len(st.Messages))},
	}, nil
}

// ChatRequest is what the model is sent when asked for its next message in
// state s: what `arbiter prompts render` shows for a chronicle.
func (g *Game) ChatRequest(s *State) llm.ChatRequest { return g.chatRequest(s) }
