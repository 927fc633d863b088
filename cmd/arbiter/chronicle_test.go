package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
)

// chronicleCopy copies simulations/chronicle-demo, without its game state,
// into a temporary folder.
func chronicleCopy(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot, "simulations", "chronicle-demo")
	dst := filepath.Join(t.TempDir(), "chronicle-demo")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"simulation.yaml", "README.md"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// arbiterIn runs the command in-process with stdin and returns exit code,
// stdout, stderr.
func arbiterIn(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	ios, out, errOut := TestStreams(stdin)
	code := Execute(context.Background(), ios, args)
	return code, out.String(), errOut.String()
}

const (
	demoBookends = "A fine frame.\n\n**CREATE PERIOD** The First Fire FIRST TONE light DESCRIPTION A fire on the cliffs.\n" +
		"CREATE PERIOD The Dark Shore LAST TONE dark DESCRIPTION The last lamp goes out.\n\n" +
		"CREATE PALETTE\n- YES: Sea monsters\n- NO: Electricity"
	demoBadEvent  = "CREATE EVENT The Oath IN The Founding TONE light DESCRIPTION The first keepers swear."
	demoGoodEvent = "CREATE EVENT The Oath IN The First Fire TONE light DESCRIPTION The first keepers swear."
)

// TestChatThroughTerminal plays a chronicle through arbiter chat's streams
// with the model behind the in-process server: setup, play, a rejected
// message and each message action.
func TestChatThroughTerminal(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, openaitest.Sequence(
		openaitest.Content(demoBookends),
		openaitest.Content(demoBadEvent),
		openaitest.Content(demoGoodEvent),
	))
	sim := chronicleCopy(t)
	input := strings.Join([]string{
		"Let's begin with the frame and the palette.",
		"/timeline",
		"/play",
		"Now the first event.",
		"/raw 6",
		"/reparse 6",
		"/restart 6",
		"/copy 6",
		"/quit",
	}, "\n")
	code, out, errOut := arbiterIn(t, input, "chat", sim)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	texttest.InOrder(t, out,
		"The Long Watch of the Lamplighters",
		"Phase: setup. 0 messages so far",
		"[2] model:\n  A fine frame.",
		`▸ CREATE PERIOD "The First Fire" FIRST TONE light DESCRIPTION A fire on the cliffs.`,
		`[3] ✅ Applied: created light period "The First Fire" as the FIRST bookend; created dark period "The Dark Shore" as the LAST bookend; added to the palette YES "Sea monsters", NO "Electricity".`,
		"Periods:\n  1. The First Fire (light, FIRST bookend)",
		"[4] The game moves from setup to play.",
		"[6] model:\n  "+demoBadEvent,
		`[7] ⚠️ Command parsing error: Parent period "The Founding" not found`,
		"[6] model, as written:\n"+demoBadEvent,
		`[8] ⚠️ Command parsing error: Parent period "The Founding" not found`,
		"[6] model:\n  ▸ CREATE EVENT \"The Oath\" IN \"The First Fire\" TONE light",
		`[7] ✅ Applied: created light event "The Oath" in period "The First Fire".`,
		"you> "+demoGoodEvent+"\n",
	)

	// The requests: plain chat with the chat's parameters; the model saw its
	// error before the restart removed it.
	calls := srv.Calls()
	if len(calls) != 3 {
		t.Fatalf("%d model calls, want 3", len(calls))
	}
	req := calls[0].Request
	if req.Model != "test-model" || req.Temperature != 0.8 || req.MaxTokens != 1000 || req.ResponseFormat != nil {
		t.Errorf("request: model %q temperature %v max_tokens %d response_format %v", req.Model, req.Temperature, req.MaxTokens, req.ResponseFormat)
	}
	if strings.Contains(calls[2].LastUserMessage(), "The Founding") {
		t.Error("the restarted call still holds the deleted message")
	}

	checkSavedChronicle(t, sim)
}

// checkSavedChronicle checks the chronicle of sim after TestChatThroughTerminal:
// show prints it as a tree and as JSON, export prints the timeline parse
// reads, and status counts every message as a turn committed.
func checkSavedChronicle(t *testing.T, sim string) {
	t.Helper()
	// The game is saved: show prints it, as a tree and as JSON.
	code, out, _ := arbiter(t, "chronicle", "show", sim)
	if code != 0 {
		t.Fatalf("show: exit %d", code)
	}
	texttest.InOrder(t, out, "The Long Watch of the Lamplighters", "Big picture: On a coast", "Phase: play",
		"YES: Sea monsters", "NO: Electricity",
		"1. The First Fire (light, FIRST bookend)", "A fire on the cliffs.", "- The Oath (light)", "The first keepers swear.",
		"2. The Dark Shore (dark, LAST bookend)")
	code, out, _ = arbiter(t, "chronicle", "show", sim, "--json")
	var tl chronicle.Timeline
	if err := json.Unmarshal([]byte(out), &tl); code != 0 || err != nil {
		t.Fatalf("show --json: exit %d, %v\n%s", code, err, out)
	}
	if tl.Stage != chronicle.Play || len(tl.Periods) != 2 || len(tl.Periods[0].Events) != 1 || tl.Periods[0].Events[0].Name != "The Oath" {
		t.Errorf("show --json = %+v", tl)
	}

	// What export prints is the timeline parse reads.
	code, out, _ = arbiter(t, "export", sim)
	exported := filepath.Join(t.TempDir(), "chronicle.json")
	if err := os.WriteFile(exported, []byte(out), 0o644); code != 0 || err != nil {
		t.Fatalf("export: exit %d, %v", code, err)
	}
	code, out, _ = arbiterIn(t, "CREATE EVENT The Vigil IN the first fire AFTER the oath TONE dark DESCRIPTION x",
		"chronicle", "parse", "--timeline", exported)
	texttest.InOrder(t, out, `"ok": true`, `"anchor": "The Oath"`, `"period": "The First Fire"`)
	if code != 0 {
		t.Errorf("parse --timeline <export>: exit %d", code)
	}
	// Every message was a turn committed to state.db: 2 of the person, 3
	// model replies, /play and /reparse.
	code, out, _ = arbiter(t, "status", sim)
	texttest.InOrder(t, out, "(chronicle)", "phase:", "play", "messages:", "7", "last tick:    7", "model calls:  3")
	if code != 0 {
		t.Errorf("status: exit %d", code)
	}
}

func TestChatEndsAtEndOfInput(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.Content("Hello, co-author.")))
	sim := chronicleCopy(t)
	code, out, _ := arbiterIn(t, "Hi\n", "chat", sim)
	if code != 0 || !strings.Contains(out, "[2] model:\n  Hello, co-author.") {
		t.Errorf("exit %d\n%s", code, out)
	}
	// A second chat resumes the conversation.
	code, out, _ = arbiterIn(t, "", "chat", sim)
	if code != 0 || !strings.Contains(out, "2 messages so far") || !strings.Contains(out, "[1] you:\n  Hi") {
		t.Errorf("resume: exit %d\n%s", code, out)
	}
}

func TestChatModelFailureKeepsChatting(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Sequence(
		openaitest.Status(404, "invalid_request_error", "model_not_found", "The model does not exist"),
		openaitest.Content("Found it."),
	))
	sim := chronicleCopy(t)
	code, out, _ := arbiterIn(t, "Hi\n/restart\n", "chat", sim)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	texttest.InOrder(t, out, "⚠️ Model call failed: 404 not found", "check llm.model and llm.base_url", "[2] model:\n  Found it.")
}

func TestChatInterrupted(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := chronicleCopy(t)
	r, w := io.Pipe()
	defer w.Close()
	ios, _, errOut := TestStreams("")
	ios.In = r
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() { done <- Execute(ctx, ios, []string{"chat", sim}) }()
	cancel() // whether the chat is starting or waiting for input, Ctrl-C ends it
	select {
	case code := <-done:
		if code != ExitInterrupted || !strings.Contains(errOut.String(), "chat interrupted; everything up to the last message is saved") {
			t.Errorf("exit %d, stderr %q", code, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("chat did not stop on Ctrl-C")
	}
}

func TestChronicleUsageErrors(t *testing.T) {
	cleanEnv(t)
	narrative := demoCopy(t)
	sim := chronicleCopy(t)
	corrupt := chronicleCopy(t)
	if err := os.WriteFile(filepath.Join(corrupt, chronicle.FileName), []byte(`{"version": 1, "periods": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	badTimeline := filepath.Join(t.TempDir(), "timeline.json")
	if err := os.WriteFile(badTimeline, []byte(`{"periods": [{"name": "A", "tone": "grey"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		env  bool // a model endpoint is configured
		want string
	}{
		{[]string{"chat"}, true, "takes 1 argument, got 0"},
		{[]string{"chat", narrative}, true, "is a narrative simulation: `arbiter run "},
		{[]string{"chat", filepath.Join(sim, "nope")}, true, "cannot open simulation folder"},
		{[]string{"chat", corrupt}, true, "chronicle.json: unexpected EOF"},
		{[]string{"chat", sim, "--temperature", "3"}, true, "config chronicle.temperature: must be within 0..2, got 3"},
		{[]string{"chat", sim, "--max-tokens", "0"}, true, "config chronicle.max_tokens: must be a whole number from 1 to 1000000, got 0"},
		{[]string{"chat", sim, "--tempreature", "1"}, true, "unknown flag: --tempreature"},
		{[]string{"chat", sim}, false, "no model endpoint configured"},
		{[]string{"chat", sim, "--base-url", "ftp://x"}, true, `llm.base_url "ftp://x" must be an http:// or https:// URL`},
		{[]string{"chronicle", "show"}, true, "takes 1 argument, got 0"},
		{[]string{"chronicle", "show", narrative}, true, "is a narrative simulation, not a chronicle"},
		{[]string{"chronicle", "show", corrupt}, true, "chronicle.json: unexpected EOF"},
		{[]string{"chronicle", "parse", "--phase", "endgame"}, true, `--phase: phase "endgame" must be setup or play`},
		{[]string{"chronicle", "parse", "--timeline", filepath.Join(sim, "missing.json")}, true, "--timeline: open"},
		{[]string{"chronicle", "parse", "--timeline", badTimeline}, true, `timeline.json: periods[0].tone "grey" must be light or dark`},
		{[]string{"chronicle", "parse", "extra"}, true, "takes 0 arguments, got 1"},
		{[]string{"chronicle", "frobnicate"}, true, `unknown command "frobnicate"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if tc.env {
				fakeModel(t, nil)
			}
			code, _, errOut := arbiterIn(t, "", tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d (want %d), stderr:\n%s\nwant %q", code, ExitUsage, errOut, tc.want)
			}
			if exists(filepath.Join(sim, "state.db")) || exists(filepath.Join(narrative, "state.db")) {
				t.Error("a refused command wrote state.db")
			}
		})
	}
}

// parsed is the JSON `chronicle parse` prints.
type parsed struct {
	OK       bool                `json:"ok"`
	Commands []chronicle.Command `json:"commands"`
	Error    string              `json:"error"`
}

func parse(t *testing.T, stdin string, args ...string) parsed {
	t.Helper()
	code, out, errOut := arbiterIn(t, stdin, append([]string{"chronicle", "parse"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var p parsed
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	if p.OK != (p.Error == "") {
		t.Errorf("ok %v with error %q", p.OK, p.Error)
	}
	return p
}

// parseTimelines writes the timelines TestChronicleParse reads: minimal,
// the shape the issue promises to accept, missing fields and all; inPlay,
// a timeline in the play phase.
func parseTimelines(t *testing.T) (minimal, inPlay string) {
	t.Helper()
	dir := t.TempDir()
	minimal = filepath.Join(dir, "minimal.json")
	if err := os.WriteFile(minimal, []byte(`{"periods":[{"name":"The Uprising Years","tone":"light","events":[{"name":"The Uprising","tone":"dark"}]}],"palette":{"yes":[],"no":[]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	inPlay = filepath.Join(dir, "play.json")
	if err := os.WriteFile(inPlay, []byte(`{"phase":"play","periods":[{"name":"A"},{"name":"B"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return minimal, inPlay
}

func TestChronicleParse(t *testing.T) {
	cleanEnv(t)
	minimal, inPlay := parseTimelines(t)
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		err   string
	}{
		{"seed example 1", "CREATE PERIOD The Golden Age FIRST DESCRIPTION An era of prosperity", []string{"--phase", "setup"},
			"Missing required field TONE"},
		{"seed example 2", "CREATE EVENT The Battle IN The Dark Times AFTER The Uprising TONE dark DESCRIPTION ...",
			[]string{"--phase", "play", "--timeline", minimal}, `Parent period "The Dark Times" not found`},
		{"seed example 3", "CREATE PERIOD The Renaissance FIRST TONE light DESCRIPTION ...", []string{"--phase", "play"},
			"FIRST/LAST positioning only available during setup phase. Use AFTER or BEFORE."},
		{"seed example 4", "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel", nil,
			`Invalid palette item type "MAYBE" (must be YES or NO). No palette items were added.`},
		{"AFTER in setup", "CREATE PERIOD X AFTER A TONE light DESCRIPTION x", nil,
			"AFTER/BEFORE positioning only available during play phase. Use FIRST or LAST."},
		{"phase from the file", "CREATE PERIOD X FIRST TONE light DESCRIPTION x", []string{"--timeline", inPlay},
			"FIRST/LAST positioning only available during setup phase. Use AFTER or BEFORE."},
		{"--phase overrides the file", "CREATE PERIOD X AFTER A TONE light DESCRIPTION x", []string{"--timeline", inPlay, "--phase", "setup"},
			"AFTER/BEFORE positioning only available during play phase. Use FIRST or LAST."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := parse(t, tc.stdin, tc.args...)
			if p.OK || p.Error != tc.err || p.Commands != nil {
				t.Errorf("parse = %+v, want error %q", p, tc.err)
			}
		})
	}

	t.Run("bookends and palette", func(t *testing.T) {
		p := parse(t, demoBookends, "--phase", "setup")
		if !p.OK || len(p.Commands) != 3 {
			t.Fatalf("parse = %+v", p)
		}
		want := []chronicle.Command{
			{Type: "period", Name: "The First Fire", Tone: "light", Description: "A fire on the cliffs.", Position: "first", Line: 3},
			{Type: "period", Name: "The Dark Shore", Tone: "dark", Description: "The last lamp goes out.", Position: "last", Line: 4},
			{Type: "palette", Items: []chronicle.Item{{Kind: "YES", Text: "Sea monsters"}, {Kind: "NO", Text: "Electricity"}}, Line: 6},
		}
		for i := range want {
			if got, _ := json.Marshal(p.Commands[i]); string(got) != mustJSON(t, want[i]) {
				t.Errorf("command %d = %s\nwant %s", i, got, mustJSON(t, want[i]))
			}
		}
	})
	t.Run("event against the minimal timeline", func(t *testing.T) {
		p := parse(t, "OK:\n- create event the vote in the uprising years after the uprising tone: light description: They choose.", "--phase", "play", "--timeline", minimal)
		want := chronicle.Command{Type: "event", Name: "the vote", Tone: "light", Description: "They choose.",
			Position: "after", Anchor: "The Uprising", Period: "The Uprising Years", Line: 2}
		if !p.OK || len(p.Commands) != 1 || mustJSON(t, p.Commands[0]) != mustJSON(t, want) {
			t.Errorf("parse = %+v", p)
		}
	})
	t.Run("every field is in the output", func(t *testing.T) {
		_, out, _ := arbiterIn(t, "CREATE PERIOD X FIRST TONE light DESCRIPTION x", "chronicle", "parse")
		for _, key := range []string{`"type"`, `"name"`, `"tone"`, `"description"`, `"position"`, `"anchor"`, `"period"`} {
			if !strings.Contains(out, key) {
				t.Errorf("output lacks %s:\n%s", key, out)
			}
		}
	})
	t.Run("prose only", func(t *testing.T) {
		_, out, _ := arbiterIn(t, "Nothing to add yet.", "chronicle", "parse", "--phase", "play")
		if strings.Join(strings.Fields(out), "") != `{"ok":true,"commands":[]}` {
			t.Errorf("output = %s", out)
		}
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestResetChronicle(t *testing.T) {
	cleanEnv(t)
	sim := chronicleCopy(t)
	if code, out, _ := arbiter(t, "reset", sim); code != 0 || !strings.Contains(out, "no run state to delete") {
		t.Errorf("reset of a fresh chronicle: exit %d\n%s", code, out)
	}
	if code, _, errOut := arbiterIn(t, "CREATE PERIOD Dawn FIRST TONE light DESCRIPTION First light.\n/quit\n", "chat", sim, "--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1"); code != 0 {
		t.Fatalf("chat: exit %d\n%s", code, errOut)
	}
	if !exists(filepath.Join(sim, "state.db")) {
		t.Fatal("the chat saved nothing")
	}
	if code, out, _ := arbiter(t, "reset", sim); code != 0 || !strings.Contains(out, "deleted") || exists(filepath.Join(sim, "state.db")) {
		t.Errorf("reset: exit %d\n%s", code, out)
	}
	if !exists(filepath.Join(sim, "simulation.yaml")) {
		t.Error("reset deleted an authored file")
	}
}

func TestChronicleParseKeepsAngleBrackets(t *testing.T) {
	cleanEnv(t)
	code, out, _ := arbiterIn(t, "CREATE PERIOD <Dusk> & Dawn LAST TONE dark DESCRIPTION x", "chronicle", "parse", "--phase", "setup")
	if code != 0 || !strings.Contains(out, `"name": "<Dusk> & Dawn"`) {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestChronicleParseNameWithCapitalKeyword: in a command in capitals, a
// keyword in capitals is a keyword; a name that holds one must be quoted, and
// the error says so.
func TestChronicleParseNameWithCapitalKeyword(t *testing.T) {
	cleanEnv(t)
	tl := filepath.Join(t.TempDir(), "tl.json")
	os.WriteFile(tl, []byte(`{"periods":[{"name":"Dawn AFTER Dusk","tone":"light"}]}`), 0o644)
	_, out, _ := arbiterIn(t, "CREATE PERIOD Noon AFTER Dawn AFTER Dusk TONE dark DESCRIPTION x", "chronicle", "parse", "--phase", "play", "--timeline", tl)
	if !strings.Contains(out, "AFTER is given twice (if one is part of a name, put that name in quotes)") {
		t.Errorf("unquoted:\n%s", out)
	}
	_, out, _ = arbiterIn(t, `CREATE PERIOD Noon AFTER "Dawn AFTER Dusk" TONE dark DESCRIPTION x`, "chronicle", "parse", "--phase", "play", "--timeline", tl)
	if !strings.Contains(out, `"ok": true`) || !strings.Contains(out, `"anchor": "Dawn AFTER Dusk"`) {
		t.Errorf("quoted:\n%s", out)
	}
}
