package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

func TestCreateEach(t *testing.T) {
	t.Parallel()
	const limit = 3
	// Every answer echoes its request's user message, after a delay long
	// enough for calls to overlap; the call for "loc-3" fails for good.
	srv := openaitest.New(t, openaitest.Match(
		func(c *openaitest.Call) openaitest.Reply {
			return openaitest.JSON(map[string]any{"name": c.LastUserMessage(), "location": "common"}).WithDelay(20 * time.Millisecond)
		},
		openaitest.Route{If: openaitest.UserContains("loc-3"), Then: openaitest.Always(
			openaitest.Status(400, "invalid_request_error", "", "bad").WithDelay(5 * time.Millisecond))},
	))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = limit })

	reqs := make([]Request, 10)
	for i := range reqs {
		reqs[i] = testRequest(fmt.Sprintf("loc-%d", i))
		reqs[i].EntityKey = fmt.Sprintf("resolution:loc-%d", i)
	}
	results, err := c.CreateEach(t.Context(), len(reqs), func(i int) (Request, error) { return reqs[i], nil })
	if err != nil {
		t.Fatal(err)
	}

	if len(results) != len(reqs) {
		t.Fatalf("%d results for %d requests", len(results), len(reqs))
	}
	for i, res := range results {
		if res.Request.EntityKey != reqs[i].EntityKey {
			t.Errorf("result %d is for %s", i, res.Request.EntityKey)
		}
		if i == 3 {
			if ErrorKindOf(res.Err) != KindBadRequest {
				t.Errorf("result 3 err = %v, want bad_request", res.Err)
			}
			continue
		}
		var out struct{ Name string }
		if res.Err != nil || json.Unmarshal(res.Output, &out) != nil || out.Name != reqs[i].User {
			t.Errorf("result %d = %s, %v; want the answer to %q", i, res.Output, res.Err, reqs[i].User)
		}
	}
	if got := srv.MaxInFlight(); got > limit || got < 2 {
		t.Errorf("max in flight = %d, want 2..%d", got, limit)
	}
	if srv.CallCount() != len(reqs) {
		t.Errorf("server saw %d calls, want %d", srv.CallCount(), len(reqs))
	}
	want := Usage{}
	for range len(reqs) - 1 {
		want = want.Add(Usage{120, 30, 64})
	}
	if c.Usage() != want {
		t.Errorf("client usage = %+v, want %+v", c.Usage(), want)
	}
}

func TestCreateEachEmpty(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, "http://127.0.0.1:1/v1", nil)
	got, err := c.CreateEach(t.Context(), 0, func(int) (Request, error) { panic("nothing to build") })
	if err != nil || len(got) != 0 {
		t.Errorf("got %d results, %v", len(got), err)
	}
}

// TestCreateEachBuildError: a request that cannot be built fails the fan-out
// with its error and no results; the requests after it are never built, so
// no call of theirs is made.
func TestCreateEachBuildError(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(map[string]any{"name": "x", "location": "common"})))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = 1 })
	var built atomic.Int32
	broken := errors.New("template phase1_intention_user.md: no such key")
	results, err := c.CreateEach(t.Context(), 50, func(i int) (Request, error) {
		built.Add(1)
		if i == 2 {
			return Request{}, broken
		}
		return testRequest(fmt.Sprint(i)), nil
	})
	if !errors.Is(err, broken) || results != nil {
		t.Fatalf("CreateEach = %d results, %v; want the build error", len(results), err)
	}
	if n := built.Load(); n > 4 {
		t.Errorf("%d requests built after the build error, want it to stop building", n)
	}
	if n := srv.CallCount(); n > 3 {
		t.Errorf("server saw %d calls, want at most the 2 built before the error (and 1 in flight)", n)
	}
}

// TestCreateEachThen: each result reaches done once, as its call ends, and
// the fan-out's results are the same.
func TestCreateEachThen(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(map[string]any{"name": "x", "location": "common"})))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = 3 })
	var mu sync.Mutex
	seen := map[int]Result{}
	results, err := c.CreateEachThen(t.Context(), 10, func(i int) (Request, error) { return testRequest(fmt.Sprint(i)), nil },
		func(i int, r Result) {
			mu.Lock()
			defer mu.Unlock()
			if _, twice := seen[i]; twice {
				t.Errorf("result %d handed over twice", i)
			}
			seen[i] = r
		})
	if err != nil || len(results) != 10 || len(seen) != 10 {
		t.Fatalf("%d results, %d seen, %v", len(results), len(seen), err)
	}
	for i, r := range results {
		if seen[i].Request.User != r.Request.User || r.Request.User != fmt.Sprint(i) {
			t.Errorf("result %d: done saw %q, the fan-out gave %q", i, seen[i].Request.User, r.Request.User)
		}
		// done gets the answer as the check decoded it; the fan-out drops it.
		want := map[string]any{"name": "x", "location": "common"}
		if !reflect.DeepEqual(seen[i].Decoded, want) || r.Decoded != nil || string(r.Output) != string(seen[i].Output) {
			t.Errorf("result %d: done saw decoded %#v, the fan-out kept %#v; want %v handed to done alone", i, seen[i].Decoded, r.Decoded, want)
		}
	}
}

// TestCreateEachBuildsAhead: a fan-out runs twice as many workers as calls in
// flight, so while the calls hold every slot the next requests are already
// built and waiting at the gate; the server still never sees more than
// Concurrency calls at once.
func TestCreateEachBuildsAhead(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer).WithDelay(50*time.Millisecond)))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Concurrency = 2 })
	if c.Workers() != 4 {
		t.Fatalf("Workers() = %d, want 4 for concurrency 2", c.Workers())
	}
	var built atomic.Int32
	builtDuringFirst := make(chan int32, 1)
	_, err := c.CreateEachThen(t.Context(), 8, func(i int) (Request, error) {
		built.Add(1)
		return testRequest(fmt.Sprintf("u%d", i)), nil
	}, func(i int, _ Result) {
		select {
		case builtDuringFirst <- built.Load():
		default:
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := <-builtDuringFirst; n < 4 {
		t.Errorf("%d requests built when the first call ended, want 4 (two in flight, two waiting)", n)
	}
	if got := srv.MaxInFlight(); got != 2 {
		t.Errorf("max in flight = %d, want 2", got)
	}
}
