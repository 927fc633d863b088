package bench

import (
	"context"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/world"
)

func startServer(t *testing.T, cfg ServerConfig) (*Server, string) {
	t.Helper()
	s, err := NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	return s, hs.URL
}

// TestServerAnswersWhatTheEngineCommits runs a generated world through the
// session layer against the stand-in server: every answer passes the
// engine's checks (no failed call, no repair, no skipped update), characters
// move, and the usage the engine stores is what the server reported.
func TestServerAnswersWhatTheEngineCommits(t *testing.T) {
	t.Parallel()
	srv, url := startServer(t, ServerConfig{Tail: TailFixed, Concurrency: 4, Seed: 9})
	dir := filepath.Join(t.TempDir(), "sim")
	if err := Generate(context.Background(), dir, Shape{Characters: 24, Locations: 6}, 1); err != nil {
		t.Fatal(err)
	}
	set := session.Settings{
		LLM: func() (llm.Config, error) {
			c := llm.DefaultConfig()
			c.BaseURL, c.APIKey, c.RepairAttempts = url+"/v1", "k", 0
			return c, nil
		},
		Sections: benchPhases(),
	}
	s, err := session.Open(context.Background(), dir, set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Run(context.Background(), 3)
	if err != nil {
		t.Fatal(err)
	}
	var usage llm.Usage
	for _, tr := range rep.Ticks {
		if tr.Calls != 30 || tr.Failed != 0 || tr.Repairs != 0 || tr.Fallbacks != 0 || tr.ApplyErrors != 0 {
			t.Errorf("tick %d: %+v, want 30 calls all applied", tr.Tick, tr)
		}
		usage = usage.Add(tr.Usage)
	}
	st := srv.Stats()
	if st.Answered != 90 || st.BadRequests != 0 || st.RateLimited != 0 {
		t.Errorf("server stats %+v, want 90 answered", st)
	}
	if int64(usage.PromptTokens) != st.PromptTokens || int64(usage.CompletionTokens) != st.CompletionTokens {
		t.Errorf("engine counted %+v, server reported %d prompt and %d completion tokens", usage, st.PromptTokens, st.CompletionTokens)
	}
	start, end := s.Sim.InitialState(), s.State().(*world.State)
	moved := 0
	for id, cs := range end.Characters {
		if cs.Location != start.Characters[id].Location {
			moved++
		}
		if len(cs.Memory) != 3 {
			t.Errorf("%s remembers %d ticks, want 3", id, len(cs.Memory))
		}
	}
	if moved == 0 {
		t.Error("no character moved in 3 ticks")
	}
}

func post(t *testing.T, url string, body any) (*http.Response, string) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(url+"/v1/chat/completions", "application/json", strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp, string(out)
}

func intentionRequest(t *testing.T) map[string]any {
	t.Helper()
	return map[string]any{
		"model":    "bench",
		"messages": []map[string]string{{"role": "system", "content": "You play Ada."}, {"role": "user", "content": "What do you do? (tick 1)"}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "IntentionResponse", "strict": true, "schema": houseCall(t, phases.PhaseIntention, "ada", nil).Schema}},
	}
}

// houseCall is the request the narrative of the test house sends in phase
// for entity at the tick after its start, as edit changes it (nil: as
// authored).
func houseCall(t *testing.T, phase, entity string, edit func(*world.State)) llm.Request {
	t.Helper()
	pr, err := prompts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := &phases.Narrative{Sim: worldtest.House(), Prompts: pr}
	st := n.Sim.InitialState()
	if edit != nil {
		edit(st)
	}
	req, err := n.Call(st, phase, entity)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func resolutionRequest(t *testing.T, schema json.RawMessage) map[string]any {
	t.Helper()
	return map[string]any{
		"model":    "bench",
		"messages": []map[string]string{{"role": "user", "content": "Resolve the hall."}},
		"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "MasterOutput", "strict": true, "schema": schema}},
	}
}

// TestServerAnswersFromTheSchema: the MasterOutput answer has the schema's
// tick and location, exactly the characters listed, each at a location of
// its enum; the usage counts bytes / 4.
func TestServerAnswersFromTheSchema(t *testing.T) {
	t.Parallel()
	_, url := startServer(t, ServerConfig{Tail: TailFixed, Concurrency: 1})
	schema := houseCall(t, phases.PhaseResolution, "hall", func(st *world.State) { // tick 7, everyone in the hall
		st.Tick = 6
		cy := st.Characters["cy"]
		cy.Location = "hall"
		st.Characters["cy"] = cy
	}).Schema
	resp, body := post(t, url, resolutionRequest(t, schema))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if strings.Contains(body, standInKey) {
		t.Errorf("the answer holds the API key the engine sends, which it would scrub from every answer: %s", body)
	}
	var out struct {
		Choices []struct {
			Message struct {
				Content string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		Usage struct {
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		} `json:"usage"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Choices) != 1 {
		t.Fatalf("answer %s: %v", body, err)
	}
	u, content := out.Usage, out.Choices[0].Message.Content
	if want := tokens(len("Resolve the hall.")); u.PromptTokens != want || u.CompletionTokens != tokens(len(content)) {
		t.Errorf("usage %+v, want prompt %d and completion %d (bytes / 4)", u, want, tokens(len(content)))
	}
	mo, skipped, err := phases.ParseMasterOutput([]byte(content))
	if err != nil || len(skipped) > 0 {
		t.Fatalf("answer %s: %v %v", content, err, skipped)
	}
	if mo.Tick != 7 || mo.LocationID != "hall" || len(mo.Characters) != 3 {
		t.Errorf("answer %+v, want tick 7, hall, 3 characters", mo)
	}
	for id, cu := range mo.Characters {
		if cu.Location != "hall" && cu.Location != "garden" {
			t.Errorf("%s goes to %q, not one of its enum", id, cu.Location)
		}
	}

	resp, body = post(t, url, intentionRequest(t))
	if resp.StatusCode != http.StatusOK || !strings.Contains(body, `\"intention\"`) {
		t.Errorf("intention call: %d %s", resp.StatusCode, body)
	}
}

func TestServerRefusesWhatItCannotAnswer(t *testing.T) {
	t.Parallel()
	srv, url := startServer(t, ServerConfig{Tail: TailFixed, Concurrency: 2})
	noTick := json.RawMessage(`{"type":"object","properties":{"location_id":{"enum":["hall"]},"characters":{"type":"object","properties":{}}}}`)
	noEnum := json.RawMessage(`{"type":"object","properties":{"tick":{"enum":[1]},"location_id":{"enum":["hall"]},"characters":{"type":"object","properties":{"ada":{"type":"object","properties":{"location":{"type":"string"}}}}}}}`)
	plain := intentionRequest(t)
	delete(plain, "response_format")
	other := intentionRequest(t)
	other["response_format"].(map[string]any)["json_schema"].(map[string]any)["name"] = "Poem"
	for _, tc := range []struct {
		name string
		body any
		want string
	}{
		{"not JSON", "{", "could not parse"},
		{"no json_schema", plain, "structured-output calls only"},
		{"another schema", other, `Poem`},
		{"no tick enum", resolutionRequest(t, noTick), "properties.tick"},
		{"no location enum", resolutionRequest(t, noEnum), "characters.ada has no location enum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := post(t, url, tc.body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("status %d %s, want 400 saying %q", resp.StatusCode, body, tc.want)
			}
		})
	}
	if got := srv.Stats().BadRequests; got != 5 {
		t.Errorf("%d bad requests counted, want 5", got)
	}
	resp, err := http.Get(url + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown path: status %d, want 404", resp.StatusCode)
	}
}

// TestServerRateLimit: over its rpm the server answers 429 with
// Retry-After (and retry-after-ms) in OpenAI's error format, and counts it.
func TestServerRateLimit(t *testing.T) {
	t.Parallel()
	srv, url := startServer(t, ServerConfig{Tail: TailFixed, Concurrency: 4, RPM: 60})
	if resp, body := post(t, url, intentionRequest(t)); resp.StatusCode != http.StatusOK {
		t.Fatalf("first request: %d %s", resp.StatusCode, body)
	}
	resp, body := post(t, url, intentionRequest(t))
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("second request within the second: %d %s, want 429", resp.StatusCode, body)
	}
	if resp.Header.Get("Retry-After") != "1" || resp.Header.Get("Retry-After-Ms") == "" {
		t.Errorf("429 headers %v, want Retry-After 1 and retry-after-ms", resp.Header)
	}
	if !strings.Contains(body, "rate_limit_exceeded") || !strings.Contains(body, "60 requests per minute") {
		t.Errorf("429 body %s", body)
	}
	if st := srv.Stats(); st.RateLimited != 1 || st.Answered != 1 || st.Requests != 2 {
		t.Errorf("stats %+v, want 2 requests, 1 answered, 1 rate limited", st)
	}
}

// TestServerQueuesOverItsConcurrency: with 2 slots, 6 calls at once are
// worked on 2 at a time and the rest wait; all are answered.
func TestServerQueuesOverItsConcurrency(t *testing.T) {
	t.Parallel()
	srv, url := startServer(t, ServerConfig{Latency: 50 * time.Millisecond, Tail: TailFixed, Concurrency: 2})
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			if resp, body := post(t, url, intentionRequest(t)); resp.StatusCode != http.StatusOK {
				t.Errorf("status %d %s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
	st := srv.Stats()
	if st.MaxInFlight != 2 || st.MaxQueued < 1 || st.Answered != 6 {
		t.Errorf("stats %+v, want at most 2 in flight, some queued, 6 answered", st)
	}
}

// TestLatencyTails: fixed is the latency; the heavy tails have about that
// mean, spread, and are capped at 20 times it.
func TestLatencyTails(t *testing.T) {
	t.Parallel()
	const l = 10 * time.Millisecond
	for _, tail := range Tails {
		t.Run(tail, func(t *testing.T) {
			s, err := NewServer(ServerConfig{Latency: l, Tail: tail, Concurrency: 1, Seed: 42})
			if err != nil {
				t.Fatal(err)
			}
			const n = 200_000
			var sum float64
			lo, hi := time.Duration(math.MaxInt64), time.Duration(0)
			for range n {
				d := s.latency()
				sum += float64(d)
				lo, hi = min(lo, d), max(hi, d)
			}
			mean := time.Duration(sum / n)
			if mean < l*9/10 || mean > l*11/10 {
				t.Errorf("mean %s, want about %s", mean, l)
			}
			if hi > tailCap*l {
				t.Errorf("max %s above the cap %s", hi, tailCap*l)
			}
			if spread := hi > 3*l && lo < l; spread != (tail != TailFixed) {
				t.Errorf("min %s, max %s: a %s tail", lo, hi, tail)
			}
		})
	}
}

func TestServerConfigCheck(t *testing.T) {
	t.Parallel()
	err := ServerConfig{Latency: -1, Tail: "gamma", Concurrency: 0, RPM: -5}.Check()
	for _, want := range []string{"latency must not be negative", `tail "gamma"`, "server concurrency must be at least 1", "rpm must not be negative"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Check() = %v, want it to say %q", err, want)
		}
	}
	if _, err := NewServer(ServerConfig{Tail: "gamma", Concurrency: 1}); err == nil {
		t.Error("NewServer accepted tail gamma")
	}
	if err := (ServerConfig{Tail: TailPareto, Concurrency: 1}).Check(); err != nil {
		t.Errorf("a valid configuration: %v", err)
	}
}

// TestChildServer starts the server in a child process, as bench does.
func TestChildServer(t *testing.T) {
	t.Parallel()
	c, err := StartServer(context.Background(), testLauncher(), ServerConfig{Tail: TailFixed, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	if resp, body := post(t, strings.TrimSuffix(c.URL, "/v1"), intentionRequest(t)); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	st, err := c.Stats(context.Background())
	if err != nil || st.Answered != 1 {
		t.Errorf("Stats() = %+v, %v; want 1 answered", st, err)
	}
	if _, err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if _, err := c.Stats(context.Background()); err == nil {
		t.Error("Stats after Close: no error")
	}
}

func TestChildServerFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		l    Launcher
		cfg  ServerConfig
		want string
	}{
		{"no program", Launcher{}, ServerConfig{Tail: TailFixed, Concurrency: 1}, "no program"},
		{"missing program", Launcher{Path: filepath.Join(t.TempDir(), "nope")}, ServerConfig{Tail: TailFixed, Concurrency: 1}, "nope"},
		{"says nothing", Launcher{Path: "/bin/sh", Args: []string{"-c", "echo broken >&2; exit 3"}}, ServerConfig{Tail: TailFixed, Concurrency: 1}, "broken"},
		{"bad config", testLauncher(), ServerConfig{Tail: TailFixed}, "server concurrency"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := StartServer(context.Background(), tc.l, tc.cfg)
			if err == nil {
				c.Close()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
		})
	}
}

func TestServeChildNeedsItsConfiguration(t *testing.T) {
	t.Setenv(ServerEnv, "")
	if err := ServeChild(context.Background(), strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), ServerEnv) {
		t.Errorf("ServeChild without %s: %v", ServerEnv, err)
	}
	t.Setenv(ServerEnv, "{")
	if err := ServeChild(context.Background(), strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), ServerEnv) {
		t.Errorf("ServeChild with bad JSON: %v", err)
	}
	t.Setenv(ServerEnv, `{"tail":"fixed","concurrency":0}`)
	if err := ServeChild(context.Background(), strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), "concurrency") {
		t.Errorf("ServeChild with concurrency 0: %v", err)
	}
}
