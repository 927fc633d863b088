package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// testSchema is a small strict schema in the shape of the real ones.
var testSchema = json.RawMessage(`{
	"type": "object",
	"properties": {
		"name": {"type": "string"},
		"location": {"type": "string", "enum": ["common", "garden"]}
	},
	"required": ["name", "location"],
	"additionalProperties": false
}`)

var validAnswer = map[string]any{"name": "Ada", "location": "garden"}

func testRequest(user string) Request {
	return Request{
		EntityKey:  "intention:ada",
		Phase:      "intention",
		Tick:       1,
		Params:     Params{Model: "test-model", Temperature: 0.7, MaxTokens: 256},
		System:     "You are Ada.",
		User:       user,
		SchemaName: "IntentionResponse",
		Schema:     testSchema,
	}
}

// waits records the delays the client chose between retries, without waiting.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// newTestClient returns a client for url whose backoff is deterministic (the
// jitter ceiling) and recorded instead of slept.
func newTestClient(t *testing.T, url string, mod func(*Config)) (*Client, *waits) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.BaseURL = url
	cfg.Timeout = 5 * time.Second
	cfg.BackoffBase = time.Millisecond
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w := &waits{}
	c.wait = func(ctx context.Context, d time.Duration) error {
		w.mu.Lock()
		w.d = append(w.d, d)
		w.mu.Unlock()
		return ctx.Err()
	}
	c.jitter = func(ceil time.Duration) time.Duration { return ceil }
	return c, w
}

func asError(t *testing.T, err error) *Error {
	t.Helper()
	e, ok := errors.AsType[*Error](err)
	if !ok {
		t.Fatalf("err = %v (%T), want *llm.Error", err, err)
	}
	return e
}

func TestCompleteValidAnswer(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c, _ := newTestClient(t, srv.URL, nil)

	res := c.Complete(t.Context(), testRequest("What do you do?"))
	if res.Err != nil {
		t.Fatalf("Err = %v", res.Err)
	}
	var got map[string]any
	if err := json.Unmarshal(res.Output, &got); err != nil || got["location"] != "garden" {
		t.Errorf("Output = %s (%v)", res.Output, err)
	}
	if res.Raw != string(res.Output) {
		t.Errorf("Raw = %q, Output = %q", res.Raw, res.Output)
	}
	if res.Attempts != 1 || res.Repairs != 0 {
		t.Errorf("Attempts, Repairs = %d, %d; want 1, 0", res.Attempts, res.Repairs)
	}
	want := Usage{PromptTokens: 120, CompletionTokens: 30, CachedTokens: 64}
	if res.Usage != want || c.Usage() != want {
		t.Errorf("Usage = %+v, client total %+v; want %+v", res.Usage, c.Usage(), want)
	}
	if res.Latency <= 0 {
		t.Errorf("Latency = %v", res.Latency)
	}
	wantMsgs := []Message{{Role: "system", Content: "You are Ada."}, {Role: "user", Content: "What do you do?"}}
	if !equalMessages(res.Messages, wantMsgs) {
		t.Errorf("Messages = %+v, want %+v", res.Messages, wantMsgs)
	}

	// What went over the wire.
	call := srv.Calls()[0]
	if call.SchemaName() != "IntentionResponse" || !call.Strict() {
		t.Errorf("json_schema name %q strict %v; want IntentionResponse, true", call.SchemaName(), call.Strict())
	}
	if rf := call.Request.ResponseFormat; rf.Type != openai.ChatCompletionResponseFormatTypeJSONSchema {
		t.Errorf("response_format.type = %q", rf.Type)
	}
	var sent, orig any
	_ = json.Unmarshal(call.Schema(), &sent)
	_ = json.Unmarshal(testSchema, &orig)
	if b1, _ := json.Marshal(sent); string(b1) != mustMarshal(orig) {
		t.Errorf("schema sent = %s", call.Schema())
	}
	var wire map[string]any
	_ = json.Unmarshal(call.Body, &wire)
	if wire["max_tokens"] != 256.0 || wire["model"] != "test-model" || wire["temperature"] != 0.7 {
		t.Errorf("wire model/max_tokens/temperature = %v/%v/%v", wire["model"], wire["max_tokens"], wire["temperature"])
	}
	if _, ok := wire["max_completion_tokens"]; ok {
		t.Error("max_completion_tokens sent to a non-reasoning model")
	}
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func equalMessages(a, b []Message) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Role != b[i].Role || a[i].Content != b[i].Content || a[i].ToolCallID != b[i].ToolCallID || len(a[i].ToolCalls) != len(b[i].ToolCalls) {
			return false
		}
	}
	return true
}

func TestCompleteReasoningModelGetsMaxCompletionTokens(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c, _ := newTestClient(t, srv.URL, nil)
	req := testRequest("go")
	req.Params = Params{Model: "o3-mini", MaxTokens: 512}
	if res := c.Complete(t.Context(), req); res.Err != nil {
		t.Fatal(res.Err)
	}
	var wire map[string]any
	_ = json.Unmarshal(srv.Calls()[0].Body, &wire)
	if wire["max_completion_tokens"] != 512.0 || wire["max_tokens"] != nil {
		t.Errorf("max_completion_tokens = %v, max_tokens = %v; want 512, absent", wire["max_completion_tokens"], wire["max_tokens"])
	}
}

func TestCompleteSendsHistory(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Match(
		openaitest.Always(openaitest.JSON(validAnswer)),
		openaitest.Route{If: openaitest.UserContains("fail"), Then: openaitest.Always(openaitest.Content("not json"))},
	))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Depth = 2; cfg.RepairAttempts = 0 })
	c.History().Load(map[string][]Exchange{
		"intention:ada": {{"u1", "a1"}, {"u2", "a2"}, {"u3", "a3"}},
		"intention:bo":  {{"bo", "bo"}},
	})

	ok := c.Complete(t.Context(), testRequest("u4"))
	want := []Message{{Role: "system", Content: "You are Ada."}, {Role: "user", Content: "u2"}, {Role: "assistant", Content: "a2"}, {Role: "user", Content: "u3"}, {Role: "assistant", Content: "a3"}, {Role: "user", Content: "u4"}}
	if !equalMessages(ok.Messages, want) {
		t.Fatalf("Messages = %+v\nwant %+v", ok.Messages, want)
	}
	if got := srv.Calls()[0].Messages(); len(got) != len(want) || got[1].Content != "u2" || got[4].Content != "a3" {
		t.Errorf("wire messages = %+v", got)
	}
	if got := c.History().Get("intention:ada"); len(got) != 2 {
		t.Fatalf("Complete changed the history: %+v", got)
	}

	failed := c.Complete(t.Context(), testRequest("fail"))
	if failed.Err == nil {
		t.Fatal("want an error")
	}
	if _, added := failed.Exchange(); added {
		t.Error("a failed call yields an exchange")
	}
	c.History().Commit(failed, ok)

	got := c.History().Get("intention:ada")
	wantHist := []Exchange{{"u3", "a3"}, {"u4", string(ok.Output)}}
	if len(got) != 2 || got[0] != wantHist[0] || got[1] != wantHist[1] {
		t.Errorf("history = %+v, want %+v", got, wantHist)
	}

	next := c.Complete(t.Context(), testRequest("u5"))
	if n := len(next.Messages); n != 6 || next.Messages[3].Content != "u4" {
		t.Errorf("next call messages = %+v", next.Messages)
	}

	// A request with a Record is sent whole and remembered by its record.
	long := testRequest("Tick 6. The whole room, everyone in it, every memory...")
	long.Record = "Tick 6 in the hall."
	rec := c.Complete(t.Context(), long)
	if last := rec.Messages[len(rec.Messages)-1].Content; last != long.User {
		t.Errorf("sent %q, want the whole user prompt", last)
	}
	c.History().Commit(rec)
	if got := c.History().Get("intention:ada"); got[len(got)-1].User != "Tick 6 in the hall." {
		t.Errorf("history keeps %q, want the record", got[len(got)-1].User)
	}

	// A request with RecordAnswer is remembered by what it makes of the
	// validated answer, which it is given whole.
	compact := testRequest("u7")
	var given string
	compact.RecordAnswer = func(a json.RawMessage) string { given = string(a); return "the gist" }
	res := c.Complete(t.Context(), compact)
	c.History().Commit(res)
	if got := c.History().Get("intention:ada"); got[len(got)-1] != (Exchange{"u7", "the gist"}) || given != string(res.Output) {
		t.Errorf("history keeps %+v (record given %q), want the recorded answer of %s", got[len(got)-1], given, res.Output)
	}
}

func TestCompleteTransientRetries(t *testing.T) {
	t.Parallel()
	ok := openaitest.JSON(validAnswer)
	rateLimited := openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached")
	tests := []struct {
		name      string
		replies   []openaitest.Reply
		backoffMx time.Duration
		wantWaits []time.Duration
		wantKind  ErrorKind // KindUnknown: success
		attempts  int
	}{
		{name: "429 Retry-After seconds", replies: []openaitest.Reply{rateLimited.WithHeader("Retry-After", "7"), ok},
			wantWaits: []time.Duration{7 * time.Second}, attempts: 2},
		{name: "429 retry-after-ms", replies: []openaitest.Reply{rateLimited.WithHeader("Retry-After-Ms", "1500").WithHeader("Retry-After", "2"), ok},
			wantWaits: []time.Duration{1500 * time.Millisecond}, attempts: 2},
		{name: "429 Retry-After equal to BackoffMax", replies: []openaitest.Reply{rateLimited.WithHeader("Retry-After", "3"), ok},
			backoffMx: 3 * time.Second, wantWaits: []time.Duration{3 * time.Second}, attempts: 2},
		{name: "429 without Retry-After backs off", replies: []openaitest.Reply{rateLimited, ok},
			wantWaits: []time.Duration{time.Millisecond}, attempts: 2},
		{name: "503 Retry-After", replies: []openaitest.Reply{openaitest.Status(503, "server_error", "", "overloaded").WithHeader("Retry-After", "2"), ok},
			wantWaits: []time.Duration{2 * time.Second}, attempts: 2},
		{name: "500 then valid", replies: []openaitest.Reply{openaitest.Status(500, "server_error", "", "boom"), ok},
			wantWaits: []time.Duration{time.Millisecond}, attempts: 2},
		{name: "502 HTML page from a proxy", replies: []openaitest.Reply{openaitest.Raw(502, "text/html", "<html>Bad Gateway</html>"), ok},
			wantWaits: []time.Duration{time.Millisecond}, attempts: 2},
		{name: "connection dropped", replies: []openaitest.Reply{openaitest.Disconnect(), ok},
			wantWaits: []time.Duration{time.Millisecond}, attempts: 2},
		{name: "500 until MaxAttempts", replies: []openaitest.Reply{openaitest.Status(500, "server_error", "", "boom")},
			wantWaits: []time.Duration{time.Millisecond}, wantKind: KindServer, attempts: 2},
		{name: "connection dropped until MaxAttempts", replies: []openaitest.Reply{openaitest.Disconnect()},
			wantWaits: []time.Duration{time.Millisecond}, wantKind: KindConnection, attempts: 2},
		{name: "429 waited out RateLimitWaits times, then tried MaxAttempts times", replies: []openaitest.Reply{rateLimited},
			wantWaits: []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond,
				16 * time.Millisecond, 32 * time.Millisecond, 64 * time.Millisecond, 128 * time.Millisecond, time.Millisecond},
			wantKind: KindRateLimit, attempts: 10},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.New(t, openaitest.Sequence(tt.replies...))
			c, w := newTestClient(t, srv.URL, func(cfg *Config) {
				if tt.backoffMx > 0 {
					cfg.BackoffMax = tt.backoffMx
				}
			})
			res := c.Complete(t.Context(), testRequest("go"))
			if tt.wantKind == KindUnknown {
				if res.Err != nil || res.Output == nil {
					t.Fatalf("Err = %v, Output = %s", res.Err, res.Output)
				}
			} else {
				e := asError(t, res.Err)
				if e.Kind != tt.wantKind || e.Attempts != tt.attempts || !e.Transient() {
					t.Errorf("kind %v attempts %d transient %v; want %v %d true", e.Kind, e.Attempts, e.Transient(), tt.wantKind, tt.attempts)
				}
				if !strings.Contains(e.Error(), fmt.Sprintf("%d attempts", tt.attempts)) || !strings.Contains(e.Error(), srv.URL) {
					t.Errorf("Error() = %q, want attempts and URL", e.Error())
				}
			}
			if res.Attempts != tt.attempts || srv.CallCount() != tt.attempts {
				t.Errorf("Attempts = %d, server saw %d; want %d", res.Attempts, srv.CallCount(), tt.attempts)
			}
			if got := w.all(); !equalDurations(got, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", got, tt.wantWaits)
			}
		})
	}
}

// TestCompleteRetryAfterBeyondBackoffMax: a server that asks for a longer
// wait than the client will make is not asked again early (that only earns
// another 429): the call fails at once, saying how long the server wants.
func TestCompleteRetryAfterBeyondBackoffMax(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached").WithHeader("Retry-After", "120"),
		openaitest.JSON(validAnswer)))
	c, w := newTestClient(t, srv.URL, func(cfg *Config) { cfg.BackoffMax = 3 * time.Second })
	res := c.Complete(t.Context(), testRequest("go"))
	e := asError(t, res.Err)
	if e.Kind != KindRateLimit || e.RetryAfter != 120*time.Second || srv.CallCount() != 1 || len(w.all()) != 0 {
		t.Errorf("kind %v retry-after %v, %d calls, waits %v; want rate_limit, 2m0s, 1 call, no wait", e.Kind, e.RetryAfter, srv.CallCount(), w.all())
	}
	if !strings.Contains(e.Error(), "asks to wait 2m0s") {
		t.Errorf("Error() = %q, want the server's wait", e.Error())
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestCompleteFinalErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		reply    openaitest.Reply
		kind     ErrorKind
		sentinel error
		status   int
		inError  []string
	}{
		{"429 insufficient_quota", openaitest.Status(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota"),
			KindQuota, ErrQuota, 429, []string{"quota", "billing"}},
		{"401", openaitest.Status(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided"),
			KindAuth, ErrAuth, 401, []string{"401 unauthorized from", "check OPENAI_API_KEY"}},
		{"403", openaitest.Status(403, "invalid_request_error", "", "Project does not have access"),
			KindAuth, ErrAuth, 403, []string{"403 forbidden"}},
		{"400", openaitest.Status(400, "invalid_request_error", "", "Invalid schema for response_format"),
			KindBadRequest, ErrBadRequest, 400, []string{"400 bad request", "Invalid schema for response_format"}},
		{"422", openaitest.Status(422, "invalid_request_error", "", "unprocessable"),
			KindBadRequest, ErrBadRequest, 422, []string{"422"}},
		{"404", openaitest.Status(404, "invalid_request_error", "model_not_found", "The model `nope` does not exist"),
			KindNotFound, ErrNotFound, 404, []string{"404 not found", "check llm.model"}},
		{"refusal", openaitest.Refusal("I can't help with that."),
			KindRefusal, ErrRefusal, 0, []string{"model refused: I can't help with that."}},
		{"content filter", openaitest.Content("").WithFinishReason(openai.FinishReasonContentFilter),
			KindRefusal, ErrRefusal, 0, []string{"content filter"}},
		{"finish_reason length", openaitest.Truncated(`{"name": "Ada", "loc`),
			KindTruncated, ErrTruncated, 0, []string{"token limit", "max_tokens=256"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.New(t, openaitest.Sequence(tt.reply, openaitest.JSON(validAnswer)))
			c, w := newTestClient(t, srv.URL, nil)
			res := c.Complete(t.Context(), testRequest("go"))
			e := asError(t, res.Err)
			if e.Kind != tt.kind || !errors.Is(res.Err, tt.sentinel) || e.Transient() {
				t.Errorf("kind %v (transient %v), want final %v", e.Kind, e.Transient(), tt.kind)
			}
			if res.Attempts != 1 || e.Attempts != 1 || srv.CallCount() != 1 || len(w.all()) != 0 {
				t.Errorf("attempts %d/%d, server calls %d, waits %v; want exactly 1 attempt", res.Attempts, e.Attempts, srv.CallCount(), w.all())
			}
			if e.StatusCode != tt.status {
				t.Errorf("StatusCode = %d, want %d", e.StatusCode, tt.status)
			}
			for _, s := range tt.inError {
				if !strings.Contains(e.Error(), s) {
					t.Errorf("Error() = %q, want it to contain %q", e.Error(), s)
				}
			}
			if res.Output != nil {
				t.Errorf("Output = %s on failure", res.Output)
			}
		})
	}
}

func TestCompleteQuotaIsNotRateLimit(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Status(429, "insufficient_quota", "insufficient_quota", "quota")))
	c, _ := newTestClient(t, srv.URL, nil)
	err := c.Complete(t.Context(), testRequest("go")).Err
	if errors.Is(err, ErrRateLimit) || asError(t, err).Code != "insufficient_quota" {
		t.Errorf("err = %#v", err)
	}
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 {
		t.Errorf("cause = %v, want the *openai.APIError", errors.Unwrap(err))
	}
}

func TestCompleteTimeout(t *testing.T) {
	t.Parallel()
	t.Run("every attempt hangs", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.New(t, openaitest.Always(openaitest.Hang()))
		// Long enough for a loaded machine to deliver the request (the
		// server must count both attempts), short enough for a quick test.
		c, w := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond; cfg.MaxAttempts = 2 })
		res := c.Complete(t.Context(), testRequest("go"))
		e := asError(t, res.Err)
		if e.Kind != KindTimeout || !errors.Is(res.Err, ErrTimeout) || e.Attempts != 2 || srv.CallCount() != 2 {
			t.Errorf("kind %v attempts %d calls %d; want timeout after 2", e.Kind, e.Attempts, srv.CallCount())
		}
		if want := "timeout after 300ms waiting for " + srv.URL + " (2 attempts;"; !strings.HasPrefix(e.Error(), want) {
			t.Errorf("Error() = %q, want prefix %q", e.Error(), want)
		}
		if len(w.all()) != 1 {
			t.Errorf("waits = %v, want one", w.all())
		}
	})
	t.Run("hang then answer", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.New(t, openaitest.Sequence(openaitest.Hang(), openaitest.JSON(validAnswer)))
		c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Timeout = 300 * time.Millisecond })
		res := c.Complete(t.Context(), testRequest("go"))
		if res.Err != nil || res.Attempts != 2 {
			t.Errorf("Err = %v, Attempts = %d; want success on the 2nd attempt", res.Err, res.Attempts)
		}
	})
}

func TestCompleteConnectionRefused(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + l.Addr().String() + "/v1"
	l.Close()

	c, _ := newTestClient(t, url, nil)
	res := c.Complete(t.Context(), testRequest("go"))
	e := asError(t, res.Err)
	if e.Kind != KindConnection || !errors.Is(res.Err, ErrConnection) {
		t.Fatalf("kind = %v, want connection: %v", e.Kind, e)
	}
	want := "connection refused to " + url + " (2 attempts; is the model server running?)"
	if e.Error() != want {
		t.Errorf("Error() = %q\nwant      %q", e.Error(), want)
	}
}

func TestCompleteRepair(t *testing.T) {
	t.Parallel()
	wrong := openaitest.JSON(map[string]any{"name": "Ada", "location": "moon"})
	tests := []struct {
		name        string
		replies     []openaitest.Reply
		repairs     int // Config.RepairAttempts
		wantKind    ErrorKind
		wantCalls   int
		wantRepairs int
		inRepair    string // in the repair message of call 2
		badAnswer   string // sent back as the assistant message of call 2
	}{
		{name: "invalid JSON repaired", replies: []openaitest.Reply{openaitest.Content("Sure! Here it is: {name: Ada}"), openaitest.JSON(validAnswer)},
			repairs: 1, wantCalls: 2, wantRepairs: 1, inRepair: "answer is not valid JSON: invalid character 'S' looking for beginning of value (at byte 1)",
			badAnswer: "Sure! Here it is: {name: Ada}"},
		{name: "schema violation repaired", replies: []openaitest.Reply{wrong, openaitest.JSON(validAnswer)},
			repairs: 1, wantCalls: 2, wantRepairs: 1, inRepair: `/location: value must be one of 'common', 'garden'`,
			badAnswer: `{"location":"moon","name":"Ada"}`},
		{name: "schema violation twice", replies: []openaitest.Reply{wrong},
			repairs: 1, wantKind: KindSchema, wantCalls: 2, wantRepairs: 1, inRepair: "/location",
			badAnswer: `{"location":"moon","name":"Ada"}`},
		{name: "two repairs allowed", replies: []openaitest.Reply{wrong, openaitest.Content(""), openaitest.JSON(validAnswer)},
			repairs: 2, wantCalls: 3, wantRepairs: 2, inRepair: "/location",
			badAnswer: `{"location":"moon","name":"Ada"}`},
		{name: "no repair configured", replies: []openaitest.Reply{wrong, openaitest.JSON(validAnswer)},
			repairs: 0, wantKind: KindSchema, wantCalls: 1},
		{name: "code fence tolerated", replies: []openaitest.Reply{openaitest.Content("```json\n{\"name\":\"Ada\",\"location\":\"common\"}\n```")},
			repairs: 0, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.New(t, openaitest.Sequence(tt.replies...))
			c, w := newTestClient(t, srv.URL, func(cfg *Config) { cfg.RepairAttempts = tt.repairs })
			res := c.Complete(t.Context(), testRequest("go"))

			if tt.wantKind == KindUnknown && res.Err != nil {
				t.Fatalf("Err = %v", res.Err)
			}
			if tt.wantKind != KindUnknown {
				e := asError(t, res.Err)
				if e.Kind != tt.wantKind || e.Attempts != tt.wantCalls {
					t.Errorf("kind %v attempts %d; want %v %d", e.Kind, e.Attempts, tt.wantKind, tt.wantCalls)
				}
				if !strings.HasPrefix(e.Error(), "answer does not match schema IntentionResponse: /location: value must be one of") {
					t.Errorf("Error() = %q", e.Error())
				}
			}
			if srv.CallCount() != tt.wantCalls || res.Attempts != tt.wantCalls || res.Repairs != tt.wantRepairs {
				t.Errorf("calls %d attempts %d repairs %d; want %d %d %d", srv.CallCount(), res.Attempts, res.Repairs, tt.wantCalls, tt.wantCalls, tt.wantRepairs)
			}
			if len(w.all()) != 0 {
				t.Errorf("a repair waited %v", w.all())
			}
			wantUsage := Usage{120, 30, 64}
			for range tt.wantCalls - 1 {
				wantUsage = wantUsage.Add(Usage{120, 30, 64})
			}
			if res.Usage != wantUsage {
				t.Errorf("Usage = %+v, want %+v (summed over attempts)", res.Usage, wantUsage)
			}
			if tt.wantCalls >= 2 {
				checkRepairSent(t, srv, res, tt.badAnswer, tt.inRepair)
			}
		})
	}
}

// checkRepairSent checks the repair that the second call of srv asked
// for: the first call's messages, then the bad answer sent back as the
// assistant's and a user message asking for a corrected object that holds
// inRepair; and that res keeps the messages of the last call.
func checkRepairSent(t *testing.T, srv *openaitest.Server, res Result, badAnswer, inRepair string) {
	t.Helper()
	first, second := srv.Calls()[0].Messages(), srv.Calls()[1].Messages()
	if len(second) != len(first)+2 {
		t.Fatalf("repair sent %d messages after %d", len(second), len(first))
	}
	bad, fix := second[len(first)], second[len(first)+1]
	if bad.Role != "assistant" || bad.Content != badAnswer {
		t.Errorf("repair did not send back the bad answer: %+v", bad)
	}
	if fix.Role != "user" || !strings.Contains(fix.Content, inRepair) || !strings.Contains(fix.Content, "corrected JSON object") {
		t.Errorf("repair message = %q, want it to contain %q", fix.Content, inRepair)
	}
	if !equalMessages(res.Messages, fromWire(srv.Calls()[srv.CallCount()-1].Messages())) {
		t.Errorf("Result.Messages are not those of the last attempt")
	}
}

func fromWire(ms []openai.ChatCompletionMessage) []Message {
	out := make([]Message, len(ms))
	for i, m := range ms {
		out[i] = Message{Role: m.Role, Content: m.Content}
	}
	return out
}

func TestCompleteCanceled(t *testing.T) {
	t.Parallel()
	t.Run("while the server works", func(t *testing.T) {
		t.Parallel()
		arrived := make(chan struct{}, 1)
		srv := openaitest.New(t, func(*openaitest.Call) openaitest.Reply {
			arrived <- struct{}{}
			return openaitest.Hang()
		})
		c, w := newTestClient(t, srv.URL, nil)
		ctx, cancel := context.WithCancel(t.Context())
		go func() { <-arrived; cancel() }()
		res := c.Complete(ctx, testRequest("go"))
		e := asError(t, res.Err)
		if e.Kind != KindCanceled || !errors.Is(res.Err, ErrCanceled) || !errors.Is(res.Err, context.Canceled) {
			t.Errorf("err = %v (kind %v), want canceled", res.Err, e.Kind)
		}
		if res.Attempts != 1 || srv.CallCount() != 1 || len(w.all()) != 0 {
			t.Errorf("attempts %d, calls %d, waits %v; a canceled call is not retried", res.Attempts, srv.CallCount(), w.all())
		}
	})
	t.Run("while waiting to retry", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.New(t, openaitest.Always(openaitest.Status(500, "server_error", "", "boom")))
		c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.BackoffBase = time.Hour; cfg.BackoffMax = time.Hour })
		ctx, cancel := context.WithCancel(t.Context())
		c.wait = func(ctx context.Context, d time.Duration) error { cancel(); return sleep(ctx, d) }
		res := c.Complete(ctx, testRequest("go"))
		e := asError(t, res.Err)
		if e.Kind != KindCanceled || res.Attempts != 1 || !strings.Contains(e.Error(), "while waiting to retry after: 500") {
			t.Errorf("err = %q kind %v attempts %d", e, e.Kind, res.Attempts)
		}
	})
	t.Run("before the call", func(t *testing.T) {
		t.Parallel()
		srv := openaitest.New(t, nil)
		c, _ := newTestClient(t, srv.URL, nil)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		res := c.Complete(ctx, testRequest("go"))
		if ErrorKindOf(res.Err) != KindCanceled || srv.CallCount() != 0 || res.Attempts != 0 {
			t.Errorf("err = %v, calls = %d, attempts = %d", res.Err, srv.CallCount(), res.Attempts)
		}
	})
}

func TestCompleteBadRequestBeforeSending(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c, _ := newTestClient(t, srv.URL, nil)
	noModel := testRequest("go")
	noModel.Params.Model = ""
	badSchema := testRequest("go")
	badSchema.Schema = json.RawMessage(`{"type": 12}`)
	for req, want := range map[*Request]ErrorKind{&noModel: KindBadRequest, &badSchema: KindSchemaInvalid} {
		res := c.Complete(t.Context(), *req)
		if ErrorKindOf(res.Err) != want || res.Attempts != 0 {
			t.Errorf("err = %v, attempts = %d; want %s before sending", res.Err, res.Attempts, want)
		}
	}
	if !strings.Contains(c.Complete(t.Context(), noModel).Err.Error(), "set llm.model") {
		t.Error("missing model error does not say what to set")
	}
	if srv.CallCount() != 0 {
		t.Errorf("server saw %d calls", srv.CallCount())
	}
}

func TestModels(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil, openaitest.WithModels("llama3.2", "qwen3"), openaitest.WithAPIKey("sk-right"))

	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.APIKey = "sk-right" })
	ids, err := c.Models(t.Context())
	if err != nil || strings.Join(ids, ",") != "llama3.2,qwen3" {
		t.Errorf("Models = %v, %v", ids, err)
	}

	wrong, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.APIKey = "sk-wrong" })
	_, err = wrong.Models(t.Context())
	if !errors.Is(err, ErrAuth) || !strings.Contains(err.Error(), "check OPENAI_API_KEY") {
		t.Errorf("err = %v, want auth", err)
	}
}

// Seed 002: a transient error is retried once by default; a 429 rate limit
// is waited out as flow control, not counted as a retry, up to
// RateLimitWaits (8). Each retry and repair is reported with its outcome.
func TestCompleteRetriesOnceAndReportsRecoveries(t *testing.T) {
	t.Parallel()
	ok := openaitest.JSON(validAnswer)
	wait := openaitest.Status(429, "rate_limit_error", "", "slow down").WithHeader("Retry-After", "1")
	tests := []struct {
		name     string
		replies  []openaitest.Reply
		attempts int
		fail     bool
		want     []string // strategy:success of each recovery
	}{
		{"500 then ok", []openaitest.Reply{openaitest.Status(500, "server_error", "", "boom"), ok}, 2, false, []string{"retry:true"}},
		{"500 twice", []openaitest.Reply{openaitest.Status(500, "server_error", "", "boom")}, 2, true, []string{"retry:false"}},
		{"Retry-After three times then ok", []openaitest.Reply{wait, wait, wait, ok}, 4, false, nil},
		{"Retry-After past its bound", []openaitest.Reply{wait}, 10, true, []string{"retry:false"}},
		{"repair", []openaitest.Reply{openaitest.Content("not JSON"), ok}, 2, false, []string{"repair:true"}},
		{"repair fails", []openaitest.Reply{openaitest.Content("not JSON")}, 2, true, []string{"repair:false"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.New(t, openaitest.Sequence(tt.replies...))
			c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.BackoffMax = 2 * time.Second })
			if c.Config().MaxAttempts != 2 || c.Config().RateLimitWaits != 8 {
				t.Fatalf("defaults: max_attempts %d, rate_limit_waits %d; want 2 and 8", c.Config().MaxAttempts, c.Config().RateLimitWaits)
			}
			res := c.Complete(t.Context(), testRequest("go"))
			if (res.Err != nil) != tt.fail || res.Attempts != tt.attempts {
				t.Errorf("Err %v, attempts %d; want failure %v, %d attempts", res.Err, res.Attempts, tt.fail, tt.attempts)
			}
			var got []string
			for _, r := range res.Recoveries {
				if r.Err == nil {
					t.Errorf("recovery %+v has no error", r)
				}
				got = append(got, fmt.Sprintf("%s:%v", r.Strategy, r.Success))
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Errorf("recoveries = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestKeepLetsThePromptsGo: with a keeper, a finished call hands its
// messages to it and keeps what it returns instead of the prompts; the
// history still gets the exchange, by its record or by its user prompt.
func TestKeepLetsThePromptsGo(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c, _ := newTestClient(t, srv.URL, nil)
	var handed [][]Message
	var mu sync.Mutex
	ctx := WithKeep(t.Context(), func(msgs []Message) any {
		mu.Lock()
		defer mu.Unlock()
		handed = append(handed, msgs)
		return len(handed)
	})
	withRecord := testRequest("The whole room, everyone in it.")
	withRecord.Record = "Tick 6 in the hall."
	res := c.Complete(ctx, withRecord)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if res.Kept != 1 || res.Messages != nil || res.Request.System != "" || res.Request.User != "" || res.Request.Schema != nil {
		t.Errorf("kept %v, messages %v, system %q, user %q, schema %s: want the keeper's result and the prompts let go",
			res.Kept, res.Messages, res.Request.System, res.Request.User, res.Request.Schema)
	}
	if n := len(handed[0]); n != 2 || handed[0][0].Content != "You are Ada." || handed[0][1].Content != withRecord.User {
		t.Errorf("the keeper was handed %+v, want the messages sent", handed[0])
	}
	if ex, ok := res.Exchange(); !ok || ex.User != "Tick 6 in the hall." {
		t.Errorf("exchange %+v, %v; want the record", ex, ok)
	}

	plain := c.Complete(ctx, testRequest("u1"))
	if plain.Kept != 2 || plain.Request.User != "u1" {
		t.Errorf("kept %v, user %q: a request without a record keeps its user prompt, its history entry", plain.Kept, plain.Request.User)
	}
	if ex, ok := plain.Exchange(); !ok || ex.User != "u1" {
		t.Errorf("exchange %+v, %v; want the user prompt", ex, ok)
	}

	bad := testRequest("u2")
	bad.Params.Model = ""
	if failed := c.Complete(ctx, bad); failed.Err == nil || failed.Kept != nil {
		t.Errorf("a request refused before any message was built: err %v, kept %v", failed.Err, failed.Kept)
	}
	// Without a keeper in the context, the prompts stay.
	if res := c.Complete(t.Context(), withRecord); res.Kept != nil || res.Messages == nil || res.Request.System == "" {
		t.Errorf("a call with no keeper: kept %v, %d messages, system %q", res.Kept, len(res.Messages), res.Request.System)
	}
}
