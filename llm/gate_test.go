package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// logBuffer collects log lines from concurrent goroutines.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuffer) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(l, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func mustAcquire(t *testing.T, g *gate) slot {
	t.Helper()
	s, err := g.acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestGateHalvesOncePerEpisode: the 429s of attempts sent under the same
// limit halve it once; a 429 of an attempt sent under the halved limit
// halves it again; the limit never goes below 1; other failures change
// nothing.
func TestGateHalvesOncePerEpisode(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	g := newGate(8, logs.logger())
	var first []slot
	for range 8 {
		first = append(first, mustAcquire(t, g))
	}
	for _, s := range first {
		g.release(s, endRateLimited)
	}
	if limit, lowest := g.state(); limit != 4 || lowest != 4 {
		t.Fatalf("after 8 429s of one episode: limit %d, lowest %d; want 4, 4", limit, lowest)
	}
	g.release(mustAcquire(t, g), endOther) // a 500 or a timeout says nothing about the rate
	if limit, _ := g.state(); limit != 4 {
		t.Fatalf("after another failure: limit %d, want 4", limit)
	}
	for _, want := range []int{2, 1, 1} {
		g.release(mustAcquire(t, g), endRateLimited)
		if limit, lowest := g.state(); limit != want || lowest != want {
			t.Errorf("after a 429 under the new limit: limit %d lowest %d, want %d", limit, lowest, want)
		}
	}
	if got := strings.Count(logs.String(), "rate limited: concurrency"); got != 3 {
		t.Errorf("%d halvings logged, want 3 (8 -> 4 -> 2 -> 1):\n%s", got, logs.String())
	}
	for _, line := range []string{"rate limited: concurrency 8 -> 4", "rate limited: concurrency 4 -> 2", "rate limited: concurrency 2 -> 1"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, logs.String())
		}
	}
}

// TestGateRecovers: a limit's worth of successes admitted under the current
// limit adds one, up to the configured concurrency and no further;
// successes of attempts admitted under an earlier limit do not count.
func TestGateRecovers(t *testing.T) {
	t.Parallel()
	var logs logBuffer
	g := newGate(4, logs.logger())
	old := mustAcquire(t, g)
	g.release(mustAcquire(t, g), endRateLimited) // 4 -> 2
	g.release(mustAcquire(t, g), endRateLimited) // 2 -> 1
	g.release(old, endOK)                        // admitted under 4: counts for nothing
	if limit, _ := g.state(); limit != 1 {
		t.Fatalf("limit %d after an old success, want 1", limit)
	}
	for _, want := range []struct{ successes, limit int }{{1, 2}, {2, 3}, {3, 4}, {4, 4}, {40, 4}} {
		for range want.successes {
			g.release(mustAcquire(t, g), endOK)
		}
		if limit, lowest := g.state(); limit != want.limit || lowest != 1 {
			t.Errorf("after %d more successes: limit %d lowest %d, want %d, 1", want.successes, limit, lowest, want.limit)
		}
	}
	for _, line := range []string{"recovered: concurrency 2", "recovered: concurrency 3", "recovered: concurrency 4"} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("log lacks %q:\n%s", line, logs.String())
		}
	}
	if strings.Contains(logs.String(), "recovered: concurrency 5") {
		t.Errorf("grew past the configured concurrency:\n%s", logs.String())
	}
}

// TestGateFIFO: freed slots go to waiters in the order they came, and no
// more are in flight than the limit.
func TestGateFIFO(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testGateFIFO)
}

func testGateFIFO(t *testing.T) {
	g := newGate(1, slog.New(slog.DiscardHandler))
	held := mustAcquire(t, g)
	var (
		mu    sync.Mutex
		order []int
		wg    sync.WaitGroup
	)
	for i := range 5 {
		wg.Go(func() {
			s, err := g.acquire(t.Context())
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			g.release(s, endOK)
		})
		synctest.Wait() // waiter i is queued, or will never be
		if n := waiters(g); n != i+1 {
			t.Fatalf("%d waiters once waiter %d waits, want %d", n, i, i+1)
		}
	}
	g.release(held, endOK)
	wg.Wait()
	if got := fmt.Sprint(order); got != "[0 1 2 3 4]" {
		t.Errorf("slots given in order %s, want [0 1 2 3 4]", got)
	}
}

// TestGateWaitEndsWithContext: a waiter whose ctx ends gets ctx's error and
// leaves the queue; one handed a slot as its ctx ended passes the slot on,
// so no slot is ever lost.
func TestGateWaitEndsWithContext(t *testing.T) {
	t.Parallel()
	synctest.Test(t, testGateWaitEndsWithContext)
}

func testGateWaitEndsWithContext(t *testing.T) {
	g := newGate(1, slog.New(slog.DiscardHandler))
	held := mustAcquire(t, g)
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	if _, err := g.acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("acquire = %v, want the deadline", err)
	}
	if waiting := waiters(g); waiting != 0 {
		t.Errorf("%d waiters left after the wait ended, want 0", waiting)
	}
	g.release(held, endOK)

	// Race cancellation against the hand-over many times: whichever wins,
	// the slot comes back.
	for range 200 {
		held := mustAcquire(t, g)
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error)
		go func() {
			s, err := g.acquire(ctx)
			if err == nil {
				g.release(s, endOK)
			}
			done <- err
		}()
		synctest.Wait() // it waits for the slot
		if n := waiters(g); n != 1 {
			t.Fatalf("%d waiters, want the one", n)
		}
		go cancel()
		g.release(held, endOK)
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire = %v", err)
		}
		g.mu.Lock()
		inFlight, waiting := g.inFlight, len(g.waiters)
		g.mu.Unlock()
		if inFlight != 0 || waiting != 0 {
			t.Fatalf("after a canceled wait: %d in flight, %d waiting; want 0, 0", inFlight, waiting)
		}
	}
}

// waiters is how many wait at g.
func waiters(g *gate) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.waiters)
}

// TestAdaptiveConcurrencyAbsorbs429: a server that answers 429 without
// Retry-After to the 8 calls of a first wave: the client halves its
// concurrency once (one episode), waits the 429s out without a failure or
// a retry counted, and grows back to llm.concurrency.
func TestAdaptiveConcurrencyAbsorbs429(t *testing.T) {
	t.Parallel()
	var arrived atomic.Int64
	srv := openaitest.New(t, func(*openaitest.Call) openaitest.Reply {
		if arrived.Add(1) <= 8 { // the first wave, all in flight together
			return openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached").WithDelay(100 * time.Millisecond)
		}
		return openaitest.JSON(validAnswer).WithDelay(2 * time.Millisecond)
	})
	var logs logBuffer
	c := newLiveClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency, cfg.Logger = 8, logs.logger() })
	results, err := c.CreateEach(t.Context(), 80, func(int) (Request, error) { return testRequest("go"), nil })
	if err != nil {
		t.Fatal(err)
	}
	retried := 0
	for i, r := range results {
		if r.Err != nil {
			t.Errorf("call %d failed: %v", i, r.Err)
		}
		retried += len(r.Recoveries)
	}
	if retried != 0 {
		t.Errorf("%d retries counted, want none: a 429 is flow control", retried)
	}
	st := c.Stats()
	if st.RateLimited != 8 || st.LowestConcurrency != 4 || st.Concurrency != 8 {
		t.Errorf("stats %+v; want 8 429s, lowest concurrency 4, back to 8", st)
	}
	if n := strings.Count(logs.String(), "rate limited: concurrency 8 -> 4"); n != 1 || strings.Contains(logs.String(), "-> 2") {
		t.Errorf("halvings logged: want 8 -> 4 once:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "recovered: concurrency 8") {
		t.Errorf("no recovery to 8 logged:\n%s", logs.String())
	}
}

// TestAdaptiveConcurrencyUnderAWindowedLimit: a server that allows 10
// requests in any second and answers 429 without Retry-After above it gets
// 30 calls from a client with 8 in flight and no configured limit: the
// 429s are absorbed (lower concurrency, back off) and no call fails.
func TestAdaptiveConcurrencyUnderAWindowedLimit(t *testing.T) {
	t.Parallel()
	ws := &windowServer{limit: 10, window: time.Second}
	srv := openaitest.New(t, ws.handle(openaitest.JSON(validAnswer).WithDelay(20*time.Millisecond)))
	c := newLiveClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = 8 })
	results, err := c.CreateEach(t.Context(), 30, func(int) (Request, error) { return testRequest("go"), nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Errorf("call %d failed: %v", i, r.Err)
		}
	}
	st := c.Stats()
	if ws.rateLimited() == 0 || st.RateLimited != int64(ws.rateLimited()) || st.LowestConcurrency >= 8 {
		t.Errorf("server sent %d 429s, client stats %+v; want some, all counted, concurrency lowered", ws.rateLimited(), st)
	}
}

// TestGateWaitFailsTheCall: a call that cannot get a slot before its
// deadline fails without being sent, and says the concurrency was lowered
// by 429s and what to set instead.
func TestGateWaitFailsTheCall(t *testing.T) {
	t.Parallel()
	hanging := make(chan struct{}) // closed once the hung call reached the server, holding the one slot
	reached := sync.OnceFunc(func() { close(hanging) })
	srv := openaitest.New(t, openaitest.Match(openaitest.Always(openaitest.JSON(validAnswer)),
		openaitest.Route{If: openaitest.UserContains("limited"), Then: openaitest.Always(openaitest.Status(429, "requests", "rate_limit_exceeded", "slow down"))},
		openaitest.Route{If: openaitest.UserContains("hang"), Then: func(*openaitest.Call) openaitest.Reply { reached(); return openaitest.Hang() }}))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = 2 })
	if res := c.Complete(t.Context(), testRequest("limited")); ErrorKindOf(res.Err) != KindRateLimit || res.Attempts != 10 {
		t.Fatalf("always 429: %v after %d attempts; want rate_limit after 8 waits and 2 tries", res.Err, res.Attempts)
	}
	if st := c.Stats(); st.Concurrency != 1 || st.RateLimited != 10 {
		t.Fatalf("stats %+v, want concurrency 1 after ten 429s", st)
	}
	hung, stop := context.WithCancel(t.Context())
	defer stop()
	go c.Complete(hung, testRequest("hang"))
	<-hanging

	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	res := c.Complete(ctx, testRequest("go"))
	e := asError(t, res.Err)
	if e.Kind != KindTimeout || res.Attempts != 0 || !strings.Contains(e.Message, "concurrency lowered to 1 of 2 after 429 rate limits") ||
		!strings.Contains(e.Hint, "llm.rpm") {
		t.Errorf("err = %v (kind %v, attempts %d); want a timeout waiting for a slot, naming llm.rpm", e, e.Kind, res.Attempts)
	}
	if srv.CallCount() != 11 {
		t.Errorf("server saw %d calls, want 11: the timed-out call is never sent", srv.CallCount())
	}

	ctx, cancel = context.WithCancel(t.Context())
	time.AfterFunc(20*time.Millisecond, cancel)
	if res := c.Complete(ctx, testRequest("go")); ErrorKindOf(res.Err) != KindCanceled || res.Attempts != 0 {
		t.Errorf("canceled at the gate: %v after %d attempts, want canceled before sending", res.Err, res.Attempts)
	}
}

// TestQuota429IsFinalAndKeepsConcurrency: insufficient_quota is not flow
// control: one attempt, no wait, the concurrency untouched, not counted as
// a rate limit.
func TestQuota429IsFinalAndKeepsConcurrency(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Status(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota")))
	c, w := newTestClient(t, srv.URL, nil)
	res := c.Complete(t.Context(), testRequest("go"))
	if ErrorKindOf(res.Err) != KindQuota || res.Attempts != 1 || srv.CallCount() != 1 || len(w.all()) != 0 {
		t.Errorf("quota: %v after %d attempts, %d calls, waits %v; want quota after one attempt and no wait", res.Err, res.Attempts, srv.CallCount(), w.all())
	}
	if st := c.Stats(); st.RateLimited != 0 || st.Concurrency != DefaultConcurrency || st.LowestConcurrency != DefaultConcurrency {
		t.Errorf("stats %+v after a quota 429, want nothing counted or lowered", st)
	}
}

// TestRateLimitWithoutRetryAfterIsFlowControl: 429s without Retry-After
// are waited out with a doubling backoff, not counted as tries, and the
// call succeeds.
func TestRateLimitWithoutRetryAfterIsFlowControl(t *testing.T) {
	t.Parallel()
	limited := openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached")
	srv := openaitest.New(t, openaitest.Sequence(limited, limited, limited, limited, limited, openaitest.JSON(validAnswer)))
	c, w := newTestClient(t, srv.URL, nil)
	res := c.Complete(t.Context(), testRequest("go"))
	if res.Err != nil || res.Attempts != 6 || len(res.Recoveries) != 0 {
		t.Errorf("err %v, attempts %d, recoveries %v; want success after 6 attempts, no retry counted", res.Err, res.Attempts, res.Recoveries)
	}
	want := []time.Duration{time.Millisecond, 2 * time.Millisecond, 4 * time.Millisecond, 8 * time.Millisecond, 16 * time.Millisecond}
	if !equalDurations(w.all(), want) {
		t.Errorf("waits %v, want %v", w.all(), want)
	}
	if st := c.Stats(); st.RateLimited != 5 {
		t.Errorf("stats %+v, want 5 429s counted", st)
	}
}
