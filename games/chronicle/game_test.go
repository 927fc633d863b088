package chronicle

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/command"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	openai "github.com/sashabaranov/go-openai"
)

const simYAML = `id: glass
kind: chronicle
title: The Glass Empire
premise: An empire built on singing glass rises, cracks and shatters.
`

// newSim writes a chronicle simulation in a temporary folder.
func newSim(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), []byte(simYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// table is a chronicle being played as arbiter plays it: every move a turn
// of the runner, committed to the simulation's state.db.
type table struct {
	t   *testing.T
	dir string
	g   *Game
	r   *runner.Runner
}

// openDir opens the chronicle simulation in dir as the session does.
func openDir(dir string) (*Game, error) {
	sim, err := worldtest.Load(dir)
	if err != nil {
		return nil, err
	}
	pr, err := prompts.New(dir)
	if err != nil {
		return nil, err
	}
	return Open(sim, pr)
}

// openGame opens the chronicle in dir and its run state, as a new process
// would.
func openGame(t *testing.T, dir string) *table {
	t.Helper()
	g, err := openDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	g.now = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &runner.Runner{Stepper: g, Store: st}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &table{t: t, dir: dir, g: g, r: r}
}

func (tb *table) state() *State { return tb.r.State().(*State) }

func (tb *table) Messages() []Message { return slices.Clone(tb.state().Messages) }

func (tb *table) Timeline() Timeline { return tb.state().Timeline.normalized() }

func (tb *table) Raw(n int) (string, error) { return tb.state().Raw(n) }

func (tb *table) CopyText(n int) (string, error) {
	m, err := tb.state().Message(n)
	return m.Text, err
}

// move plays in and returns the messages from number first on.
func (tb *table) move(ctx context.Context, in any, first func(before int) int) ([]Message, error) {
	n := first(len(tb.state().Messages))
	if _, err := tb.r.Turn(ctx, in); err != nil {
		return nil, err
	}
	return tb.Messages()[n-1:], nil
}

func after(before int) int { return before + 1 }

// Say posts the person's message; it returns the messages added and whether
// the model should answer (the person's commands were not rejected).
func (tb *table) Say(text string) ([]Message, bool, error) {
	added, err := tb.move(context.Background(), Say{Text: text}, after)
	if err != nil {
		return nil, false, err
	}
	return added, !added[0].Rejected, nil
}

func (tb *table) Reply(ctx context.Context, client *llm.Client, p llm.Params) ([]Message, error) {
	tb.g.Client, tb.g.Params = client, p
	return tb.move(ctx, Reply{}, after)
}

func (tb *table) Restart(ctx context.Context, n int, client *llm.Client, p llm.Params) ([]Message, error) {
	tb.g.Client, tb.g.Params = client, p
	return tb.move(ctx, Restart{N: n}, func(int) int { return n })
}

func (tb *table) Reparse(n int) (Message, error) {
	added, err := tb.move(context.Background(), Reparse{N: n}, after)
	if err != nil {
		return Message{}, err
	}
	return added[0], nil
}

func (tb *table) Play() (Message, error) {
	added, err := tb.move(context.Background(), StartPlay{}, after)
	if err != nil {
		return Message{}, err
	}
	return added[0], nil
}

func (tb *table) chatRequest(p llm.Params) llm.ChatRequest {
	tb.g.Params = p
	return tb.g.chatRequest(tb.state())
}

// model starts the fake endpoint with h and returns a client for it.
func model(t *testing.T, h openaitest.Handler) (*openaitest.Server, *llm.Client) {
	t.Helper()
	srv := openaitest.New(t, h)
	cfg := llm.DefaultConfig()
	cfg.BaseURL = srv.URL
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, time.Millisecond
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

var params = llm.Params{Model: "test-model", Temperature: 0.7, MaxTokens: 500}

const bookends = "Let's frame it.\n\nCREATE PERIOD The Singing Dawn FIRST TONE light DESCRIPTION Glass first sings.\nCREATE PERIOD The Shattering LAST TONE dark DESCRIPTION Every pane breaks.\n\nShall we do the palette?"

func texts(msgs []Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, string(m.Role)+": "+m.Text)
	}
	return out
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	write := func(t *testing.T, files map[string]string) string {
		dir := t.TempDir()
		for name, body := range files {
			path := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
		is    error
	}{
		{"no folder", nil, "cannot open simulation folder", nil},
		{"not a chronicle", map[string]string{"simulation.yaml": "id: x\nkind: conquest\ntitle: X\n"},
			`kind "conquest": not a chronicle simulation (set kind: chronicle)`, ErrNotChronicle},
		{"no premise", map[string]string{"simulation.yaml": "id: x\nkind: chronicle\ntitle: X\n"},
			"missing premise: a chronicle's premise is the big picture of its history", nil},
		{"prompt with a missing key", map[string]string{"simulation.yaml": simYAML, "prompts/" + PromptFile: "{{.Nope}}"},
			"can't evaluate field Nope", nil},
		{"prompt that does not parse", map[string]string{"simulation.yaml": simYAML, "prompts/" + PromptFile: "{{"},
			"prompt ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "missing")
			if tc.files != nil {
				dir = write(t, tc.files)
			}
			_, err := openDir(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Open = %v, want it to contain %q", err, tc.want)
			}
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("Open = %v, not %v", err, tc.is)
			}
		})
	}
}

func TestOpenFresh(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	tl := g.Timeline()
	if g.g.ID != "glass" || g.g.Title != "The Glass Empire" || !strings.HasPrefix(g.g.BigPicture, "An empire built") {
		t.Errorf("game = %q %q %q", g.g.ID, g.g.Title, g.g.BigPicture)
	}
	if tl.Stage != Setup || len(tl.Periods) != 0 || tl.BigPicture != g.g.BigPicture || len(g.Messages()) != 0 {
		t.Errorf("fresh timeline %+v, %d messages", tl, len(g.Messages()))
	}
	if g.r.LastTick() != 0 {
		t.Errorf("a fresh chronicle is at turn %d", g.r.LastTick())
	}
}

func TestPromptOverride(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prompts", PromptFile), []byte("Custom: {{.Title}} / {{.BigPicture}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	g := openGame(t, dir)
	req := g.chatRequest(params)
	if got := req.Messages[0].Content; got != "Custom: The Glass Empire / An empire built on singing glass rises, cracks and shatters." {
		t.Errorf("system prompt = %q", got)
	}
}

// TestConversation plays setup with the model: its bookends apply, its
// malformed palette is rejected with the seed's message, the model sees
// that error on its next turn, and everything survives reopening.
func TestConversation(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	srv, client := model(t, openaitest.Sequence(
		openaitest.Content(bookends),
		openaitest.Content("CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel"),
		openaitest.Content("Sorry!\n\nCREATE PALETTE\n- YES: Magic exists\n- NO: Space travel"),
	))
	g := openGame(t, dir)
	ctx := t.Context()

	added, ask, err := g.Say("Let's make a history of glass.")
	if err != nil || !ask || len(added) != 1 {
		t.Fatalf("Say = %v, %v, %v", added, ask, err)
	}
	added, err = g.Reply(ctx, client, params)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"model: " + bookends,
		`system: ✅ Applied: created light period "The Singing Dawn" as the FIRST bookend; created dark period "The Shattering" as the LAST bookend.`,
	}
	if !reflect.DeepEqual(texts(added), want) {
		t.Errorf("added = %q\nwant %q", texts(added), want)
	}
	if _, _, err := g.Say("Now the palette, please."); err != nil {
		t.Fatal(err)
	}
	added, err = g.Reply(ctx, client, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || !added[0].Rejected || added[1].Text != ErrorPrefix+`Invalid palette item type "MAYBE" (must be YES or NO). No palette items were added.` || added[1].Source != 5 {
		t.Errorf("rejected palette: %+v", added)
	}
	if tl := g.Timeline(); len(tl.Palette.Yes)+len(tl.Palette.No) != 0 {
		t.Errorf("palette applied in part: %+v", tl.Palette)
	}
	if _, _, err := g.Say("Try again without MAYBE."); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reply(ctx, client, params); err != nil {
		t.Fatal(err)
	}

	checkHistorySent(t, srv.Calls()[2].Messages())
	checkReopened(t, dir, g)
}

// checkHistorySent checks msgs, the third request of TestConversation: it
// carries the whole history, the malformed message, the system's error and
// the person's correction.
func checkHistorySent(t *testing.T, msgs []openai.ChatCompletionMessage) {
	t.Helper()
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, " ") != "system user assistant user assistant user" {
		t.Fatalf("roles = %v", roles)
	}
	if !strings.Contains(msgs[0].Content, "The big picture: An empire built on singing glass") {
		t.Errorf("system prompt lacks the big picture: %q", msgs[0].Content)
	}
	last := msgs[5].Content
	for _, s := range []string{
		"System: ⚠️ Command parsing error: Invalid palette item type \"MAYBE\" (must be YES or NO). No palette items were added.",
		"Try again without MAYBE.",
		"System: the current timeline.\nPhase: setup",
		"1. The Singing Dawn (light, FIRST bookend)",
	} {
		if !strings.Contains(last, s) {
			t.Errorf("last user turn lacks %q:\n%s", s, last)
		}
	}
	if msgs[4].Content != "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel" {
		t.Errorf("the model's malformed message is not in its history as written: %q", msgs[4].Content)
	}
}

// checkReopened checks that the game of dir, opened again after g played
// TestConversation, has the same conversation and timeline, exports a
// timeline that tools (chronicle parse --timeline) read back, and has its
// six turns committed.
func checkReopened(t *testing.T, dir string, g *table) {
	t.Helper()
	again := openGame(t, dir)
	if !reflect.DeepEqual(texts(again.Messages()), texts(g.Messages())) || !reflect.DeepEqual(again.Timeline(), g.Timeline()) {
		t.Errorf("reopened game differs:\n%+v\n%+v", again.Timeline(), g.Timeline())
	}
	tl := again.Timeline()
	if len(tl.Periods) != 2 || !reflect.DeepEqual(tl.Palette, Palette{Yes: []string{"Magic exists"}, No: []string{"Space travel"}}) {
		t.Errorf("timeline = %+v", tl)
	}
	v, err := again.g.Export(t.Context(), nil, again.state())
	if err != nil {
		t.Fatal(err)
	}
	exported, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	fromExport, err := ReadTimeline(bytes.NewReader(exported))
	if err != nil || !reflect.DeepEqual(fromExport, tl) {
		t.Errorf("ReadTimeline(export) = %+v, %v", fromExport, err)
	}
	// One turn each: 3 person messages, 3 model replies.
	if again.r.LastTick() != 6 {
		t.Errorf("%d turns committed, want 6", again.r.LastTick())
	}
}

func TestSayPersonCommands(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	added, ask, err := g.Say("I'll start: CREATE PERIOD won't count mid-line.\nCREATE PERIOD Dawn FIRST TONE light DESCRIPTION It begins.")
	if err != nil || !ask || len(added) != 2 || len(added[0].Applied) != 1 {
		t.Fatalf("Say = %+v, %v, %v", added, ask, err)
	}
	added, ask, err = g.Say("CREATE PERIOD Dusk LAST TONE grim DESCRIPTION It ends.")
	if err != nil || ask || len(added) != 2 || !added[0].Rejected || added[1].Text != ErrorPrefix+`Invalid TONE "grim" (must be light or dark)` {
		t.Errorf("rejected Say = %+v, ask %v, %v", added, ask, err)
	}
	if n := len(g.Timeline().Periods); n != 1 {
		t.Errorf("%d periods", n)
	}
}

func TestReplyModelFailureChangesNothing(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	_, client := model(t, openaitest.Always(openaitest.Status(500, "server_error", "", "boom")))
	g := openGame(t, dir)
	if _, _, err := g.Say("Hello"); err != nil {
		t.Fatal(err)
	}
	_, err := g.Reply(t.Context(), client, params)
	if !errors.Is(err, llm.ErrServer) || !errors.As(err, new(*runner.QuorumError)) {
		t.Errorf("Reply = %v, want a quorum failure caused by the server error", err)
	}
	again := openGame(t, g.dir)
	if len(g.Messages()) != 1 || again.r.LastTick() != 1 || len(again.Messages()) != 1 {
		t.Errorf("a failed call changed the game: %d messages, turn %d", len(g.Messages()), again.r.LastTick())
	}
}

func TestPlay(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	g := openGame(t, dir)
	if _, err := g.Play(); !errors.Is(err, ErrStage) || !strings.Contains(err.Error(), "setup is not finished: the FIRST bookend is missing") {
		t.Errorf("Play with no bookends = %v", err)
	}
	mustSay(t, g, "CREATE PERIOD Dawn FIRST TONE light DESCRIPTION a")
	if _, err := g.Play(); err == nil || !strings.Contains(err.Error(), "the LAST bookend is missing") {
		t.Errorf("Play with one bookend = %v", err)
	}
	mustSay(t, g, "CREATE PERIOD Dusk LAST TONE dark DESCRIPTION b")
	m, err := g.Play()
	if err != nil || m.Stage != Play || g.Timeline().Stage != Play {
		t.Fatalf("Play = %+v, %v", m, err)
	}
	if _, err := g.Play(); !errors.Is(err, ErrStage) {
		t.Errorf("second Play = %v", err)
	}
	mustSay(t, g, "CREATE PERIOD Noon AFTER Dawn TONE light DESCRIPTION c")
	mustSay(t, g, "CREATE EVENT Bells IN Noon TONE light DESCRIPTION d")
	again := openGame(t, dir)
	if tl := again.Timeline(); tl.Stage != Play || strings.Join(names(tl.Periods), ",") != "Dawn,Noon,Dusk" || len(tl.Periods[1].Events) != 1 {
		t.Errorf("reopened: %+v", tl)
	}
}

func mustSay(t *testing.T, g *table, text string) {
	t.Helper()
	added, _, err := g.Say(text)
	if err != nil || added[0].Rejected {
		t.Fatalf("Say(%q): %v %+v", text, err, added)
	}
}

// conversation builds: 1 person, 2 model (bookends, applied), 3 system
// (applied), 4 system (play), 5 person, 6 model (an event in a period that
// does not exist yet: rejected), 7 system (the error).
func conversation(t *testing.T, extra ...openaitest.Reply) (*table, *openaitest.Server, *llm.Client) {
	t.Helper()
	replies := append([]openaitest.Reply{
		openaitest.Content(bookends),
		openaitest.Content("CREATE EVENT The First Crack IN The Long Noon TONE dark DESCRIPTION A hairline flaw."),
	}, extra...)
	srv, client := model(t, openaitest.Sequence(replies...))
	g := openGame(t, newSim(t))
	mustSay(t, g, "Begin.")
	if _, err := g.Reply(t.Context(), client, params); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Play(); err != nil {
		t.Fatal(err)
	}
	mustSay(t, g, "An event, please.")
	if _, err := g.Reply(t.Context(), client, params); err != nil {
		t.Fatal(err)
	}
	return g, srv, client
}

func TestRaw(t *testing.T) {
	t.Parallel()
	g, _, _ := conversation(t)
	raw, err := g.Raw(2)
	if err != nil || raw != bookends {
		t.Errorf("Raw(2) = %q, %v", raw, err)
	}
	for n, want := range map[int]error{1: ErrNotModel, 3: ErrNotModel, 0: ErrNoMessage, 99: ErrNoMessage} {
		if _, err := g.Raw(n); !errors.Is(err, want) {
			t.Errorf("Raw(%d) = %v, want %v", n, err, want)
		}
	}
	if _, err := openGame(t, newSim(t)).Raw(1); err == nil || !strings.Contains(err.Error(), "the conversation is empty") {
		t.Errorf("Raw on empty conversation = %v", err)
	}
}

func TestCopyText(t *testing.T) {
	t.Parallel()
	g, _, _ := conversation(t)
	if text, err := g.CopyText(1); err != nil || text != "Begin." {
		t.Errorf("CopyText(1) = %q, %v", text, err)
	}
	if _, err := g.CopyText(42); !errors.Is(err, ErrNoMessage) {
		t.Errorf("CopyText(42) = %v", err)
	}
}

func TestReparse(t *testing.T) {
	t.Parallel()
	g, _, _ := conversation(t)
	msgs := g.Messages()
	if !msgs[5].Rejected || msgs[6].Text != ErrorPrefix+`Parent period "The Long Noon" not found` {
		t.Fatalf("setup of the test: %q", texts(msgs))
	}
	// Still invalid: the error joins the conversation again; nothing applies.
	note, err := g.Reparse(6)
	if err != nil || note.Text != ErrorPrefix+`Parent period "The Long Noon" not found` || note.Source != 6 {
		t.Errorf("Reparse(6) = %+v, %v", note, err)
	}
	// The person creates the period by hand; now the message applies.
	mustSay(t, g, "CREATE PERIOD The Long Noon AFTER The Singing Dawn TONE light DESCRIPTION Glass everywhere.")
	note, err = g.Reparse(6)
	if err != nil || len(note.Applied) != 1 || note.Text != `✅ Applied: created dark event "The First Crack" in period "The Long Noon". (reparse of message 6)` {
		t.Errorf("Reparse(6) = %+v, %v", note, err)
	}
	if tl := g.Timeline(); len(tl.Periods[1].Events) != 1 {
		t.Errorf("event not applied: %+v", tl.Periods[1])
	}
	for n, want := range map[int]error{6: ErrApplied, 2: ErrApplied, 1: ErrNotModel, 50: ErrNoMessage} {
		if _, err := g.Reparse(n); !errors.Is(err, want) {
			t.Errorf("Reparse(%d) = %v, want %v", n, err, want)
		}
	}
	// The reparsed commands replay from the file, in the order applied.
	again := openGame(t, g.dir)
	if !reflect.DeepEqual(again.Timeline(), g.Timeline()) {
		t.Errorf("reopened timeline differs")
	}
}

func TestReparseWithoutCommands(t *testing.T) {
	t.Parallel()
	_, client := model(t, openaitest.Always(openaitest.Content("Just prose.")))
	g := openGame(t, newSim(t))
	mustSay(t, g, "Hi")
	if _, err := g.Reply(t.Context(), client, params); err != nil {
		t.Fatal(err)
	}
	if _, err := g.Reparse(2); !errors.Is(err, ErrNoCommands) {
		t.Errorf("Reparse = %v", err)
	}
}

func TestRestart(t *testing.T) {
	t.Parallel()
	better := "CREATE PERIOD The Clear Morning FIRST TONE light DESCRIPTION x\nCREATE PERIOD The Dark Evening LAST TONE dark DESCRIPTION y"
	g, srv, client := conversation(t, openaitest.Content(better))
	// Restart from message 2: the bookends it made, the phase change and
	// everything after go; the model answers again from message 1.
	added, err := g.Restart(t.Context(), 2, client, params)
	if err != nil {
		t.Fatal(err)
	}
	if len(added) != 2 || added[0].Text != better {
		t.Errorf("added = %q", texts(added))
	}
	msgs := g.Messages()
	if len(msgs) != 3 || msgs[0].Text != "Begin." {
		t.Errorf("messages = %q", texts(msgs))
	}
	tl := g.Timeline()
	if tl.Stage != Setup || strings.Join(names(tl.Periods), ",") != "The Clear Morning,The Dark Evening" {
		t.Errorf("timeline = %+v", tl)
	}
	last := srv.Calls()[len(srv.Calls())-1].Messages()
	if len(last) != 2 || !strings.HasPrefix(last[1].Content, "Begin.\n\nSystem: the current timeline.") || strings.Contains(last[1].Content, "Singing Dawn") {
		t.Errorf("restart request = %+v", last[1:])
	}
	for n, want := range map[int]error{1: ErrNotModel, 9: ErrNoMessage} {
		if _, err := g.Restart(t.Context(), n, client, params); !errors.Is(err, want) {
			t.Errorf("Restart(%d) = %v, want %v", n, err, want)
		}
	}
}

func TestRestartModelFailureChangesNothing(t *testing.T) {
	t.Parallel()
	g, _, client := conversation(t, openaitest.Status(401, "invalid_request_error", "invalid_api_key", "bad key"))
	before := texts(g.Messages())
	tl := g.Timeline()
	if _, err := g.Restart(t.Context(), 2, client, params); !errors.Is(err, llm.ErrAuth) {
		t.Errorf("Restart = %v", err)
	}
	if !reflect.DeepEqual(texts(g.Messages()), before) || !reflect.DeepEqual(g.Timeline(), tl) {
		t.Error("a failed restart changed the game")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.Restart(ctx, 6, client, params); !errors.Is(err, runner.ErrInterrupted) || len(g.Messages()) != len(before) {
		t.Errorf("canceled Restart = %v", err)
	}
}

// TestImportSavedGame: a chronicle.json of the earlier version becomes the
// first turn, and the game goes on from it; a broken one is refused and
// leaves the chronicle as it was.
func TestImportSavedGame(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	saved := `{"version":1,"phase":"setup","messages":[
		{"role":"person","text":"Begin.","time":"2026-01-02T03:04:05Z"},
		{"role":"model","text":"CREATE PERIOD Dawn FIRST TONE light DESCRIPTION a","time":"2026-01-02T03:04:05Z",
		 "applied":[{"type":"period","name":"Dawn","tone":"light","description":"a","position":"first","line":1}]}]}`
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := ReadSaved(path)
	if err != nil {
		t.Fatal(err)
	}
	g := openGame(t, dir)
	if _, err := g.r.Turn(t.Context(), Import{State: st}); err != nil {
		t.Fatal(err)
	}
	if len(g.Messages()) != 2 || len(g.Timeline().Periods) != 1 || g.r.LastTick() != 1 {
		t.Fatalf("imported: %q, %+v", texts(g.Messages()), g.Timeline())
	}
	mustSay(t, g, "CREATE PERIOD Dusk LAST TONE dark DESCRIPTION b")
	again := openGame(t, dir)
	if len(again.Timeline().Periods) != 2 || len(again.Messages()) != 4 {
		t.Errorf("reopened after import: %+v", again.Timeline())
	}
	if _, err := again.r.Turn(t.Context(), Import{State: st}); !errors.Is(err, ErrImport) || !errors.Is(err, runner.ErrRefused) {
		t.Errorf("second import = %v, want ErrImport", err)
	}
}

func TestReadSavedErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, file, want string }{
		{"corrupt file", "{", "chronicle.json: unexpected EOF"},
		{"unknown field", `{"version":1,"mesages":[]}`, `unknown field "mesages"`},
		{"other version", `{"version":2}`, "chronicle.json: version 2 is not 1, the version this arbiter reads"},
		{"record that does not replay", `{"version":1,"messages":[
			{"role":"model","text":"x","applied":[{"type":"event","name":"E","tone":"dark","description":"d","period":"Nowhere"}]}]}`,
			"message 1: recorded command no longer applies"},
		{"bad phase record", `{"version":1,"messages":[{"role":"system","text":"x","phase":"end"}]}`,
			`message 1: phase "end" must be setup or play`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := newSim(t)
			path := filepath.Join(dir, FileName)
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			st, err := ReadSaved(path)
			if err == nil {
				g := openGame(t, dir)
				_, err = g.r.Turn(t.Context(), Import{State: st})
				if g.r.LastTick() != 0 {
					t.Error("a saved game that does not replay was imported")
				}
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("import = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestErrorsAreCommandErrors(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	added, _, _ := g.Say("CREATE PERIOD X FIRST")
	if !strings.HasPrefix(added[1].Text, ErrorPrefix) {
		t.Errorf("note = %q", added[1].Text)
	}
	_, _, err := Interpret(Timeline{}, "CREATE PERIOD X FIRST")
	if e, ok := errors.AsType[*command.Error](err); !ok || e.Line != 1 {
		t.Errorf("err = %#v", err)
	}
}

// TestWindowLeavesOutEarlyMessages: with a window, only the latest messages
// go to the model, after a note saying so, and the timeline still closes the
// request; without one, every message goes.
func TestWindowLeavesOutEarlyMessages(t *testing.T) {
	t.Parallel()
	g := openGame(t, newSim(t))
	for i := range 12 {
		if _, _, err := g.Say(fmt.Sprintf("message %d", i)); err != nil {
			t.Fatal(err)
		}
	}
	all := g.chatRequest(params)
	if !strings.Contains(all.Messages[1].Content, "message 0") {
		t.Fatalf("without a window the first message is not sent: %q", all.Messages[1].Content)
	}
	g.g.Window = 3
	req := g.chatRequest(params)
	joined := ""
	for _, m := range req.Messages {
		joined += m.Content + "\n"
	}
	if strings.Contains(joined, "message 8\n") || !strings.Contains(joined, "message 9") || !strings.Contains(joined, "message 11") {
		t.Errorf("window 3 sent the wrong messages:\n%s", joined)
	}
	if !strings.Contains(joined, "the 9 earliest messages of this conversation are left out") {
		t.Errorf("no note about the left-out messages:\n%s", joined)
	}
	if last := req.Messages[len(req.Messages)-1].Content; !strings.Contains(last, "the current timeline") {
		t.Errorf("the request does not end with the timeline: %q", last)
	}
}

// Seed 001 sends the whole conversation; when it outgrows the model's
// context, the error says so and how to send less.
func TestReplyTooLongForTheContextSaysWhatToDo(t *testing.T) {
	t.Parallel()
	dir := newSim(t)
	_, client := model(t, openaitest.Always(openaitest.Status(400, "invalid_request_error", "context_length_exceeded",
		"This model's maximum context length is 8192 tokens.")))
	g := openGame(t, dir)
	if _, _, err := g.Say("Hello"); err != nil {
		t.Fatal(err)
	}
	_, err := g.Reply(t.Context(), client, params)
	if !errors.As(err, new(*runner.QuorumError)) || !strings.Contains(err.Error(), "chronicle.window") {
		t.Errorf("Reply = %v, want a quorum failure naming chronicle.window", err)
	}
}
