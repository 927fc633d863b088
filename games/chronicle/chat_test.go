package chronicle

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
)

// session runs a terminal chat over input against the scripted model and
// returns what it wrote.
func session(t *testing.T, g *Game, h openaitest.Handler, clipboard bool, input ...string) (string, error) {
	t.Helper()
	_, client := model(t, h)
	var out bytes.Buffer
	s := &Session{Game: g, Client: client, Params: params, In: strings.NewReader(strings.Join(input, "\n") + "\n"), Out: &out, Clipboard: clipboard}
	err := s.Run(t.Context())
	return out.String(), err
}

func TestSessionSetupToPlay(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	out, err := session(t, g, openaitest.Sequence(
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

func TestSessionActions(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	bad := "Here:\nCREATE PERIOD The Singing Dawn FIRST DESCRIPTION Glass first sings."
	good := "CREATE PERIOD The Singing Dawn FIRST TONE light DESCRIPTION Glass first sings."
	out, err := session(t, g, openaitest.Sequence(
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

func TestSessionCopyToClipboard(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	mustSay(t, g, "Glass, and ümlauts.")
	out, err := session(t, g, nil, true, "/copy 1")
	if err != nil {
		t.Fatal(err)
	}
	seq := "\x1b]52;c;" + base64.StdEncoding.EncodeToString([]byte("Glass, and ümlauts.")) + "\a"
	if !strings.Contains(out, seq+"Copied message 1 to the clipboard (20 characters).") {
		t.Errorf("output = %q", out)
	}
}

func TestSessionInputMistakes(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	mustSay(t, g, "Hello")
	out, err := session(t, g, nil, false,
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
		"/reparse N    parse model message N again",
	)
	if len(g.Messages()) != 1 {
		t.Errorf("mistakes changed the conversation: %q", texts(g.Messages()))
	}
}

func TestSessionMultiLineMessage(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	out, err := session(t, g, openaitest.Always(openaitest.Content("Nice palette.")), false,
		`"""`, "CREATE PALETTE", "- YES: Singing glass", "- NO: Iron", `"""`)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out, `[2] ✅ Applied: added to the palette YES "Singing glass", NO "Iron".`, "[3] model:\n  Nice palette.")
	if p := g.Timeline().Palette; len(p.Yes) != 1 || len(p.No) != 1 {
		t.Errorf("palette = %+v", p)
	}
}

func TestSessionPersonCommandRejectedDoesNotAskModel(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	srv, client := model(t, nil)
	var out bytes.Buffer
	s := &Session{Game: g, Client: client, Params: params, In: strings.NewReader("CREATE PERIOD X FIRST TONE purple DESCRIPTION y\n"), Out: &out}
	if err := s.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out.String(), `[2] ⚠️ Command parsing error: Invalid TONE "purple" (must be light or dark)`)
	if srv.CallCount() != 0 {
		t.Errorf("model asked after the person's own error")
	}
}

func TestSessionModelFailure(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	out, err := session(t, g, openaitest.Sequence(
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
func TestSessionModelMessageCutOff(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	srv, client := model(t, openaitest.Sequence(
		openaitest.Truncated("CREATE PERIOD The First Fire FIRST TONE light DESCRIPTION A fire on the cl"),
		openaitest.Content("Here I am."),
	))
	var out bytes.Buffer
	s := &Session{Game: g, Client: client, Params: params, In: strings.NewReader("Hello?\n/raw 2\n/restart 2\n"), Out: &out}
	if err := s.Run(t.Context()); err != nil {
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

func TestSessionEndsWithContext(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	_, client := model(t, nil)
	ctx, cancel := context.WithCancel(t.Context())
	r, w := io.Pipe()
	defer w.Close()
	s := &Session{Game: g, Client: client, Params: params, In: r, Out: io.Discard}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
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

func TestSessionResumeShowsLastMessages(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	g := openGame(t, dir)
	for _, s := range []string{"one", "two", "three", "four"} {
		mustSay(t, g, s)
	}
	out, err := session(t, openGame(t, dir), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	texttest.InOrder(t, out, "4 messages so far", "[2] you:\n  two", "[4] you:\n  four")
	if strings.Contains(out, "one") {
		t.Errorf("resume shows more than the last three messages:\n%s", out)
	}
}

func TestDisplay(t *testing.T) {
	t.Parallel()
	applied := Command{Type: "palette", Items: []Item{{"YES", "a"}, {"NO", "b"}}}
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{Message{Role: Model, Text: "Prose only.\n\n"}, "Prose only."},
		{Message{Role: Model, Text: "So:\n**CREATE PALETTE**\n- YES: a\n- no: b\nDone.", Applied: []Command{applied}},
			"So:\n▸ CREATE PALETTE\n  - YES: a\n  - NO: b\nDone."},
		{Message{Role: Model, Text: "CREATE PALETTE\n- YES: a", Applied: []Command{applied, applied}}, "CREATE PALETTE\n- YES: a"},
		{Message{Role: System, Text: "note", Applied: []Command{applied}}, "note"},
	} {
		if got := Display(tc.m); got != tc.want {
			t.Errorf("Display(%q) = %q, want %q", tc.m.Text, got, tc.want)
		}
	}
}
