package chronicle

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/world"
)

// Errors of the message actions and phase changes, for errors.Is.
var (
	ErrNoMessage    = errors.New("no such message")
	ErrNotModel     = errors.New("not a model message")
	ErrApplied      = errors.New("message already applied")
	ErrNoCommands   = errors.New("message has no commands")
	ErrPhase        = errors.New("not allowed in this phase")
	ErrNotChronicle = errors.New("not a chronicle simulation")
)

// Game is one chronicle: its simulation, its conversation and the timeline
// the conversation built. Every change is saved before the method that made
// it returns; a change that cannot be saved is undone. A Game is not safe for
// concurrent use.
type Game struct {
	ID         string
	Title      string
	BigPicture string
	// Window is how many of the latest messages are sent to the model with
	// each turn (0: all), so a long chat stays within the model's context.
	Window int

	dir    string
	path   string
	prompt string // the rendered system prompt
	msgs   []Message
	tl     Timeline
	now    func() time.Time
}

// Open loads the chronicle simulation in dir (simulation.yaml with kind:
// chronicle; its premise is the big picture) and its conversation from
// chronicle.json, when there is one.
func Open(dir string) (*Game, error) {
	sim, err := world.Load(dir)
	if err != nil {
		return nil, err
	}
	yaml := filepath.Join(dir, "simulation.yaml")
	if sim.Kind != world.KindChronicle {
		return nil, fmt.Errorf("%s: kind %q: %w (set kind: chronicle)", yaml, sim.Kind, ErrNotChronicle)
	}
	if strings.TrimSpace(sim.Premise) == "" {
		return nil, fmt.Errorf("%s: missing premise: a chronicle's premise is the big picture of its history", yaml)
	}
	g := &Game{
		ID:         sim.ID,
		Title:      sim.Title,
		BigPicture: strings.TrimSpace(sim.Premise),
		dir:        dir,
		path:       filepath.Join(dir, FileName),
		now:        time.Now,
	}
	if g.prompt, err = renderPrompt(dir, promptData{Title: g.Title, BigPicture: g.BigPicture}); err != nil {
		return nil, err
	}
	f, err := load(g.path)
	if err != nil {
		return nil, err
	}
	if g.tl, err = g.replay(f.Messages); err != nil {
		return nil, fmt.Errorf("%s: %w", g.path, err)
	}
	g.msgs = f.Messages
	return g, nil
}

// Path is the chronicle file.
func (g *Game) Path() string { return g.path }

// Timeline returns a copy of the timeline.
func (g *Game) Timeline() Timeline { return g.tl.normalized() }

// Messages returns a copy of the conversation; message n is at index n-1.
func (g *Game) Messages() []Message { return slices.Clone(g.msgs) }

// initial is the timeline before any message: the big picture, in setup.
func (g *Game) initial() Timeline {
	return Timeline{BigPicture: g.BigPicture, Phase: Setup}
}

// replay rebuilds the timeline from the commands and phase changes recorded
// on the messages, in order.
func (g *Game) replay(msgs []Message) (Timeline, error) {
	tl := g.initial()
	for i, m := range msgs {
		if m.Phase != "" {
			if _, err := ParsePhase(string(m.Phase)); err != nil {
				return tl, fmt.Errorf("message %d: %w", i+1, err)
			}
			tl.Phase = m.Phase
		}
		for _, c := range m.Applied {
			if _, err := tl.Apply(c); err != nil {
				return tl, fmt.Errorf("message %d: recorded command no longer applies (%s): %w", i+1, c, err)
			}
		}
	}
	return tl, nil
}

// change runs edit and saves; if saving fails, the conversation and the
// timeline are put back as they were.
func (g *Game) change(edit func()) error {
	msgs, tl := slices.Clone(g.msgs), g.tl.Clone()
	edit()
	err := save(g.path, file{Version: fileVersion, Timeline: g.tl.normalized(), Messages: g.msgs})
	if err != nil {
		g.msgs, g.tl = msgs, tl
		return fmt.Errorf("saving the chronicle: %w", err)
	}
	return nil
}

// post appends a message of the person or the model and applies its
// commands, all or nothing; a system message says what was applied or why
// nothing was. It returns the messages added.
func (g *Game) post(role Role, text string) []Message {
	n := len(g.msgs) + 1
	m := Message{Role: role, Text: text, Time: g.now()}
	cmds, tl, err := Interpret(g.tl, text)
	var note *Message
	switch {
	case err != nil:
		m.Rejected = true
		note = &Message{Role: System, Text: ErrorPrefix + err.Error(), Source: n, Time: m.Time}
	case len(cmds) > 0:
		m.Applied = cmds
		g.tl = tl
		note = &Message{Role: System, Text: appliedNote(cmds), Source: n, Time: m.Time}
	}
	g.msgs = append(g.msgs, m)
	if note != nil {
		g.msgs = append(g.msgs, *note)
	}
	return slices.Clone(g.msgs[n-1:])
}

// postCut appends a model message that was cut off at the token limit: kept
// as written, none of its commands applied, and an error note saying so.
func (g *Game) postCut(text string, cause error) []Message {
	n := len(g.msgs) + 1
	m := Message{Role: Model, Text: text, Time: g.now(), Rejected: true}
	note := Message{Role: System, Source: n, Time: m.Time, Text: ErrorPrefix + fmt.Sprintf(
		"message %d was cut off before it ended (%v), so none of its commands were applied. /restart %d asks again; raise chronicle.max_tokens for longer messages.", n, cause, n)}
	g.msgs = append(g.msgs, m, note)
	return slices.Clone(g.msgs[n-1:])
}

// appliedNote is the system message of applied commands.
func appliedNote(cmds []Command) string {
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		parts[i] = c.Summary()
	}
	return "✅ Applied: " + strings.Join(parts, "; ") + "."
}

// Say adds a message of the person. Its commands, if any, are applied all or
// nothing, as the model's are. It returns the messages added and whether the
// model should answer: not when the person's commands were rejected, so the
// person can fix them first.
func (g *Game) Say(text string) ([]Message, bool, error) {
	var added []Message
	if err := g.change(func() { added = g.post(Person, text) }); err != nil {
		return nil, false, err
	}
	return added, !added[0].Rejected, nil
}

// Play moves the game from setup to play. Both bookends must exist.
func (g *Game) Play() (Message, error) {
	if g.tl.phase() == Play {
		return Message{}, fmt.Errorf("the game is already in play phase: %w", ErrPhase)
	}
	for _, b := range []string{First, Last} {
		if g.tl.bookend(b) < 0 {
			return Message{}, fmt.Errorf("setup is not finished: the %s bookend is missing (CREATE PERIOD <name> %s TONE light|dark DESCRIPTION <text>): %w",
				strings.ToUpper(b), strings.ToUpper(b), ErrPhase)
		}
	}
	m := Message{Role: System, Phase: Play, Time: g.now(), Text: "The game moves from setup to play. " +
		"Periods now go AFTER or BEFORE an existing period, events go IN a period, one command per message."}
	err := g.change(func() {
		g.msgs = append(g.msgs, m)
		g.tl.Phase = Play
	})
	return m, err
}

// message returns message n (1-based).
func (g *Game) message(n int) (Message, error) {
	if n < 1 || n > len(g.msgs) {
		if len(g.msgs) == 0 {
			return Message{}, fmt.Errorf("message %d: %w (the conversation is empty)", n, ErrNoMessage)
		}
		return Message{}, fmt.Errorf("message %d: %w (messages are 1 to %d)", n, ErrNoMessage, len(g.msgs))
	}
	return g.msgs[n-1], nil
}

// modelMessage returns message n, which must be the model's.
func (g *Game) modelMessage(n int) (Message, error) {
	m, err := g.message(n)
	if err == nil && m.Role != Model {
		err = fmt.Errorf("message %d is the %s's: %w (actions apply to the model's messages)", n, m.Role, ErrNotModel)
	}
	return m, err
}
