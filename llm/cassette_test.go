package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

var update = flag.Bool("update", false, "record testdata/cassette.jsonl again from the in-process server")

// outcome is what a caller sees of a call, latency aside.
func outcome(res Result) string {
	var recs []string
	for _, r := range res.Recoveries {
		recs = append(recs, fmt.Sprintf("%s %s %v", r.Strategy, r.Err.Kind, r.Success))
	}
	errText := ""
	if res.Err != nil {
		errText = fmt.Sprintf("%s: %v", ErrorKindOf(res.Err), res.Err)
	}
	return fmt.Sprintf("output=%s raw=%q attempts=%d repairs=%d usage=%+v err=%q recoveries=%v messages=%d",
		res.Output, res.Raw, res.Attempts, res.Repairs, res.Usage, errText, recs, len(res.Messages))
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func recordClient(t *testing.T, url, path string) (*Client, *Cassette) {
	t.Helper()
	tape, err := RecordCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestClient(t, url, func(cfg *Config) { cfg.Cassette = tape })
	return c, tape
}

// replayClient answers from path with no endpoint configured at all (no
// base URL, no key), unless live.
func replayClient(t *testing.T, path string, live string) (*Client, *Cassette) {
	t.Helper()
	tape, err := ReplayCassette(path, live != "")
	if err != nil {
		t.Fatal(err)
	}
	c, _ := newTestClient(t, live, func(cfg *Config) { cfg.Cassette = tape })
	return c, tape
}

// TestCassetteRecordThenReplay: every chat completion of a client is one
// line, written as the call ends; replayed with no endpoint, each call ends
// as it did: answers, retries, repairs, final errors, usage, and identical
// requests answered in the order they were asked.
func TestCassetteRecordThenReplay(t *testing.T) {
	t.Parallel()
	answer := func(name string) openaitest.Reply {
		return openaitest.JSON(map[string]any{"name": name, "location": "garden"})
	}
	srv := openaitest.New(t, openaitest.Match(openaitest.Always(answer("other")),
		openaitest.Route{If: openaitest.UserContains("flaky"), Then: openaitest.Sequence(openaitest.Status(500, "server_error", "", "boom"), answer("after a retry"))},
		openaitest.Route{If: openaitest.UserContains("twice"), Then: openaitest.Sequence(answer("first"), answer("second"))},
		openaitest.Route{If: openaitest.UserContains("repair"), Then: openaitest.Sequence(openaitest.Content("not json"), answer("repaired"))},
		openaitest.Route{If: openaitest.UserContains("refused"), Then: openaitest.Always(openaitest.Status(400, "invalid_request_error", "", "no"))},
		openaitest.Route{If: func(c *openaitest.Call) bool { return c.SchemaName() == "" }, Then: openaitest.Always(openaitest.Content("plain words"))},
	))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)

	type call struct {
		user  string
		lines int // lines in the file once the call ended
	}
	calls := []call{{"flaky", 1}, {"twice", 2}, {"twice", 3}, {"repair", 5}, {"refused", 6}}
	var recorded []string
	for _, cl := range calls {
		res := rec.Complete(t.Context(), testRequest(cl.user))
		recorded = append(recorded, outcome(res))
		if got := len(lines(t, path)); got != cl.lines {
			t.Errorf("after %q: %d lines in the cassette, want %d (one per chat completion, written as it ends)", cl.user, got, cl.lines)
		}
	}
	chat := ChatRequest{EntityKey: "chronicle:x", Params: Params{Model: "test-model"}, Messages: []Message{{Role: "user", Content: "hello"}}}
	recChat := rec.Chat(t.Context(), chat)
	if err := tape.Close(); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(path); err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("cassette mode %v (%v), want 0600", info.Mode().Perm(), err)
	}
	for _, want := range []string{`name\":\"first`, `name\":\"second`, `after a retry`, `"retries":[{"kind":"server","status":500`, `"entity":"intention:ada","phase":"intention","tick":1`} {
		if b, _ := os.ReadFile(path); !bytes.Contains(b, []byte(want)) {
			t.Errorf("cassette lacks %s", want)
		}
	}
	if !strings.Contains(recorded[0], "recoveries=[retry server true]") || !strings.Contains(recorded[1], "first") || !strings.Contains(recorded[2], "second") ||
		!strings.Contains(recorded[3], "repairs=1") || !strings.Contains(recorded[4], "bad_request") {
		t.Fatalf("the recording run did not go as scripted:\n%s", strings.Join(recorded, "\n"))
	}
	sent := srv.CallCount()

	play, ptape := replayClient(t, path, "")
	for i, cl := range calls {
		if got := outcome(play.Complete(t.Context(), testRequest(cl.user))); got != recorded[i] {
			t.Errorf("replay of %q:\n got %s\nwant %s", cl.user, got, recorded[i])
		}
	}
	playChat := play.Chat(t.Context(), chat)
	if playChat.Content != recChat.Content || playChat.Content != "plain words" || playChat.Attempts != recChat.Attempts || playChat.Usage != recChat.Usage {
		t.Errorf("chat replayed as %+v, recorded %+v", playChat, recChat)
	}
	if srv.CallCount() != sent {
		t.Errorf("the replay sent %d requests to the server", srv.CallCount()-sent)
	}
	if play.Usage() != rec.Usage() {
		t.Errorf("replayed usage %+v, recorded %+v", play.Usage(), rec.Usage())
	}
	if n := ptape.Unused(); n != 0 {
		t.Errorf("%d recorded answers not replayed", n)
	}
}

// TestCassetteMiss: a request the cassette has no answer for fails with
// ErrCassette naming the cassette, the entity and the tick, is not retried,
// and (without --replay-missing live) no endpoint is needed or contacted.
func TestCassetteMiss(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)
	rec.Complete(t.Context(), testRequest("asked"))
	tape.Close()

	play, _ := replayClient(t, path, "")
	req := testRequest("never asked")
	req.EntityKey, req.Tick = "resolution:garden", 7
	res := play.Complete(t.Context(), req)
	e := asError(t, res.Err)
	if !errors.Is(res.Err, ErrCassette) || res.Attempts != 0 {
		t.Fatalf("err = %v (kind %v), attempts %d; want ErrCassette, no attempt", res.Err, e.Kind, res.Attempts)
	}
	for _, want := range []string{path, "resolution:garden at tick 7", "phase intention", "--replay-missing live"} {
		if !strings.Contains(e.Error(), want) {
			t.Errorf("miss error lacks %q: %v", want, e)
		}
	}
	// The second identical request misses too: the one answer was for "asked".
	if res := play.Complete(t.Context(), testRequest("asked")); res.Err != nil {
		t.Errorf("recorded request: %v", res.Err)
	}
	if res := play.Complete(t.Context(), testRequest("asked")); !errors.Is(res.Err, ErrCassette) {
		t.Errorf("a request asked once more than recorded: err %v, want ErrCassette", res.Err)
	}
	if srv.CallCount() != 1 {
		t.Errorf("server saw %d requests, want only the recorded one", srv.CallCount())
	}
	chat := play.Chat(t.Context(), ChatRequest{EntityKey: "chronicle:x", Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(chat.Err, ErrCassette) || !strings.Contains(chat.Err.Error(), "chronicle:x") {
		t.Errorf("chat miss: %v", chat.Err)
	}
}

// TestCassetteMissingLive: with live misses, a request the cassette has no
// answer for goes to the endpoint; recorded ones do not.
func TestCassetteMissingLive(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)
	rec.Complete(t.Context(), testRequest("asked"))
	tape.Close()

	play, _ := replayClient(t, path, srv.URL)
	for _, user := range []string{"asked", "new", "asked"} {
		if res := play.Complete(t.Context(), testRequest(user)); res.Err != nil {
			t.Errorf("%q: %v", user, res.Err)
		}
	}
	if srv.CallCount() != 3 {
		t.Errorf("server saw %d requests, want 3: 1 recorded, then the 2 not in the cassette", srv.CallCount())
	}
}

// TestCassetteLaterRecordingWins: a request asked again for the same
// entity and tick by a later recording run (the tick did not commit the
// first time) is answered as the later run was; the earlier answer is never
// given.
func TestCassetteLaterRecordingWins(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(openaitest.JSON(map[string]any{"name": "dropped", "location": "garden"}),
		openaitest.JSON(map[string]any{"name": "kept", "location": "garden"})))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	for range 2 {
		rec, tape := recordClient(t, srv.URL, path)
		rec.Complete(t.Context(), testRequest("go"))
		if err := tape.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := lines(t, path); len(got) != 2 || !strings.Contains(got[0], `"session":1`) || !strings.Contains(got[1], `"session":2`) {
		t.Fatalf("two recording runs wrote:\n%s", strings.Join(got, "\n"))
	}
	play, tape := replayClient(t, path, "")
	res := play.Complete(t.Context(), testRequest("go"))
	if res.Err != nil || !strings.Contains(string(res.Output), "kept") || tape.Unused() != 0 {
		t.Errorf("replayed %s (%v), %d unused; want the later run's answer only", res.Output, res.Err, tape.Unused())
	}
}

// TestCassetteSameRequestOtherEntities: identical requests of two entities
// (asked in parallel, answered in any order) are each given the entity's own
// recorded answer.
func TestCassetteSameRequestOtherEntities(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(openaitest.JSON(map[string]any{"name": "for a", "location": "garden"}),
		openaitest.JSON(map[string]any{"name": "for b", "location": "garden"})))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)
	for _, who := range []string{"a", "b"} {
		req := testRequest("same")
		req.EntityKey = who
		rec.Complete(t.Context(), req)
	}
	tape.Close()
	play, _ := replayClient(t, path, "")
	for _, who := range []string{"b", "a"} {
		req := testRequest("same")
		req.EntityKey = who
		if res := play.Complete(t.Context(), req); !strings.Contains(string(res.Output), "for "+who) {
			t.Errorf("%s was given %s (%v)", who, res.Output, res.Err)
		}
	}
}

// TestCassetteInterruptedAndLateCalls: a call canceled by the caller is not
// an answer and is not recorded; a call cut short by a deadline is, and
// fails again on replay without waiting.
func TestCassetteInterruptedAndLateCalls(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Hang()))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if res := rec.Complete(ctx, testRequest("canceled")); ErrorKindOf(res.Err) != KindCanceled {
		t.Fatalf("canceled call: %v", res.Err)
	}
	dctx, dcancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer dcancel()
	late := rec.Complete(dctx, testRequest("late"))
	if ErrorKindOf(late.Err) != KindTimeout {
		t.Fatalf("late call: %v", late.Err)
	}
	tape.Close()
	if got := lines(t, path); len(got) != 1 || !strings.Contains(got[0], `"kind":"timeout"`) {
		t.Fatalf("cassette holds:\n%s\nwant the late call alone", strings.Join(got, "\n"))
	}
	play, _ := replayClient(t, path, "")
	start := time.Now()
	res := play.Complete(t.Context(), testRequest("late"))
	if outcome(res) != outcome(late) || time.Since(start) > time.Second {
		t.Errorf("replayed late call:\n got %s\nwant %s (in %v)", outcome(res), outcome(late), time.Since(start))
	}
}

// TestCassetteSecretsNeverWritten: the key (sent in the Authorization
// header and, for proxies that want it so, in the base URL's query) and the
// base URL's password are in no line, though the server echoes them in
// answers and in errors.
func TestCassetteSecretsNeverWritten(t *testing.T) {
	t.Parallel()
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		echo := fmt.Sprintf("header %q url %q", r.Header.Get("Authorization"), r.URL.String())
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status != http.StatusOK {
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": echo, "type": "invalid_request_error"}})
			return
		}
		content, _ := json.Marshal(map[string]any{"name": echo, "location": "garden"})
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": string(content)}}}})
	}))
	t.Cleanup(srv.Close)
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tape, err := RecordCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	base := withCreds(srv.URL) + "/v1?api-key=" + testKey + "&x="
	c, _ := newTestClient(t, base, func(cfg *Config) { cfg.APIKey, cfg.Cassette = testKey, tape })
	ok := c.Complete(t.Context(), testRequest("echo"))
	status = http.StatusUnauthorized
	failed := c.Complete(t.Context(), testRequest("echo again"))
	tape.Close()
	if ok.Err != nil || !strings.Contains(string(ok.Output), "Bearer "+Redacted) || ErrorKindOf(failed.Err) != KindAuth {
		t.Fatalf("the server did not echo as scripted: %s (%v); %v", ok.Output, ok.Err, failed.Err)
	}
	b, _ := os.ReadFile(path)
	assertNoSecret(t, "cassette", string(b))
	if !bytes.Contains(b, []byte("Bearer "+Redacted)) || len(lines(t, path)) != 2 {
		t.Errorf("cassette does not hold the two scrubbed echoes:\n%s", b)
	}
}

// TestCassetteRecordingFails: a line that cannot be written fails its call
// with ErrCassette (the run must stop: the cassette no longer holds it), and
// Close says so.
func TestCassetteRecordingFails(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	rec, tape := recordClient(t, srv.URL, path)
	tape.f.Close() // as a full disk would
	res := rec.Complete(t.Context(), testRequest("go"))
	if !errors.Is(res.Err, ErrCassette) || !strings.Contains(res.Err.Error(), "could not be recorded") {
		t.Errorf("err = %v, want ErrCassette", res.Err)
	}
	if err := tape.Close(); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Close = %v, want the failed write named", err)
	}
}

// TestCassetteFiles: what RecordCassette and ReplayCassette refuse, and that
// a recording that recorded nothing leaves no file it created behind.
func TestCassetteFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := ReplayCassette(filepath.Join(dir, "absent.jsonl"), false); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("replaying a missing file: %v", err)
	}
	for _, open := range []func(string) (*Cassette, error){RecordCassette, func(p string) (*Cassette, error) { return ReplayCassette(p, false) }} {
		var ce *CassetteError
		if _, err := open(dir); !errors.As(err, &ce) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("a folder as cassette: %v", err)
		}
	}
	if _, err := RecordCassette(filepath.Join(dir, "no", "such", "dir.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("recording into a missing folder: %v", err)
	}

	fresh := filepath.Join(dir, "fresh.jsonl")
	tape, err := RecordCassette(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := tape.Close(); err != nil || exists(fresh) {
		t.Errorf("a recording of nothing: Close %v, file left: %v", err, exists(fresh))
	}

	// Not a cassette: nothing is appended to it.
	notes := filepath.Join(dir, "config.yaml")
	os.WriteFile(notes, []byte("llm:\n  model: x\n"), 0o644)
	if _, err := RecordCassette(notes); err == nil || !strings.Contains(err.Error(), notes+" line 1") {
		t.Errorf("recording into a YAML file: %v", err)
	}
	if b, _ := os.ReadFile(notes); string(b) != "llm:\n  model: x\n" {
		t.Errorf("the YAML file was changed: %q", b)
	}

	// A cassette whose last line has no newline gets one before the next.
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	fixture, _ := os.ReadFile(filepath.Join("testdata", "cassette.jsonl"))
	first := strings.SplitN(string(fixture), "\n", 2)[0]
	open := filepath.Join(dir, "open.jsonl")
	os.WriteFile(open, []byte(first), 0o600)
	rec, tape := recordClient(t, srv.URL, open)
	rec.Complete(t.Context(), testRequest("go"))
	if err := tape.Close(); err != nil {
		t.Fatal(err)
	}
	if got := lines(t, open); len(got) != 2 || got[0] != first {
		t.Errorf("appended to a line without a newline:\n%s", strings.Join(got, "\n"))
	}
	if _, err := ReplayCassette(open, false); err != nil {
		t.Error(err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestCassetteMalformed: a line that is not a recorded call is refused with
// the file and the line named, whichever way it is wrong.
func TestCassetteMalformed(t *testing.T) {
	t.Parallel()
	const good = `{"request":{"model":"m","messages":[]},"response":{"choices":[]}}`
	key, _, _ := requestKey([]byte(`{"model":"m","messages":[]}`))
	for _, tc := range []struct {
		name, text string
		line       int
		want       string
	}{
		{"not JSON", "{oops", 1, "not a recorded call"},
		{"not an object", `[1,2]`, 1, "not a recorded call"},
		{"unknown field", `{"reqest":{},"response":{}}`, 1, `unknown field "reqest"`},
		{"two values", good + good, 1, "more than one JSON value"},
		{"no request", `{"response":{"choices":[]}}`, 1, "no request object"},
		{"request not an object", `{"request":"hi","response":{}}`, 1, "no request object"},
		{"key edited", `{"key":"0123456789abcdef","request":{"model":"m","messages":[]},"response":{}}`, 1, "does not match its request"},
		{"neither answer", `{"request":{"model":"m"}}`, 1, "neither a response nor an error"},
		{"both answers", `{"request":{"model":"m"},"response":{},"error":{"kind":"server","message":"x"}}`, 1, "both a response and an error"},
		{"unknown kind", `{"request":{"model":"m"},"error":{"kind":"gremlins","message":"x"}}`, 1, `unknown error kind "gremlins"`},
		{"unknown retry kind", `{"request":{"model":"m"},"response":{},"retries":[{"kind":"","message":"x","success":true}]}`, 1, `unknown error kind ""`},
		{"negative attempts", `{"request":{"model":"m"},"response":{},"attempts":-1}`, 1, "must not be negative"},
		{"third line, blanks counted", good + "\n\n" + `{"request":{}`, 3, "not a recorded call"},
		{"wrong type", `{"request":{"model":"m"},"response":{"choices":"x"}}`, 1, "not a recorded call"},
		{"good key, bad tick", `{"key":"` + key + `","request":{"model":"m","messages":[]},"response":{},"tick":-2}`, 1, "must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bad.jsonl")
			os.WriteFile(path, []byte(tc.text), 0o600)
			_, err := ReplayCassette(path, false)
			var ce *CassetteError
			if !errors.As(err, &ce) || ce.Line != tc.line || !strings.Contains(err.Error(), fmt.Sprintf("cassette %s line %d: ", path, tc.line)) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v; want line %d and %q", err, tc.line, tc.want)
			}
		})
	}
}

// TestCassetteFixture replays testdata/cassette.jsonl, a cassette kept as a
// test fixture (go test -run Fixture -update records it again): a
// structured call, its repair, a chat message and a tool turn, answered with
// no server.
func TestCassetteFixture(t *testing.T) {
	path := filepath.Join("testdata", "cassette.jsonl")
	tools := ToolRequest{EntityKey: "orders:p1", Phase: "orders", Tick: 2, Params: Params{Model: "test-model", MaxTokens: 128},
		Messages: []Message{{Role: "user", Content: "Your turn."}},
		Tools:    []Tool{{Name: "submit_orders", Description: "End the turn.", Parameters: json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`)}}}
	chat := ChatRequest{EntityKey: "chronicle:demo", Params: Params{Model: "test-model", MaxTokens: 64}, Messages: []Message{{Role: "system", Content: "Build a history."}, {Role: "user", Content: "Begin."}}}
	if *update {
		srv := openaitest.New(t, openaitest.Match(openaitest.Sequence(openaitest.Content(`{"name":"Ada"}`), openaitest.JSON(validAnswer)),
			openaitest.Route{If: func(c *openaitest.Call) bool { return len(c.Request.Tools) > 0 }, Then: openaitest.Always(openaitest.ToolCalls(openaitest.Tool("call_1", "submit_orders", map[string]any{"n": 3})))},
			openaitest.Route{If: func(c *openaitest.Call) bool { return c.SchemaName() == "" }, Then: openaitest.Always(openaitest.Content("CREATE PERIOD Dawn LAST TONE light DESCRIPTION The start."))},
		))
		os.Remove(path)
		rec, tape := recordClient(t, srv.URL, path)
		rec.Complete(t.Context(), testRequest("What does Ada do?"))
		rec.Chat(t.Context(), chat)
		rec.CompleteTools(t.Context(), tools)
		if err := tape.Close(); err != nil {
			t.Fatal(err)
		}
	}
	c, tape := replayClient(t, path, "")
	res := c.Complete(t.Context(), testRequest("What does Ada do?"))
	if res.Err != nil || string(res.Output) != mustMarshal(validAnswer) || res.Repairs != 1 || res.Attempts != 2 {
		t.Errorf("structured call: %s", outcome(res))
	}
	if got := c.Chat(t.Context(), chat); got.Err != nil || !strings.HasPrefix(got.Content, "CREATE PERIOD Dawn") {
		t.Errorf("chat: %+v", got)
	}
	tr := c.CompleteTools(t.Context(), tools)
	if tr.Err != nil || len(tr.Calls) != 1 || tr.Calls[0].Name != "submit_orders" || string(tr.Calls[0].Arguments) != `{"n":3}` || tr.Calls[0].Invalid != "" {
		t.Errorf("tool turn: %+v", tr)
	}
	if tape.Unused() != 0 {
		t.Errorf("%d lines of the fixture not replayed", tape.Unused())
	}
}

// FuzzReadCassette: whatever a file holds, reading it never panics; what it
// accepts has keys that match the requests, and reads back the same once
// written out again.
func FuzzReadCassette(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("testdata", "cassette.jsonl")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"request":{"model":"m","messages":[]},"response":{"choices":[]}}` + "\n\n"))
	f.Add([]byte(`{"request":{"model":"m"},"error":{"kind":"server","message":"x","status":500},"retries":[{"kind":"timeout","message":"t","success":false}]}`))
	f.Add([]byte("{\"request\":{\"a\":1e400},\"response\":{}}\n{oops"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, err := readCassette(bytes.NewReader(data), "fuzz.jsonl")
		if err != nil {
			if _, ok := errors.AsType[*CassetteError](err); !ok {
				t.Fatalf("error %v (%T) is not a *CassetteError", err, err)
			}
			return
		}
		var out bytes.Buffer
		for _, e := range entries {
			if key, _, err := requestKey(e.Request); err != nil || key != e.Key || e.Attempts < 1 {
				t.Fatalf("accepted an entry with key %s for a request keyed %s (%v), attempts %d", e.Key, key, err, e.Attempts)
			}
			b, err := json.Marshal(e)
			if err != nil {
				t.Fatalf("accepted an entry that cannot be written: %v", err)
			}
			out.Write(append(b, '\n'))
		}
		again, _, err := readCassette(&out, "again.jsonl")
		if err != nil || len(again) != len(entries) {
			t.Fatalf("written out again, read %d entries (%v), want %d", len(again), err, len(entries))
		}
		for i := range again {
			if again[i].Key != entries[i].Key {
				t.Fatalf("entry %d: key %s, then %s", i, entries[i].Key, again[i].Key)
			}
		}
	})
}
