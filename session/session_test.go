package session_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

func copyDir(t *testing.T, src string) string { return worldtest.Copy(t, src) }

func settings(t *testing.T, h openaitest.Handler) session.Settings {
	srv := openaitest.New(t, h)
	return session.Settings{Depth: 3, Model: "test-model", Override: session.PhaseOverride{MaxTokens: 500}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.MaxAttempts, cfg.BackoffBase = srv.URL, 1, time.Millisecond
		return cfg, nil
	}}
}

func exists(path string) bool { _, err := os.Stat(path); return err == nil }

// TestNarrativeSession: a run commits ticks; a read-only session sees the
// state of any committed tick, status and the requests a call sends, with
// the entity's past exchanges as of that tick.
func TestNarrativeSession(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	ctx := context.Background()
	s, err := session.Open(ctx, dir, settings(t, openaitest.FromSchema(nil)), session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := s.Run(ctx, 2); err != nil || rep.LastTick != 2 {
		t.Fatalf("Run = %+v, %v", rep, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	r, err := session.Open(ctx, dir, session.Settings{Depth: 3}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.LastTick() != 2 {
		t.Fatalf("LastTick = %d", r.LastTick())
	}
	st, err := r.Status(ctx)
	if err != nil || st.LastTick != 2 || st.Total.Calls != 22 || st.KindStatus["world"] != "6 characters, 5 locations" {
		t.Errorf("Status = %+v, %v", st, err)
	}
	for _, tc := range []struct {
		tick    int
		latest  bool
		history int // past exchanges sent
	}{{0, false, 0}, {1, false, 1}, {0, true, 2}} {
		req, err := r.Request(ctx, "resolution", "lock", tc.tick, tc.latest)
		if err != nil {
			t.Fatal(err)
		}
		if got := (len(req.Messages) - 2) / 2; got != tc.history || req.SchemaName != "MasterOutput" || len(req.Schema) == 0 {
			t.Errorf("Request at tick %d (latest %v): %d past exchanges, schema %q; want %d", tc.tick, tc.latest, got, req.SchemaName, tc.history)
		}
	}
	var ie *session.InputError
	if _, err := r.StateAt(ctx, 3, false); !errors.As(err, &ie) || !strings.Contains(err.Error(), "committed ticks: 0..2") {
		t.Errorf("StateAt(3) = %v", err)
	}
	if _, err := r.Request(ctx, "resolution", "moon", 0, true); !errors.As(err, &ie) || !strings.Contains(err.Error(), `entity "moon": no such location`) {
		t.Errorf("Request of an unknown location = %v", err)
	}
	if _, err := r.Run(ctx, 1); err == nil {
		t.Error("a read-only session ran a tick")
	}
}

// TestOpenLeavesNothing: a read-only open creates no state.db; a run that
// commits nothing removes the one it created; a second writer is refused.
func TestOpenLeavesNothing(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	ctx := context.Background()
	r, err := session.Open(ctx, dir, session.Settings{}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	if exists(session.StatePath(dir)) {
		t.Fatal("a read-only open created state.db")
	}
	s, err := session.Open(ctx, dir, settings(t, openaitest.Always(openaitest.Status(500, "server_error", "", "down"))), session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.Open(ctx, dir, session.Settings{}, session.ReadWrite); !errors.Is(err, session.ErrInUse) {
		t.Errorf("second writer: %v, want ErrInUse", err)
	}
	if _, err := s.Run(ctx, 1); !errors.As(err, new(*runner.QuorumError)) {
		t.Errorf("Run = %v, want a quorum failure", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if exists(session.StatePath(dir)) {
		t.Error("a run that committed nothing left state.db behind")
	}
}

// TestKindsAndInputErrors: a command refuses a kind it does not play, bad
// files are *InputError, and the endpoint is asked for only once the files
// check out.
func TestKindsAndInputErrors(t *testing.T) {
	ctx := context.Background()
	chron := copyDir(t, "../simulations/chronicle-demo")
	set := session.Settings{Plays: []string{"narrative"}}
	var ie *session.InputError
	if _, err := session.Open(ctx, chron, set, session.ReadWrite); !errors.As(err, &ie) || !strings.Contains(err.Error(), "arbiter chat") {
		t.Errorf("run on a chronicle: %v", err)
	}
	asked := false
	set = session.Settings{LLM: func() (session.ClientConfig, error) {
		asked = true
		return session.ClientConfig{}, errors.New("no endpoint")
	}}
	if _, err := session.Open(ctx, filepath.Join(chron, "missing"), set, session.ReadWrite); !errors.As(err, &ie) || asked {
		t.Errorf("missing folder: %v (endpoint asked: %v)", err, asked)
	}
	if _, err := session.Open(ctx, chron, set, session.ReadWrite); err == nil || err.Error() != "no endpoint" {
		t.Errorf("no endpoint: %v", err)
	}
	if _, err := session.Reset(filepath.Join(chron, "missing")); !errors.As(err, &ie) {
		t.Errorf("Reset of a missing folder: %v", err)
	}
}

const saved = `{"version":1,"phase":"setup","messages":[
	{"role":"person","text":"Begin.","time":"2026-01-02T03:04:05Z"},
	{"role":"model","text":"CREATE PERIOD Dawn FIRST TONE light DESCRIPTION a","time":"2026-01-02T03:04:05Z",
	 "applied":[{"type":"period","name":"Dawn","tone":"light","description":"a","position":"first","line":1}]}]}`

// TestChronicleJSONImportedOnce: read-only commands show a chronicle.json of
// the earlier version without importing it; the first writer imports it as
// turn 1 and renames the file; reset deletes the run state.
func TestChronicleJSONImportedOnce(t *testing.T) {
	dir := copyDir(t, "../simulations/chronicle-demo")
	path := filepath.Join(dir, chronicle.FileName)
	if err := os.WriteFile(path, []byte(saved), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := session.Open(ctx, dir, session.Settings{}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	if st := r.State().(*chronicle.State); len(st.Messages) != 2 || len(st.Timeline.Periods) != 1 {
		t.Errorf("read-only view of chronicle.json: %+v", st)
	}
	r.Close()
	if exists(session.StatePath(dir)) {
		t.Fatal("a read-only open imported the file")
	}
	if problems := session.Validate(dir, session.Settings{}).Problems; len(problems) != 0 {
		t.Errorf("Validate = %v", problems)
	}

	s, err := session.Open(ctx, dir, settings(t, nil), session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if s.LastTick() != 1 || len(s.State().(*chronicle.State).Messages) != 2 {
		t.Errorf("after import: turn %d", s.LastTick())
	}
	if _, err := s.Turn(ctx, chronicle.Say{Text: "CREATE PERIOD Dusk LAST TONE dark DESCRIPTION b"}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if exists(path) || !exists(path+session.ImportedSuffix) {
		t.Error("chronicle.json was not renamed after the import")
	}
	again, err := session.Open(ctx, dir, settings(t, nil), session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	if again.LastTick() != 2 || len(again.State().(*chronicle.State).Timeline.Periods) != 2 {
		t.Errorf("reopened: turn %d", again.LastTick())
	}
	again.Close()
	deleted, err := session.Reset(dir)
	if err != nil || len(deleted) != 1 || exists(session.StatePath(dir)) {
		t.Errorf("Reset = %v, %v", deleted, err)
	}
}

// TestBrokenChronicleJSON: a saved game that does not read is named by
// validate and refused by open, and nothing is written.
func TestBrokenChronicleJSON(t *testing.T) {
	dir := copyDir(t, "../simulations/chronicle-demo")
	path := filepath.Join(dir, chronicle.FileName)
	if err := os.WriteFile(path, []byte(`{"version": 1, "periods": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	if problems := session.Validate(dir, session.Settings{}).Problems; len(problems) != 1 || !strings.Contains(problems[0].Error(), "chronicle.json: unexpected EOF") {
		t.Errorf("Validate = %v", problems)
	}
	var ie *session.InputError
	for _, access := range []session.Access{session.ReadOnly, session.ReadWrite} {
		if _, err := session.Open(context.Background(), dir, settings(t, nil), access); !errors.As(err, &ie) {
			t.Errorf("Open(%v) = %v, want an InputError", access, err)
		}
	}
	if exists(session.StatePath(dir)) {
		t.Error("a refused open left state.db")
	}
}

// TestSummary: validate's summary of a simulation that checks out is what
// its kind says of it (a narrative counts its characters and locations),
// or else the kind's name.
func TestSummary(t *testing.T) {
	for dir, want := range map[string]string{
		"../simulations/demo-sim":      "6 characters, 5 locations",
		"../simulations/conquest-demo": "conquest",
	} {
		v := session.Validate(copyDir(t, dir), session.Settings{})
		sim, problems := v.Sim, v.Problems
		if len(problems) != 0 {
			t.Fatalf("%s: %v", dir, problems)
		}
		if got := strings.Join(session.Summary(sim), ", "); got != want {
			t.Errorf("%s: summary %q, want %q", dir, got, want)
		}
	}
}

// TestBatchAndRunFilesAreTheKinds: whether a kind sends Batch API jobs
// (session.Batcher) and which files hold a game an earlier version saved
// (session.Importer's RunFiles) are the kind's to say: a session of a kind
// without Batcher refuses --batch naming the kinds that batch, and Reset
// deletes a saved game's file beside a kind that imports one, not beside
// another kind.
func TestBatchAndRunFilesAreTheKinds(t *testing.T) {
	conquest := copyDir(t, "../simulations/conquest-demo")
	_, err := session.Load(conquest, session.Settings{Batch: true})
	var ie *session.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "a conquest simulation makes no calls through the Batch API (batch mode is for the calls of narrative (intention, resolution))") {
		t.Errorf("Load --batch of a conquest = %v", err)
	}
	for _, tc := range []struct {
		dir     string
		deleted bool
	}{{copyDir(t, "../simulations/chronicle-demo"), true}, {conquest, false}} {
		path := filepath.Join(tc.dir, chronicle.FileName)
		if err := os.WriteFile(path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		deleted, err := session.Reset(tc.dir)
		if err != nil || exists(path) == tc.deleted || (len(deleted) == 1) != tc.deleted {
			t.Errorf("Reset(%s) = %v, %v; %s kept: %v", tc.dir, deleted, err, path, exists(path))
		}
	}
}

// TestRegistryListsWhatTheKindsSay: the arena's built-in demos, the phases
// prompts render takes and the kinds' help come from the registered kinds,
// in kind order (the default kind first, then by name).
func TestRegistryListsWhatTheKindsSay(t *testing.T) {
	if got := session.Demos(); !slices.Equal(got, []string{"conquest", "duel"}) {
		t.Errorf("Demos = %v, want the arena kinds with a built-in demo", got)
	}
	if got := session.AllPhases(); !slices.Equal(got, []string{"intention", "resolution", "chat", "orders", "build", "charges"}) {
		t.Errorf("AllPhases = %v", got)
	}
	play := session.Help("play")
	if c, d := strings.Index(play, "\nconquest:\n  "), strings.Index(play, "\nduel:\n  "); c < 0 || d < c || strings.Contains(play, "narrative:") {
		t.Errorf("Help(play) is not conquest's then the duel's lines alone:\n%s", play)
	}
	if got := session.Help("no such command"); got != "" {
		t.Errorf("Help of a command no kind has lines for = %q", got)
	}
}
