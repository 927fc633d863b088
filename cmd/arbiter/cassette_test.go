package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// noEndpoint removes every way arbiter could find a model endpoint or key,
// keeping the model's name (it is part of every recorded request).
func noEndpoint(t *testing.T) {
	t.Helper()
	for _, k := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "ARBITER_LLM_BASE_URL", "ARBITER_LLM_API_KEY"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func cassetteLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// exported is the world state (export --format json) and the stored calls,
// failures, repairs and tokens (status --json) of sim.
func exported(t *testing.T, sim string) (state, totals string) {
	t.Helper()
	code, out, errOut := arbiter(t, "export", sim, "--format", "json")
	if code != 0 {
		t.Fatalf("export exit %d: %s", code, errOut)
	}
	state = out
	code, out, errOut = arbiter(t, "status", sim, "--json")
	if code != 0 {
		t.Fatalf("status exit %d: %s", code, errOut)
	}
	var st struct {
		Total map[string]any `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Total["calls"] == nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	delete(st.Total, "latency_ms") // the one thing a replay does not repeat
	b, _ := json.Marshal(st.Total)
	return state, string(b)
}

// TestRunRecordThenReplay: a run of demo-sim recorded to a cassette, reset
// and replayed with no endpoint and no key configured, contacts nothing and
// ends in the same state, with the same calls and tokens stored.
func TestRunRecordThenReplay(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	tape := filepath.Join(t.TempDir(), "demo.jsonl")

	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2", "--record", tape)
	if code != 0 {
		t.Fatalf("recording run: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(cassetteLines(t, tape)); n != 22 || srv.CallCount() != 22 {
		t.Errorf("%d lines recorded for %d calls, want 22 (6 intentions + 5 resolutions, twice)", n, srv.CallCount())
	}
	if info, _ := os.Stat(tape); info.Mode().Perm() != 0o600 {
		t.Errorf("cassette mode %v, want 0600", info.Mode().Perm())
	}
	wantState, wantTotals := exported(t, sim)

	if code, _, errOut := arbiter(t, "reset", sim); code != 0 {
		t.Fatalf("reset: %s", errOut)
	}
	noEndpoint(t)
	code, out, errOut = arbiter(t, "run", sim, "--ticks", "2", "--replay", tape)
	if code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "tick 2 committed: 11 calls, 0 failed") || srv.CallCount() != 22 {
		t.Errorf("replay sent %d requests; output:\n%s", srv.CallCount()-22, out)
	}
	gotState, gotTotals := exported(t, sim)
	if gotState != wantState {
		t.Errorf("replayed state differs from the recorded run's:\n got %s\nwant %s", gotState, wantState)
	}
	if gotTotals != wantTotals {
		t.Errorf("replayed calls and tokens %s, recorded %s", gotTotals, wantTotals)
	}
	if n := len(cassetteLines(t, tape)); n != 22 {
		t.Errorf("the replay changed the cassette: %d lines", n)
	}
}

// TestRunReplayMiss: a tick the cassette does not hold stops the replay
// with exit 3 and an error naming the entity, the tick and the cassette,
// the last committed tick kept; --replay-missing live asks the endpoint for
// exactly the calls the cassette lacks.
func TestRunReplayMiss(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	tape := filepath.Join(t.TempDir(), "tick1.jsonl")
	if code, _, errOut := arbiter(t, "run", sim, "--record", tape); code != 0 {
		t.Fatalf("recording run: %s", errOut)
	}
	arbiter(t, "reset", sim)

	noEndpoint(t)
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2", "--replay", tape)
	if code != ExitModel {
		t.Errorf("replay past the cassette: exit %d, want %d\n%s%s", code, ExitModel, out, errOut)
	}
	for _, want := range []string{"tick 2 not committed", "the cassette failed the call of intention:", "cassette " + tape + " has no recorded answer for intention:", "at tick 2"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if !strings.Contains(out, "tick 1 committed") || strings.Contains(out, "tick 2 committed") {
		t.Errorf("stdout:\n%s", out)
	}
	if _, out, _ := arbiter(t, "status", sim); !strings.Contains(out, "last tick:    1") {
		t.Errorf("status after the miss:\n%s", out)
	}

	arbiter(t, "reset", sim)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	sent := srv.CallCount()
	code, out, errOut = arbiter(t, "run", sim, "--ticks", "2", "--replay", tape, "--replay-missing", "live")
	if code != 0 || !strings.Contains(out, "tick 2 committed: 11 calls, 0 failed") {
		t.Fatalf("replay with live misses: exit %d\n%s%s", code, out, errOut)
	}
	if got := srv.CallCount() - sent; got != 11 {
		t.Errorf("the endpoint was asked %d calls, want tick 2's 11 only", got)
	}
}

// TestRunCassetteUsageErrors: bad flag combinations and cassettes that are
// not cassettes are usage errors naming what is wrong, before anything runs
// or is written.
func TestRunCassetteUsageErrors(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	dir := t.TempDir()
	good := `{"request":{"model":"m","messages":[]},"response":{"choices":[]}}`
	malformed := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(malformed, []byte(good+"\n{\"request\": \n"), 0o600)
	notCassette := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCassette, []byte("my notes\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--record", "a.jsonl", "--replay", "b.jsonl"}, "--record and --replay cannot be used together"},
		{[]string{"--replay-missing", "live"}, "--replay-missing needs --replay FILE"},
		{[]string{"--replay", malformed, "--replay-missing", "maybe"}, `--replay-missing must be error or live, got "maybe"`},
		{[]string{"--replay", filepath.Join(dir, "absent.jsonl")}, "cassette " + filepath.Join(dir, "absent.jsonl") + ": open"},
		{[]string{"--replay", malformed}, "cassette " + malformed + " line 2: not a recorded call"},
		{[]string{"--replay", dir}, "not a regular file"},
		{[]string{"--record", notCassette}, "cassette " + notCassette + " line 1"},
		{[]string{"--record", filepath.Join(dir, "no", "dir.jsonl")}, "no such file or directory"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := arbiter(t, append([]string{"run", sim}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, ExitUsage, tc.want, errOut)
			}
			if exists(filepath.Join(sim, "state.db")) {
				t.Error("state.db created")
			}
		})
	}
	if b, _ := os.ReadFile(notCassette); string(b) != "my notes\n" {
		t.Errorf("a file that is not a cassette was written to: %q", b)
	}
	if exists(filepath.Join(dir, "a.jsonl")) {
		t.Error("a cassette was created by a refused command")
	}
}

// TestRunRecordSecrets: the key, sent in the Authorization header and in
// the base URL's query, and the URL's password never reach the cassette,
// though the server echoes both in every answer.
func TestRunRecordSecrets(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OPENAI_API_KEY", leakKey)
	t.Setenv("OPENAI_BASE_URL", echoAuthServer(t)+"?api-key="+leakKey)
	t.Setenv("ARBITER_LLM_MODEL", "test-model")
	sim := demoCopy(t)
	tape := filepath.Join(t.TempDir(), "run.jsonl")
	code, out, errOut := arbiter(t, "run", sim, "--record", tape)
	if code != ExitModel {
		t.Fatalf("run against a 401: exit %d, want %d\n%s%s", code, ExitModel, out, errOut)
	}
	b, err := os.ReadFile(tape)
	if err != nil {
		t.Fatal(err)
	}
	assertNoLeak(t, "cassette", string(b))
	if n := len(cassetteLines(t, tape)); n != 6 || !strings.Contains(string(b), `invalid header \"Bearer [redacted]\"`) {
		t.Errorf("%d lines, want the 6 intentions' 401s with the echo scrubbed:\n%s", n, b)
	}
}

// TestRunReplayConquestToolTurns: a model seat's turn is a conversation of
// tool calls, each a line of the cassette; replayed with no endpoint, the
// game ends up where the recorded one did.
func TestRunReplayConquestToolTurns(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if msgs := c.Messages(); msgs[len(msgs)-1].Role == "tool" {
			return openaitest.ToolCalls(openaitest.Tool(fmt.Sprintf("submit_%d", c.N), "submit_orders", map[string]any{"orders": []any{}}))
		}
		return openaitest.ToolCalls(openaitest.Tool(fmt.Sprintf("look_%d", c.N), "get_state", map[string]any{}))
	})
	dir := gameCopy(t, "conquest-demo")
	yaml := filepath.Join(dir, "simulation.yaml")
	b, _ := os.ReadFile(yaml)
	os.WriteFile(yaml, []byte(strings.Replace(string(b), "p1: bot", "p1: model", 1)), 0o644)
	tape := filepath.Join(t.TempDir(), "conquest.jsonl")

	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "3", "--record", tape); code != 0 {
		t.Fatalf("recording run: exit %d\n%s%s", code, out, errOut)
	}
	if n := len(cassetteLines(t, tape)); n != 6 || srv.CallCount() != 6 {
		t.Errorf("%d lines for %d calls, want 6: get_state then submit_orders, 3 turns", n, srv.CallCount())
	}
	want, wantTotals := exported(t, dir)
	arbiter(t, "reset", dir)
	noEndpoint(t)
	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "3", "--replay", tape); code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	if got, gotTotals := exported(t, dir); got != want || gotTotals != wantTotals || srv.CallCount() != 6 {
		t.Errorf("replayed game (%d requests sent):\n%s\n%s\nwant\n%s\n%s", srv.CallCount()-6, got, gotTotals, want, wantTotals)
	}
}

// TestChatRecordThenReplay: a chronicle chat recorded and replayed with no
// endpoint shows the same conversation; a message the recording never
// answered is a failed model call, as in a live chat: said, nothing added,
// the chat goes on.
func TestChatRecordThenReplay(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Sequence(openaitest.Content("Hello, co-author."), openaitest.Content("A lighthouse, then.")))
	sim := chronicleCopy(t)
	tape := filepath.Join(t.TempDir(), "chat.jsonl")
	code, recorded, errOut := arbiterIn(t, "Hi\nA lighthouse?\n", "chat", sim, "--record", tape)
	if code != 0 || !strings.Contains(recorded, "A lighthouse, then.") {
		t.Fatalf("recording chat: exit %d\n%s%s", code, recorded, errOut)
	}
	os.Remove(filepath.Join(sim, "state.db"))
	noEndpoint(t)
	code, replayed, errOut := arbiterIn(t, "Hi\nA lighthouse?\n", "chat", sim, "--replay", tape)
	if code != 0 || replayed != recorded {
		t.Errorf("replayed chat: exit %d\n%s%s\nwant\n%s", code, replayed, errOut, recorded)
	}
	os.Remove(filepath.Join(sim, "state.db"))
	code, out, errOut := arbiterIn(t, "Hi\nSomething else\n", "chat", sim, "--replay", tape)
	if code != 0 || !strings.Contains(out, "[2] model:\n  Hello, co-author.") ||
		!strings.Contains(out, "⚠️ Model call failed: cassette "+tape+" has no recorded answer for chronicle:chronicle-demo") || !strings.Contains(out, "Nothing was added") {
		t.Errorf("chat past the cassette: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCassetteFlagsOfChatAndPlay: chat and play check the flags as run does.
func TestCassetteFlagsOfChatAndPlay(t *testing.T) {
	cleanEnv(t)
	for _, args := range [][]string{
		{"chat", chronicleCopy(t), "--record", "a.jsonl", "--replay", "b.jsonl"},
		{"play", gameCopy(t, "conquest-demo"), "--seat", "p1", "--replay-missing", "live"},
	} {
		code, _, errOut := arbiter(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "--re") {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
}
