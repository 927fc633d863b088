package llm

import (
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// refusingURL is a base URL nothing listens on: a port taken and freed.
func refusingURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/v1"
}

func endpointsClient(t *testing.T, mod func(*Config), eps ...Endpoint) *Client {
	t.Helper()
	c, _ := newTestClient(t, "", func(cfg *Config) {
		cfg.BaseURL = ""
		cfg.Endpoints = eps
		if mod != nil {
			mod(cfg)
		}
	})
	return c
}

func endpointStats(t *testing.T, c *Client, name string) EndpointStats {
	t.Helper()
	for _, es := range c.Stats().Endpoints {
		if es.Name == name {
			return es
		}
	}
	t.Fatalf("no endpoint %q in %+v", name, c.Stats().Endpoints)
	return EndpointStats{}
}

func TestEndpointsRouteByFreeCapacity(t *testing.T) {
	t.Parallel()
	slow := openaitest.JSON(validAnswer).WithDelay(30 * time.Millisecond)
	small := openaitest.New(t, openaitest.Always(slow))
	large := openaitest.New(t, openaitest.Always(slow))
	c := endpointsClient(t, nil,
		Endpoint{Name: "small", BaseURL: small.URL, Concurrency: 1},
		Endpoint{Name: "large", BaseURL: large.URL, Concurrency: 3, Model: "served-name"})
	if got := c.Workers(); got != 8 {
		t.Errorf("Workers() = %d, want 8 (twice the endpoints' summed concurrency)", got)
	}
	const n = 16
	res, err := c.CreateEach(t.Context(), n, func(int) (Request, error) { return testRequest("go"), nil })
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]int{}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("call %d: %v", i, r.Err)
		}
		by[r.Endpoint]++
	}
	if by["small"] != small.CallCount() || by["large"] != large.CallCount() || by["small"]+by["large"] != n {
		t.Errorf("results name %v, servers saw small %d large %d", by, small.CallCount(), large.CallCount())
	}
	if small.MaxInFlight() > 1 || large.MaxInFlight() > 3 {
		t.Errorf("in flight small %d large %d, limits 1 and 3", small.MaxInFlight(), large.MaxInFlight())
	}
	if small.CallCount() == 0 || large.CallCount() <= small.CallCount() {
		t.Errorf("small answered %d, large %d: the endpoint with more free slots should take more", small.CallCount(), large.CallCount())
	}
	if got := large.Calls()[0].Request.Model; got != "served-name" {
		t.Errorf("large was asked for model %q, want its own name served-name", got)
	}
	if got := small.Calls()[0].Request.Model; got != "test-model" {
		t.Errorf("small was asked for model %q, want the request's", got)
	}
	if st := endpointStats(t, c, "large"); st.Answered != int64(large.CallCount()) || st.Usage.Total() == 0 {
		t.Errorf("large stats %+v, server saw %d", st, large.CallCount())
	}
}

func TestPhaseEndpoints(t *testing.T) {
	t.Parallel()
	shared := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	own := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c := endpointsClient(t, func(cfg *Config) {
		cfg.PhaseEndpoints = map[string][]Endpoint{"resolution": {{BaseURL: own.URL}}}
	}, Endpoint{BaseURL: shared.URL})
	req := testRequest("x")
	if r := c.Complete(t.Context(), req); r.Err != nil || r.Endpoint != RedactURL(shared.URL) {
		t.Fatalf("intention: endpoint %q err %v", r.Endpoint, r.Err)
	}
	req.Phase = "resolution"
	if r := c.Complete(t.Context(), req); r.Err != nil || r.Endpoint != RedactURL(own.URL) {
		t.Fatalf("resolution: endpoint %q err %v", r.Endpoint, r.Err)
	}
	if shared.CallCount() != 1 || own.CallCount() != 1 {
		t.Errorf("shared saw %d, own %d; want 1 each", shared.CallCount(), own.CallCount())
	}
}

func TestEndpointRefusingConnectionsCostsNoFailure(t *testing.T) {
	t.Parallel()
	up := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c := endpointsClient(t, func(cfg *Config) { cfg.MaxAttempts = 1 },
		Endpoint{Name: "down", BaseURL: refusingURL(t), Concurrency: 4},
		Endpoint{Name: "up", BaseURL: up.URL, Concurrency: 4})
	const n = 12
	res, err := c.CreateEach(t.Context(), n, func(int) (Request, error) { return testRequest("go"), nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Err != nil {
			t.Fatalf("call %d failed although another endpoint answers: %v", i, r.Err)
		}
		if r.Endpoint != "up" {
			t.Errorf("call %d answered by %q", i, r.Endpoint)
		}
		if r.Attempts > 2 || len(r.Recoveries) != 0 {
			t.Errorf("call %d: %d attempts, recoveries %v: moving to another endpoint is one more attempt, no retry", i, r.Attempts, r.Recoveries)
		}
	}
	down := endpointStats(t, c, "down")
	if down.Failed < BreakerFailures || !down.Out {
		t.Errorf("down: %+v, want at least %d failures and taken out", down, BreakerFailures)
	}
	if down.Failed >= n {
		t.Errorf("down failed %d times for %d calls: the breaker should have kept calls away", down.Failed, n)
	}
	if up.CallCount() != n {
		t.Errorf("up answered %d, want %d", up.CallCount(), n)
	}
}

func TestEndpointsAllDownFailAsOne(t *testing.T) {
	t.Parallel()
	c := endpointsClient(t, func(cfg *Config) { cfg.MaxAttempts = 2 },
		Endpoint{Name: "a", BaseURL: refusingURL(t)}, Endpoint{Name: "b", BaseURL: refusingURL(t)})
	r := c.Complete(t.Context(), testRequest("go"))
	if e := asError(t, r.Err); e.Kind != KindConnection {
		t.Fatalf("kind %v, want connection", e.Kind)
	}
	if r.Attempts != 4 { // both endpoints per try, two tries
		t.Errorf("attempts %d, want 4", r.Attempts)
	}
}

func TestEndpointBreakerReadmits(t *testing.T) {
	t.Parallel()
	var healthy atomic.Bool
	flaky := openaitest.New(t, func(*openaitest.Call) openaitest.Reply {
		if healthy.Load() {
			return openaitest.JSON(validAnswer)
		}
		return openaitest.Status(502, "server_error", "", "bad gateway")
	})
	steady := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	const cooldown = 80 * time.Millisecond
	c := endpointsClient(t, func(cfg *Config) { cfg.MaxAttempts = 1; cfg.BreakerCooldown = cooldown },
		Endpoint{Name: "flaky", BaseURL: flaky.URL, Concurrency: 1},
		Endpoint{Name: "steady", BaseURL: steady.URL, Concurrency: 1})
	call := func() Result {
		t.Helper()
		r := c.Complete(t.Context(), testRequest("go"))
		if r.Err != nil {
			t.Fatalf("call failed: %v", r.Err)
		}
		return r
	}
	for range BreakerFailures + 2 {
		if r := call(); r.Endpoint != "steady" {
			t.Fatalf("answered by %q while flaky fails", r.Endpoint)
		}
	}
	if got := flaky.CallCount(); got != BreakerFailures {
		t.Fatalf("flaky was sent %d calls, want %d before the breaker took it out", got, BreakerFailures)
	}
	if !endpointStats(t, c, "flaky").Out {
		t.Fatal("flaky not out after failing")
	}
	healthy.Store(true)
	time.Sleep(cooldown + 20*time.Millisecond)
	if r := call(); r.Endpoint != "flaky" {
		t.Fatalf("after its cooldown the probe went to %q, want flaky", r.Endpoint)
	}
	if st := endpointStats(t, c, "flaky"); st.Out || st.Answered != 1 {
		t.Errorf("flaky after a good probe: %+v", st)
	}
}

func TestBreaker(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(0, 0)
	b := breaker{cooldown: time.Second, base: time.Second}
	for i := range BreakerFailures {
		if opened := b.done(t0, false, true); opened != (i == BreakerFailures-1) {
			t.Fatalf("failure %d: opened %v", i+1, opened)
		}
	}
	if b.usable(t0.Add(999 * time.Millisecond)) {
		t.Fatal("usable during its cooldown")
	}
	at := t0.Add(time.Second)
	if !b.usable(at) {
		t.Fatal("not usable after its cooldown")
	}
	b.take(at)
	if b.usable(at) {
		t.Fatal("a second call went to an endpoint being probed")
	}
	if !b.done(at, false, true) || b.usable(at.Add(1999*time.Millisecond)) || !b.usable(at.Add(2*time.Second)) {
		t.Fatal("a failed probe should take it out for twice the cooldown")
	}
	b.take(at.Add(2 * time.Second))
	b.done(at.Add(2*time.Second), true, false)
	if !b.usable(at.Add(2*time.Second)) || b.cooldown != time.Second {
		t.Fatal("a good probe should bring it back with the first cooldown")
	}
}

// A chat turn and a tool turn say which endpoint answered them, as a
// structured call does, and a phase's own endpoints answer its chat.
func TestChatAndToolResultsNameTheirEndpoint(t *testing.T) {
	t.Parallel()
	shared := openaitest.New(t, openaitest.Always(openaitest.Content("hello")))
	own := openaitest.New(t, openaitest.Always(openaitest.Content("hello")))
	c := endpointsClient(t, func(cfg *Config) {
		cfg.PhaseEndpoints = map[string][]Endpoint{"chat": {{Name: "chat-gpu", BaseURL: own.URL}}}
	}, Endpoint{Name: "shared", BaseURL: shared.URL})
	msgs := []Message{{Role: "user", Content: "go"}}
	if r := c.Chat(t.Context(), ChatRequest{EntityKey: "chronicle:x", Phase: "chat", Params: Params{Model: "m"}, Messages: msgs}); r.Err != nil || r.Endpoint != "chat-gpu" {
		t.Errorf("chat: endpoint %q err %v, want chat-gpu", r.Endpoint, r.Err)
	}
	if r := c.Chat(t.Context(), ChatRequest{EntityKey: "chronicle:x", Params: Params{Model: "m"}, Messages: msgs}); r.Err != nil || r.Endpoint != "shared" {
		t.Errorf("chat of no phase: endpoint %q err %v, want shared", r.Endpoint, r.Err)
	}
	r := c.CompleteTools(t.Context(), ToolRequest{EntityKey: "conquest:red", Phase: "orders", Params: Params{Model: "m"}, Messages: msgs, Tools: ordersTools})
	if r.Err != nil || r.Endpoint != "shared" {
		t.Errorf("tools: endpoint %q err %v, want shared", r.Endpoint, r.Err)
	}
	if own.CallCount() != 1 || shared.CallCount() != 2 {
		t.Errorf("own saw %d, shared %d; want 1 and 2", own.CallCount(), shared.CallCount())
	}
	down := endpointsClient(t, nil, Endpoint{Name: "down", BaseURL: refusingURL(t)})
	if r := down.Chat(t.Context(), ChatRequest{Params: Params{Model: "m"}, Messages: msgs}); r.Err == nil || r.Endpoint != "down" {
		t.Errorf("a chat the endpoint failed: endpoint %q err %v, want the failing one named", r.Endpoint, r.Err)
	}
}

// An endpoint answering 200 with something that is not an OpenAI-compatible
// response (HTML, a broken body, JSON of another shape, a chat completion
// without choices) fails the attempt as an endpoint failure: the call goes
// to the healthy endpoint at once, costing no try and no fallback, the
// breaker takes the bad one out, and each result names the endpoint that
// failed it.
func TestGarbage200EndpointTakenOut(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		reply openaitest.Reply
	}{
		{"html", openaitest.Raw(200, "text/html", "<html><body>It works!</body></html>")},
		{"broken JSON", openaitest.Raw(200, "application/json", `{"choices": [}`)},
		{"another shape", openaitest.Raw(200, "application/json", `[1, 2, 3]`)},
		{"no choices", openaitest.Raw(200, "application/json", `{"id": "x", "object": "chat.completion", "choices": []}`)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			garbage := openaitest.New(t, openaitest.Always(tt.reply))
			healthy := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer).WithDelay(5*time.Millisecond)))
			// garbage has the more free slots: every call would go there first.
			c := endpointsClient(t, func(cfg *Config) { cfg.MaxAttempts = 1 },
				Endpoint{Name: "garbage", BaseURL: garbage.URL, Concurrency: 8},
				Endpoint{Name: "healthy", BaseURL: healthy.URL, Concurrency: 2})
			const n = 24
			res, err := c.CreateEach(t.Context(), n, func(int) (Request, error) { return testRequest("go"), nil })
			if err != nil {
				t.Fatal(err)
			}
			failures := 0
			for i, r := range res {
				if r.Err != nil || r.Endpoint != "healthy" || r.Repairs != 0 || len(r.Recoveries) != 0 {
					t.Errorf("call %d: endpoint %q, %d repairs, recoveries %v, err %v: want answered by healthy at once", i, r.Endpoint, r.Repairs, r.Recoveries, r.Err)
				}
				for _, name := range r.EndpointFailures {
					if name != "garbage" {
						t.Errorf("call %d: endpoint failures %v", i, r.EndpointFailures)
					}
				}
				failures += len(r.EndpointFailures)
			}
			st := endpointStats(t, c, "garbage")
			if !st.Out || st.Failed < BreakerFailures || st.Failed >= n || st.Answered != 0 {
				t.Errorf("garbage: %+v, want taken out after %d failures, well before %d calls", st, BreakerFailures, n)
			}
			if int64(failures) != st.Failed || garbage.CallCount() != failures {
				t.Errorf("results name %d endpoint failures, the endpoint counted %d, the server saw %d calls", failures, st.Failed, garbage.CallCount())
			}
		})
	}
}

// A repair goes to another endpoint than the one whose answer it repairs
// while one is in: an endpoint that keeps writing broken answers (a broken
// model behind a fast server, which always has free slots) is not asked
// to mend its own.
func TestRepairPrefersAnotherEndpoint(t *testing.T) {
	t.Parallel()
	broken := openaitest.New(t, openaitest.Always(openaitest.Content("I think {the answer")))
	good := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer)))
	c := endpointsClient(t, func(cfg *Config) { cfg.RepairAttempts = 1 },
		Endpoint{Name: "broken", BaseURL: broken.URL, Concurrency: 8},
		Endpoint{Name: "good", BaseURL: good.URL, Concurrency: 1})
	r := c.Complete(t.Context(), testRequest("go"))
	if r.Err != nil || r.Repairs != 1 || r.Endpoint != "good" {
		t.Fatalf("endpoint %q, %d repairs, err %v: want broken's answer repaired by good", r.Endpoint, r.Repairs, r.Err)
	}
	if broken.CallCount() != 1 || good.CallCount() != 1 {
		t.Errorf("broken saw %d calls, good %d: want 1 each", broken.CallCount(), good.CallCount())
	}
	if len(r.EndpointFailures) != 0 {
		t.Errorf("endpoint failures %v: a model's broken answer is the model's, not the endpoint's", r.EndpointFailures)
	}
	// With the other out, the repair goes back to the only endpoint in.
	alone := endpointsClient(t, func(cfg *Config) { cfg.RepairAttempts = 1 },
		Endpoint{Name: "broken", BaseURL: broken.URL}, Endpoint{Name: "down", BaseURL: refusingURL(t)})
	for _, ep := range alone.pool {
		if ep.name == "down" {
			ep.brk.until = time.Now().Add(time.Hour)
		}
	}
	if r := alone.Complete(t.Context(), testRequest("go")); r.Repairs != 1 || r.Endpoint != "broken" || len(r.EndpointFailures) != 0 {
		t.Errorf("endpoint %q, %d repairs, endpoint failures %v: want the repair asked of broken, the one in", r.Endpoint, r.Repairs, r.EndpointFailures)
	}
}
