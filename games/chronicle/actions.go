package chronicle

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
)

// Raw returns model message n exactly as the model wrote it, before command
// parsing ("show unparsed output").
func (g *Game) Raw(n int) (string, error) {
	m, err := g.modelMessage(n)
	return m.Text, err
}

// CopyText returns the text of message n for the clipboard.
func (g *Game) CopyText(n int) (string, error) {
	m, err := g.message(n)
	return m.Text, err
}

// applied reports whether the commands of message n are in the timeline:
// applied when it was posted, or by a reparse since.
func (g *Game) applied(n int) bool {
	if len(g.msgs[n-1].Applied) > 0 {
		return true
	}
	return slices.ContainsFunc(g.msgs[n:], func(m Message) bool { return m.Source == n && len(m.Applied) > 0 })
}

// Reparse reads model message n again with the current parser, against the
// current timeline, and applies its commands if they are valid now. Either
// way a system message says what happened, and is returned. A message whose
// commands were applied already, or that has none, is refused.
func (g *Game) Reparse(n int) (Message, error) {
	m, err := g.modelMessage(n)
	if err != nil {
		return Message{}, err
	}
	if g.applied(n) {
		return Message{}, fmt.Errorf("message %d: %w; its commands are in the timeline", n, ErrApplied)
	}
	cmds, tl, perr := Interpret(g.tl, m.Text)
	if perr == nil && len(cmds) == 0 {
		return Message{}, fmt.Errorf("message %d: %w to reparse", n, ErrNoCommands)
	}
	note := Message{Role: System, Source: n, Time: g.now()}
	if perr != nil {
		note.Text = ErrorPrefix + perr.Error()
	} else {
		note.Text = fmt.Sprintf("%s (reparse of message %d)", appliedNote(cmds), n)
		note.Applied = cmds
	}
	err = g.change(func() {
		g.msgs = append(g.msgs, note)
		if perr == nil {
			g.tl = tl
		}
	})
	return note, err
}

// Reply asks the model for its next message in the conversation as it
// stands, then posts it: its commands are applied all or nothing and a
// system message says what happened. It returns the messages added. A
// message cut off at max_tokens is kept (seed 001: the model's message goes
// into history) with none of its commands applied and an error note the
// model sees next turn. When the model call fails otherwise nothing changes
// and the error is the call's (*llm.Error).
func (g *Game) Reply(ctx context.Context, client *llm.Client, params llm.Params) ([]Message, error) {
	return g.answer(client.Chat(ctx, g.chatRequest(params)))
}

// answer posts the model's answer: whole, or cut off with a note; any other
// failed call changes nothing.
func (g *Game) answer(res llm.ChatResult) ([]Message, error) {
	post := func() []Message { return g.post(Model, res.Content) }
	if res.Err != nil {
		if !errors.Is(res.Err, llm.ErrTruncated) || strings.TrimSpace(res.Content) == "" {
			return nil, res.Err
		}
		post = func() []Message { return g.postCut(res.Content, res.Err) }
	}
	var added []Message
	if err := g.change(func() { added = post() }); err != nil {
		return nil, err
	}
	return added, nil
}

// Restart deletes model message n and every message after it, rebuilds the
// timeline without them, and asks the model again from the prior context
// ("restart from here"). If the model call fails, nothing is deleted.
func (g *Game) Restart(ctx context.Context, n int, client *llm.Client, params llm.Params) ([]Message, error) {
	if _, err := g.modelMessage(n); err != nil {
		return nil, err
	}
	msgs, tl := g.msgs, g.tl
	kept := slices.Clone(g.msgs[:n-1])
	rebuilt, err := g.replay(kept)
	if err != nil {
		return nil, err
	}
	g.msgs, g.tl = kept, rebuilt
	added, err := g.answer(client.Chat(ctx, g.chatRequest(params)))
	if err != nil {
		g.msgs, g.tl = msgs, tl
		return nil, err
	}
	return added, nil
}
