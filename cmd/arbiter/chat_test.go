package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
	"github.com/arbiter-sim/arbiter/session"
)

// The chat loop of `arbiter chat`, driven directly: a chronicle in a
// temporary folder, a scripted model, input as the person types it.

const glassYAML = `id: glass
kind: chronicle
title: The Glass Empire
premise: An empire built on singing glass rises, cracks and shatters.
`

const bookends = "Let's frame it.\n\nCREATE PERIOD The Singing Dawn FIRST TONE light DESCRIPTION Glass first sings.\nCREATE PERIOD The Shattering LAST TONE dark DESCRIPTION Every pane breaks.\n\nShall we do the palette?"

// chatSection is the chronicle's model seat of these tests.
var chatSection = map[string]session.SectionConfig{"chronicle": &chronicle.Config{PhaseConfig: session.PhaseConfig{Model: "test-model", Temperature: 0.7, MaxTokens: 500}}}

type glass struct {
	t   *testing.T
	dir string
}

func newGlass(t *testing.T) *glass {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), []byte(glassYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return &glass{t: t, dir: dir}
}

// open opens the chronicle with a model answering h.
func (g *glass) open(ctx context.Context, h openaitest.Handler) (*session.Session, *openaitest.Server) {
	g.t.Helper()
	srv := openaitest.New(g.t, h)
	set := session.Settings{Sections: chatSection, Plays: []string{"chronicle"}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.BackoffBase, cfg.BackoffMax = srv.URL, time.Millisecond, time.Millisecond
		return cfg, nil
	}}
	s, err := session.Open(ctx, g.dir, set, session.ReadWrite)
	if err != nil {
		g.t.Fatal(err)
	}
	return s, srv
}

// loop runs the chat loop over in, writing to out.
func (g *glass) loop(ctx context.Context, h openaitest.Handler, in io.Reader, out io.Writer) (*openaitest.Server, error) {
	s, srv := g.open(ctx, h)
	defer s.Close()
	c := &chat{s: s, conv: s.Chat(), in: in, out: out}
	return srv, c.run(ctx)
}

// say posts messages of the person, one turn each, without the chat.
func (g *glass) say(texts ...string) {
	s, _ := g.open(context.Background(), nil)
	defer s.Close()
	for _, text := range texts {
		if _, err := s.Turn(context.Background(), chronicle.Say{Text: text}); err != nil {
			g.t.Fatal(err)
		}
	}
}

func (g *glass) state() *chronicle.State {
	g.t.Helper()
	s, err := session.Open(context.Background(), g.dir, session.Settings{}, session.ReadOnly)
	if err != nil {
		g.t.Fatal(err)
	}
	defer s.Close()
	return s.State().(*chronicle.State)
}

func (g *glass) Messages() []chronicle.Message { return g.state().Messages }

func (g *glass) Timeline() chronicle.Timeline { return g.state().Timeline }

func texts(msgs []chronicle.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Text)
	}
	return out
}

// chatOver runs the chat over input against the scripted model and returns
// what it wrote.
func chatOver(t *testing.T, g *glass, h openaitest.Handler, clipboard bool, input ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	s, _ := g.open(t.Context(), h)
	defer s.Close()
	c := &chat{s: s, conv: s.Chat(), in: strings.NewReader(strings.Join(input, "\n") + "\n"), out: &out, clipboard: clipboard}
	err := c.run(t.Context())
	return out.String(), err
}

func TestChatLoopSetupToPlay(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	out, err := chatOver(t, g, openaitest.Sequence(
		openaitest.Content(bookends),
		openaitest.Content("CREATE PERIOD The Long Noon AFTER The Singing Dawn TONE light DESCRIPTION Glass everywhere."),
	), false,
		"Let's build it.",
		"/timeline",
		"/play",
		"Add a period in the middle.",
		"/quit",
		"never read",
	)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out,
		"The Glass Empire\nAn empire built on singing glass",
		"Phase: setup. 0 messages so far",
		"you> ",
		"[2] model:\n  Let's frame it.\n  \n  ▸ CREATE PERIOD \"The Singing Dawn\" FIRST TONE light DESCRIPTION Glass first sings.\n  ▸ CREATE PERIOD \"The Shattering\" LAST TONE dark DESCRIPTION Every pane breaks.\n  \n  Shall we do the palette?",
		`[3] ✅ Applied: created light period "The Singing Dawn" as the FIRST bookend; created dark period "The Shattering" as the LAST bookend.`,
		"Big picture: An empire built",
		"1. The Singing Dawn (light, FIRST bookend)",
		"[4] The game moves from setup to play.",
		"[6] model:\n  ▸ CREATE PERIOD \"The Long Noon\" AFTER \"The Singing Dawn\" TONE light",
		`[7] ✅ Applied: created light period "The Long Noon" after "The Singing Dawn".`,
	)
	if strings.Contains(out, "never read") || len(g.Messages()) != 7 {
		t.Errorf("/quit did not end the chat: %d messages", len(g.Messages()))
	}
}

func TestChatLoopActions(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	bad := "Here:\nCREATE PERIOD The Singing Dawn FIRST DESCRIPTION Glass first sings."
	good := "CREATE PERIOD The Singing Dawn FIRST TONE light DESCRIPTION Glass first sings."
	out, err := chatOver(t, g, openaitest.Sequence(
		openaitest.Content(bad),
		openaitest.Content(good),
	), false,
		"Start with the first bookend.",
		"/raw 2",
		"/copy 2",
		"/reparse 2",
		"/restart 2",
		"/reparse 2",
		"/history",
	)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out,
		"[2] model:\n  Here:\n  CREATE PERIOD The Singing Dawn FIRST DESCRIPTION Glass first sings.",
		"[3] ⚠️ Command parsing error: Missing required field TONE",
		"[2] model, as written:\n"+bad+"\n",
		"you> "+bad+"\n", // /copy without clipboard prints the text plain
		"[4] ⚠️ Command parsing error: Missing required field TONE",
		"[2] model:\n  ▸ CREATE PERIOD \"The Singing Dawn\" FIRST TONE light",
		`[3] ✅ Applied: created light period "The Singing Dawn" as the FIRST bookend.`,
		"! message 2: message already applied; its commands are in the timeline",
		"[1] you:\n  Start with the first bookend.\n[2] model:",
	)
	if msgs := g.Messages(); len(msgs) != 3 || msgs[1].Text != good {
		t.Errorf("messages after restart = %q", texts(msgs))
	}
}

func TestChatLoopCopyToClipboard(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	g.say("Glass, and ümlauts.")
	out, err := chatOver(t, g, nil, true, "/copy 1")
	if err != nil {
		t.Fatal(err)
	}
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("Glass, and ümlauts.")) + "\a"
	if !strings.Contains(out, seq+"Copied message 1 to the clipboard (20 characters).") {
		t.Errorf("output = %q", out)
	}
}

func TestChatLoopInputMistakes(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	g.say("Hello")
	out, err := chatOver(t, g, nil, false,
		"/raw",
		"/raw two",
		"/raw 0",
		"/reparse 7",
		"/raw 1",
		"/copy 1 2",
		"/restart x",
		"/restart 1",
		"/frobnicate",
		"/play",
		"/help",
		"",
		"   ",
	)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out,
		"! /raw needs one message number, e.g. /raw 3",
		`! /raw: "two" is not a message number (messages are numbered from 1)`,
		`! /raw: "0" is not a message number`,
		"! message 7: no such message (messages are 1 to 1)",
		"! message 1 is the person's: not a model message (actions apply to the model's messages)",
		"! /copy needs one message number",
		`! /restart: "x" is not a message number`,
		"! message 1 is the person's: not a model message",
		"! unknown command /frobnicate; /help lists the commands",
		"! setup is not finished: the FIRST bookend is missing",
		// /help: the chat's first line, the kind's lines and commands, the chat's.
		"Type a message and press Enter; the model answers.\nLines that start with CREATE PERIOD",
		"For a message of several lines",
		"  /timeline     show the timeline\n  /play         end setup and start play",
		"/reparse N    parse model message N again",
	)
	if len(g.Messages()) != 1 {
		t.Errorf("mistakes changed the conversation: %q", texts(g.Messages()))
	}
}

func TestChatLoopMultiLineMessage(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	out, err := chatOver(t, g, openaitest.Always(openaitest.Content("Nice palette.")), false,
		`"""`, "CREATE PALETTE", "- YES: Singing glass", "- NO: Iron", `"""`)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out, `[2] ✅ Applied: added to the palette YES "Singing glass", NO "Iron".`, "[3] model:\n  Nice palette.")
	if p := g.Timeline().Palette; len(p.Yes) != 1 || len(p.No) != 1 {
		t.Errorf("palette = %+v", p)
	}
}

func TestChatLoopPersonCommandRejectedDoesNotAskModel(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	var out bytes.Buffer
	srv, err := g.loop(t.Context(), nil, strings.NewReader("CREATE PERIOD X FIRST TONE purple DESCRIPTION y\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out.String(), `[2] ⚠️ Command parsing error: Invalid TONE "purple" (must be light or dark)`)
	if srv.CallCount() != 0 {
		t.Errorf("model asked after the person's own error")
	}
}

func TestChatLoopModelFailure(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	out, err := chatOver(t, g, openaitest.Sequence(
		openaitest.Refusal("I can't."),
		openaitest.Content("Here I am."),
	), false, "Hello?", "/restart", "/restart")
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out,
		"⚠️ Model call failed: model refused: I can't.\n   Nothing was added. Send a message, or /restart to ask again.",
		"[2] model:\n  Here I am.",
		"[2] model:\n  Here I am.", // /restart with a model message last restarts it
	)
	if msgs := g.Messages(); len(msgs) != 2 {
		t.Errorf("messages = %q", texts(msgs))
	}
}

// TestSessionModelMessageCutOff: a message cut at max_tokens stays in the
// conversation as written (seed 001), none of its commands apply, the note
// says why in the seed's error form, the model sees it next turn, and
// /restart N replaces it.
func TestChatLoopModelMessageCutOff(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	var out bytes.Buffer
	srv, err := g.loop(t.Context(), openaitest.Sequence(
		openaitest.Truncated("CREATE PERIOD The First Fire FIRST TONE light DESCRIPTION A fire on the cl"),
		openaitest.Content("Here I am."),
	), strings.NewReader("Hello?\n/raw 2\n/restart 2\n"), &out)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out.String(),
		"[2] model:\n  CREATE PERIOD",
		"[3] ⚠️ Command parsing error: message 2 was cut off before it ended (answer cut off at the token limit, finish_reason=length (max_tokens=500; raise it)), so none of its commands were applied. /restart 2 asks again",
		"DESCRIPTION A fire on the cl",
		"[2] model:\n  Here I am.",
	)
	if n := len(g.Timeline().Periods); n != 0 {
		t.Errorf("the cut message applied %d period(s)", n)
	}
	if msgs := g.Messages(); len(msgs) != 2 || msgs[1].Text != "Here I am." {
		t.Errorf("after /restart 2: messages = %q", texts(msgs))
	}
	if calls := srv.Calls(); len(calls) != 2 || strings.Contains(calls[1].LastUserMessage(), "cut off") {
		t.Errorf("the restarted call should not carry the deleted note: %d calls", len(calls))
	}
}

func TestChatLoopEndsWithContext(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	defer w.Close()
	done := make(chan error, 1)
	go func() { _, err := g.loop(ctx, nil, r, io.Discard); done <- err }()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not end with its context")
	}
}

func TestChatLoopResumeShowsLastMessages(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	g.say("one", "two", "three", "four")
	out, err := chatOver(t, g, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out, "4 messages so far", "[2] you:\n  two", "[4] you:\n  four")
	if strings.Contains(out, "one") {
		t.Errorf("resume shows more than the last three messages:\n%s", out)
	}
}
