package llm

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

var epoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// sent is one request as a windowed server counts it.
type sent struct {
	at   time.Time
	cost int
}

// busiestMinute returns the most requests and the most tokens any 60 s
// window [t, t+60s) holds, as a server counting over a sliding minute sees
// them.
func busiestMinute(reqs []sent) (requests, tokens int) {
	for i := range reqs {
		n, sum := 0, 0
		for _, r := range reqs {
			if !r.at.Before(reqs[i].at) && r.at.Before(reqs[i].at.Add(time.Minute)) {
				n++
				sum += r.cost
			}
		}
		requests, tokens = max(requests, n), max(tokens, sum)
	}
	return requests, tokens
}

// TestPacerKeepsEveryMinuteUnderTheLimits books requests on a fake clock,
// arriving all at once, in bursts or at random, and checks what a server
// counting any 60 s window would count: never above the limit, and over
// the run at least 90 % of it when the client has that much to send.
func TestPacerKeepsEveryMinuteUnderTheLimits(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		rpm, tpm int
		cost     func(r *rand.Rand) int
		arrive   func(i int, r *rand.Rand) time.Duration // after epoch
		n        int
		binding  string // "rpm" or "tpm": the limit the throughput is checked against
	}{
		{"rpm, all at once", 600, 0, fixedCost(100), allAtOnce, 2000, "rpm"},
		{"rpm 10, all at once", 10, 0, fixedCost(100), allAtOnce, 60, "rpm"},
		{"rpm 1", 1, 0, fixedCost(100), allAtOnce, 5, "rpm"},
		{"rpm, bursts of 50 every 3 s", 600, 0, fixedCost(100), func(i int, _ *rand.Rand) time.Duration { return time.Duration(i/50) * 3 * time.Second }, 2000, "rpm"},
		{"tpm, all at once", 0, 100_000, fixedCost(900), allAtOnce, 600, "tpm"},
		{"tpm, random sizes and arrivals", 0, 200_000, randomCost(200, 5000), randomArrival(10 * time.Minute), 2000, ""},
		{"rpm binding under both", 100, 1_000_000, fixedCost(1000), allAtOnce, 500, "rpm"},
		{"tpm binding under both", 6000, 150_000, fixedCost(3000), allAtOnce, 500, "tpm"},
		{"both, random", 300, 60_000, randomCost(100, 1500), randomArrival(5 * time.Minute), 1500, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(1, 2))
			p := newPacer(tt.rpm, tt.tpm)
			arrivals := make([]sent, tt.n)
			for i := range arrivals {
				arrivals[i] = sent{epoch.Add(tt.arrive(i, r)), tt.cost(r)}
			}
			// book in arrival order, as callers would reach the pacer
			sortSent(arrivals)
			var reqs []sent
			for _, a := range arrivals {
				b := p.book(a.at, a.cost)
				if b.at.Before(a.at) {
					t.Fatalf("booked %s, before the request arrived at %s", b.at, a.at)
				}
				if len(reqs) > 0 && b.at.Before(reqs[len(reqs)-1].at) {
					t.Fatalf("booked %s before the previous booking %s: not first come, first served", b.at, reqs[len(reqs)-1].at)
				}
				reqs = append(reqs, sent{b.at, a.cost})
			}
			requests, tokens := busiestMinute(reqs)
			if tt.rpm > 0 && requests > tt.rpm {
				t.Errorf("a minute holds %d requests, limit %d", requests, tt.rpm)
			}
			if tt.tpm > 0 && tokens > tt.tpm {
				t.Errorf("a minute holds %d tokens, limit %d", tokens, tt.tpm)
			}
			span := reqs[len(reqs)-1].at.Sub(reqs[0].at).Minutes()
			switch tt.binding {
			case "rpm":
				if rate := float64(len(reqs)-1) / span; rate < 0.9*float64(tt.rpm) {
					t.Errorf("%.1f requests per minute, want at least 90 %% of %d", rate, tt.rpm)
				}
			case "tpm":
				total := 0
				for _, q := range reqs[1:] {
					total += q.cost
				}
				if rate := float64(total) / span; rate < 0.9*float64(tt.tpm) {
					t.Errorf("%.0f tokens per minute, want at least 90 %% of %d", rate, tt.tpm)
				}
			}
		})
	}
}

func fixedCost(n int) func(*rand.Rand) int { return func(*rand.Rand) int { return n } }

func randomCost(lo, hi int) func(*rand.Rand) int {
	return func(r *rand.Rand) int { return lo + r.IntN(hi-lo) }
}

func allAtOnce(int, *rand.Rand) time.Duration { return 0 }

func randomArrival(within time.Duration) func(int, *rand.Rand) time.Duration {
	return func(_ int, r *rand.Rand) time.Duration { return time.Duration(r.Int64N(int64(within))) }
}

func sortSent(s []sent) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].at.Before(s[j-1].at); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// TestPacerSchedule: requests are spaced evenly at 97 % of the limit, an
// idle pacer sends at once, a request larger than the token bucket waits
// for its whole estimate rather than being charged less, and a booking
// given back frees its place only when nothing was booked after it.
func TestPacerSchedule(t *testing.T) {
	t.Parallel()
	if newPacer(0, 0) != nil {
		t.Error("a pacer without limits, want nil")
	}
	var none *pacer
	if err := none.wait(t.Context(), time.Now(), 1000); err != nil || none.countsTokens() {
		t.Errorf("nil pacer: wait %v, counts tokens %v", err, none.countsTokens())
	}

	p := newPacer(60, 0) // 58.2 requests a minute: one every 1.0309 s
	share := paceShare
	interval := time.Duration(float64(time.Second) / share)
	for i := range 4 {
		if b := p.book(epoch, 10); !near(b.at, epoch.Add(time.Duration(i)*interval)) {
			t.Errorf("request %d at +%s, want +%s", i, b.at.Sub(epoch), time.Duration(i)*interval)
		}
	}
	if p.countsTokens() {
		t.Error("an rpm pacer asks for token estimates")
	}
	later := epoch.Add(time.Hour)
	if b := p.book(later, 10); b.at != later {
		t.Errorf("after an idle hour: +%s, want at once", b.at.Sub(later))
	}

	// tpm 6000: 97 a second, a bucket of 180.
	p = newPacer(0, 6000)
	if !p.countsTokens() {
		t.Error("a tpm pacer does not ask for token estimates")
	}
	if b := p.book(epoch, 180); !near(b.at, epoch) {
		t.Errorf("a full bucket's worth waits %s", b.at.Sub(epoch))
	}
	// 970 tokens: the bucket is empty, so it waits 10 s for all of them,
	// not 180/97 s for a charge clamped to the bucket.
	if b := p.book(epoch, 970); !near(b.at, epoch.Add(10*time.Second)) {
		t.Errorf("a request of 970 tokens at +%s, want +10s", b.at.Sub(epoch))
	}
	// Given back: the next request takes its place.
	big := p.book(epoch, 970)
	p.cancel(big)
	if b := p.book(epoch, 970); !near(b.at, big.at) {
		t.Errorf("after a booking was given back: +%s, want its place +%s", b.at.Sub(epoch), big.at.Sub(epoch))
	}
	// Not given back once another booking stands on it.
	mid := p.book(epoch, 97)
	last := p.book(epoch, 97)
	p.cancel(mid)
	if b := p.book(epoch, 97); !near(b.at, last.at.Add(time.Second)) {
		t.Errorf("a booking under a later one was given back: next at +%s, want +%s", b.at.Sub(epoch), last.at.Add(time.Second).Sub(epoch))
	}
}

// TestPacerWaitRespectsContext: a send time past the deadline fails at once
// and gives the place back; a wait cut short by ctx returns ctx's error and
// gives it back too.
func TestPacerWaitRespectsContext(t *testing.T) {
	t.Parallel()
	p := newPacer(1, 0) // one request every 61.9 s
	if err := p.wait(t.Context(), time.Now(), 1); err != nil {
		t.Fatalf("first request: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	start := time.Now()
	if err := p.wait(ctx, time.Now(), 1); !errors.Is(err, errPastDeadline) {
		t.Errorf("wait past the deadline = %v, want errPastDeadline", err)
	}
	if time.Since(start) > 500*time.Millisecond {
		t.Errorf("a wait that cannot make the deadline took %s, want an immediate failure", time.Since(start))
	}
	if p.seq != 1 {
		t.Errorf("a wait past the deadline kept its booking (%d bookings, want 1)", p.seq)
	}

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	before := p.seq
	if err := p.wait(ctx, time.Now(), 1); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled wait = %v, want context.Canceled", err)
	}
	if p.seq != before {
		t.Errorf("a canceled wait kept its booking (%d bookings, want %d)", p.seq, before)
	}
}

func TestEstimateTokens(t *testing.T) {
	t.Parallel()
	schema := `{"type":"object"}` // 17 bytes
	tests := []struct {
		name string
		cr   openai.ChatCompletionRequest
		want int
	}{
		{"empty", openai.ChatCompletionRequest{}, 0},
		{"messages and max_tokens", openai.ChatCompletionRequest{MaxTokens: 100, Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: strings.Repeat("s", 34)}, // 6+34
			{Role: "user", Content: strings.Repeat("u", 36)},   // 4+36
		}}, 20 + 100},
		{"max_completion_tokens", openai.ChatCompletionRequest{MaxCompletionTokens: 50, Messages: []openai.ChatCompletionMessage{
			{Role: "user", Content: "abcd"}}}, 2 + 50},
		{"the answer's schema", openai.ChatCompletionRequest{Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "abc"}},
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "X", Schema: rawSchema(schema)}}}, (7 + 17 + 3) / 4},
		{"tools and tool calls", openai.ChatCompletionRequest{
			Messages: []openai.ChatCompletionMessage{{Role: "assistant", ToolCalls: []openai.ToolCall{
				{Function: openai.FunctionCall{Name: "move", Arguments: `{"to":"x"}`}}}}}, // 9+4+10
			Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: "move", Description: "go", Parameters: rawSchema(schema)}}, {Type: openai.ToolTypeFunction}}, // 4+2+17
		}, (23 + 23 + 3) / 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := estimateTokens(tt.cr); got != tt.want {
				t.Errorf("estimateTokens = %d, want %d", got, tt.want)
			}
		})
	}
}

// near reports whether two times are within a microsecond: the schedule
// is computed in floating point.
func near(a, b time.Time) bool { return a.Sub(b).Abs() < time.Microsecond }

type rawSchema string

func (s rawSchema) MarshalJSON() ([]byte, error) { return []byte(s), nil }

// windowServer answers 429 rate_limit_exceeded (no Retry-After) to a
// request that would be the (limit+1)th to arrive within window, as a
// server counting requests over a sliding window does; it counts its 429s.
type windowServer struct {
	limit  int
	window time.Duration

	mu       sync.Mutex
	arrivals []time.Time
	limited  int
}

func (w *windowServer) handle(ok openaitest.Reply) openaitest.Handler {
	return func(*openaitest.Call) openaitest.Reply {
		w.mu.Lock()
		defer w.mu.Unlock()
		now := time.Now()
		n := 0
		for _, a := range w.arrivals {
			if now.Sub(a) < w.window {
				n++
			}
		}
		if n >= w.limit {
			w.limited++
			return openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached for requests")
		}
		w.arrivals = append(w.arrivals, now)
		return ok
	}
}

func (w *windowServer) rateLimited() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.limited
}

// TestRPMGetsNo429: a server that answers 429 above 20 requests in any 2 s
// (600 a minute) sees none from a client with llm.rpm 600, however many
// calls it has in flight, and the calls take at least the time the limit
// allows them (29 gaps of 1/9.7 s).
func TestRPMGetsNo429(t *testing.T) {
	t.Parallel()
	// The server allows 600 rpm; the client paces at 480, the headroom a
	// loaded machine needs between a request's release and its arrival.
	// Without pacing, 30 calls at concurrency 8 arrive at once: 10 429s.
	ws := &windowServer{limit: 20, window: 2 * time.Second}
	srv := openaitest.New(t, ws.handle(openaitest.JSON(validAnswer)))
	c := newLiveClient(t, srv.URL, func(cfg *Config) { cfg.RPM, cfg.Concurrency = 480, 8 })
	start := time.Now()
	results, err := c.CreateEach(t.Context(), 30, func(i int) (Request, error) { return testRequest("go"), nil })
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	for i, r := range results {
		if r.Err != nil {
			t.Errorf("call %d: %v", i, r.Err)
		}
	}
	if ws.rateLimited() != 0 || c.Stats().RateLimited != 0 || srv.CallCount() != 30 {
		t.Errorf("server answered %d 429s, client counted %d, %d requests; want none and 30", ws.rateLimited(), c.Stats().RateLimited, srv.CallCount())
	}
	if least := 29 * newPacer(480, 0).interval; took < least {
		t.Errorf("30 calls at 480 rpm took %s, less than the %s the pacing allows", took, least)
	}
}

// TestTPMPacesCalls: with llm.tpm, each call is charged its estimate before
// it is sent, so calls go out no faster than the token limit allows.
func TestTPMPacesCalls(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	const tpm = 60_000 // 970 tokens a second, a bucket of 1,800
	c := newLiveClient(t, srv.URL, func(cfg *Config) { cfg.TPM, cfg.Concurrency = tpm, 4 })
	req := testRequest("go")
	req.Params.MaxTokens = 1000
	results, err := c.CreateEach(t.Context(), 1, func(int) (Request, error) { return req, nil })
	if err != nil || results[0].Err != nil {
		t.Fatal(err, results[0].Err)
	}
	cost := estimateTokens(srv.Calls()[0].Request)
	if cost < 1000 || cost > 1200 {
		t.Fatalf("estimate of the request %d tokens, want max_tokens 1000 plus its text", cost)
	}
	start := time.Now()
	const n = 3
	results, err = c.CreateEach(t.Context(), n, func(int) (Request, error) { return req, nil })
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	for i, r := range results {
		if r.Err != nil {
			t.Errorf("call %d: %v", i, r.Err)
		}
	}
	// The first call emptied most of the bucket; n more need n·cost tokens
	// less what was left (at most the bucket, 1,800).
	least := time.Duration(float64(n*cost-1800) / (0.97 * tpm / 60) * float64(time.Second))
	if took < least {
		t.Errorf("%d calls of %d tokens at %d tpm took %s, less than the %s the limit allows", n, cost, tpm, took, least)
	}
}

// TestPacerWaitFailsTheCall: a call whose turn at llm.rpm would come after
// its deadline fails at once without being sent, with the rate limit's own
// message; one canceled while it waits is canceled, not sent.
func TestPacerWaitFailsTheCall(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c := newLiveClient(t, srv.URL, func(cfg *Config) { cfg.RPM = 1 })
	if res := c.Complete(t.Context(), testRequest("go")); res.Err != nil {
		t.Fatal(res.Err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	res := c.Complete(ctx, testRequest("go"))
	e := asError(t, res.Err)
	if e.Kind != KindTimeout || res.Attempts != 0 || !strings.Contains(e.Error(), "would pass waiting for the client's rate limit") ||
		!strings.Contains(e.Hint, "llm.rpm") {
		t.Errorf("err = %v (kind %v, attempts %d); want a timeout at the rate limit naming llm.rpm, before sending", e, e.Kind, res.Attempts)
	}

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(50*time.Millisecond, cancel)
	res = c.Complete(ctx, testRequest("go"))
	if ErrorKindOf(res.Err) != KindCanceled || res.Attempts != 0 {
		t.Errorf("err = %v, attempts %d; want canceled before sending", res.Err, res.Attempts)
	}
	if srv.CallCount() != 1 {
		t.Errorf("server saw %d calls, want only the first", srv.CallCount())
	}
}

// newLiveClient returns a client for url that really waits, with a backoff
// without jitter (its ceiling), so that tests of pacing and flow control
// are not at the mercy of random short waits.
func newLiveClient(t *testing.T, url string, mod func(*Config)) *Client {
	t.Helper()
	cfg := DefaultConfig()
	cfg.BaseURL = url
	cfg.Timeout = 10 * time.Second
	cfg.BackoffBase = 100 * time.Millisecond
	cfg.BackoffMax = time.Second
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c.jitter = func(ceil time.Duration) time.Duration { return ceil }
	return c
}
