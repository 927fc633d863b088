package chronicle

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// Errors of the message actions and phase changes, for errors.Is. Each
// wraps runner.ErrRefused: the move is refused and the game goes on.
var (
	ErrNoMessage  = runner.Refusal("no such message")
	ErrNotModel   = runner.Refusal("not a model message")
	ErrApplied    = runner.Refusal("message already applied")
	ErrNoCommands = runner.Refusal("message has no commands")
	ErrStage      = runner.Refusal("not allowed in this phase")
	ErrImport     = runner.Refusal("only a chronicle with no turns can import a saved game")
	// ErrNotChronicle is returned by Open for a simulation of another kind.
	ErrNotChronicle = errors.New("not a chronicle simulation")
)

// PromptFile is the template of the model's system prompt; a simulation's
// prompts/chronicle_system.md overrides the default.
const PromptFile = "chronicle_system.md"

// Game is the chronicle kind of simulation: a person and a model build a
// history in conversation. It is the runner's Game: each move (Say, Reply,
// Play, Reparse, Restart) is one turn, committed whole to state.db. Its
// state is a *State. Client and Params are needed only for the moves that
// ask the model (Reply, Restart).
type Game struct {
	ID         string
	Title      string
	BigPicture string
	// Window is how many of the latest messages are sent to the model with
	// each turn (0: all), so a long chat stays within the model's context.
	Window int
	Client *llm.Client
	Params llm.Params

	prompt string // the rendered system prompt
	now    func() time.Time
}

// Open checks the chronicle simulation sim (its premise is the big picture)
// and renders its system prompt with pr (the simulation's override, or the
// default).
func Open(sim *world.Simulation, pr *prompts.Renderer) (*Game, error) {
	yaml := filepath.Join(sim.Dir, "simulation.yaml")
	if sim.Kind != KindName {
		return nil, fmt.Errorf("%s: kind %q: %w (set kind: chronicle)", yaml, sim.Kind, ErrNotChronicle)
	}
	if strings.TrimSpace(sim.Premise) == "" {
		return nil, fmt.Errorf("%s: missing premise: a chronicle's premise is the big picture of its history", yaml)
	}
	g := &Game{ID: sim.ID, Title: sim.Title, BigPicture: strings.TrimSpace(sim.Premise), now: time.Now}
	prompt, err := pr.Render(PromptFile, promptData{Title: g.Title, BigPicture: g.BigPicture})
	if err != nil {
		return nil, err
	}
	g.prompt = prompt
	return g, nil
}

// promptData is what the system prompt template sees.
type promptData struct {
	Title      string
	BigPicture string
}

// KindName is the chronicle's kind, as simulation.yaml names it.
const KindName = "chronicle"

// Kind is KindName.
func (g *Game) Kind() string { return KindName }

// State is a chronicle after a turn: the conversation, and the timeline the
// commands recorded on its messages built.
type State struct {
	Timeline Timeline
	Messages []Message // message n is at index n-1
}

// Initial is the state before any message: the big picture, in setup.
func (g *Game) Initial() *State {
	return &State{Timeline: g.initial(), Messages: []Message{}}
}

func (g *Game) initial() Timeline {
	return Timeline{BigPicture: g.BigPicture, Stage: Setup}
}

// clone returns a copy that the next turn may change.
func (s *State) clone() *State {
	return &State{Timeline: s.Timeline.Clone(), Messages: slices.Clone(s.Messages)}
}

// replay rebuilds the timeline from the commands and phase changes recorded
// on the messages, in order.
func (g *Game) replay(msgs []Message) (Timeline, error) {
	tl := g.initial()
	for i, m := range msgs {
		if m.Stage != "" {
			if _, err := ParseStage(string(m.Stage)); err != nil {
				return tl, fmt.Errorf("message %d: %w", i+1, err)
			}
			tl.Stage = m.Stage
		}
		for _, c := range m.Applied {
			if _, err := tl.Apply(c); err != nil {
				return tl, fmt.Errorf("message %d: recorded command no longer applies (%s): %w", i+1, c, err)
			}
		}
	}
	return tl, nil
}

// post appends a message of the person or the model and applies its
// commands, all or nothing; a system message says what was applied or why
// nothing was.
func (g *Game) post(s *State, role Role, text string) {
	n := len(s.Messages) + 1
	m := Message{Role: role, Text: text, Time: g.now()}
	cmds, tl, err := Interpret(s.Timeline, text)
	var note *Message
	switch {
	case err != nil:
		m.Rejected = true
		note = &Message{Role: System, Text: ErrorPrefix + err.Error(), Source: n, Time: m.Time}
	case len(cmds) > 0:
		m.Applied = cmds
		s.Timeline = tl
		note = &Message{Role: System, Text: appliedNote(cmds), Source: n, Time: m.Time}
	}
	s.Messages = append(s.Messages, m)
	if note != nil {
		s.Messages = append(s.Messages, *note)
	}
}

// postCut appends a model message that was cut off at the token limit: kept
// as written, none of its commands applied, and an error note saying so.
func (g *Game) postCut(s *State, text string, cause error) {
	n := len(s.Messages) + 1
	m := Message{Role: Model, Text: text, Time: g.now(), Rejected: true}
	note := Message{Role: System, Source: n, Time: m.Time, Text: ErrorPrefix + fmt.Sprintf(
		"message %d was cut off before it ended (%v), so none of its commands were applied. /restart %d asks again; raise chronicle.max_tokens for longer messages.", n, cause, n)}
	s.Messages = append(s.Messages, m, note)
}

// appliedNote is the system message of applied commands.
func appliedNote(cmds []Command) string {
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		parts[i] = c.Summary()
	}
	return "✅ Applied: " + strings.Join(parts, "; ") + "."
}

// Message returns message n (1-based).
func (s *State) Message(n int) (Message, error) {
	if n < 1 || n > len(s.Messages) {
		if len(s.Messages) == 0 {
			return Message{}, fmt.Errorf("message %d: %w (the conversation is empty)", n, ErrNoMessage)
		}
		return Message{}, fmt.Errorf("message %d: %w (messages are 1 to %d)", n, ErrNoMessage, len(s.Messages))
	}
	return s.Messages[n-1], nil
}

// modelMessage returns message n, which must be the model's.
func (s *State) modelMessage(n int) (Message, error) {
	m, err := s.Message(n)
	if err == nil && m.Role != Model {
		err = fmt.Errorf("message %d is the %s's: %w (actions apply to the model's messages)", n, m.Role, ErrNotModel)
	}
	return m, err
}

// Raw returns model message n exactly as the model wrote it, before command
// parsing ("show unparsed output").
func (s *State) Raw(n int) (string, error) {
	m, err := s.modelMessage(n)
	return m.Text, err
}

// applied reports whether the commands of message n are in the timeline:
// applied when it was posted, or by a reparse since.
func (s *State) applied(n int) bool {
	if len(s.Messages[n-1].Applied) > 0 {
		return true
	}
	return slices.ContainsFunc(s.Messages[n:], func(m Message) bool { return m.Source == n && len(m.Applied) > 0 })
}

// LastModelMessage is the number of the last message when it is the model's,
// else 0.
func (s *State) LastModelMessage() int {
	if k := len(s.Messages); k > 0 && s.Messages[k-1].Role == Model {
		return k
	}
	return 0
}

// Rebuild returns s with its timeline rebuilt from its messages, as Load
// does: a saved game's timeline is derived, never trusted.
func (g *Game) Rebuild(s *State) (*State, error) {
	tl, err := g.replay(s.Messages)
	if err != nil {
		return nil, err
	}
	return &State{Timeline: tl, Messages: slices.Clone(s.Messages)}, nil
}
