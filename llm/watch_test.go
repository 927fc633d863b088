package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// timeline is the order in which the server got requests and a Watch was
// told of failures.
type timeline struct {
	mu    sync.Mutex
	lines []string
	told  []*Error
}

func (tl *timeline) add(line string) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.lines = append(tl.lines, line)
}

func (tl *timeline) watch() Watch {
	return Watch{
		Failed: func(entity string, err *Error) {
			tl.add(fmt.Sprintf("failed %s %s", entity, err.Kind))
			tl.mu.Lock()
			tl.told = append(tl.told, err)
			tl.mu.Unlock()
		},
		Recovered: func(_ string, r Recovery) { tl.add(fmt.Sprintf("ended %s %v", r.Strategy, r.Success)) },
	}
}

// served logs each request the server gets, then answers it with the
// reply of its turn.
func (tl *timeline) served(replies ...openaitest.Reply) openaitest.Handler {
	seq := openaitest.Sequence(replies...)
	return func(c *openaitest.Call) openaitest.Reply {
		tl.add(fmt.Sprintf("request %d", c.N))
		return seq(c)
	}
}

// Seed 002's "Emit before recovery": a Watch on the context is told of each
// failure before the retry or repair of it is sent, of each retry or repair
// when it has ended, and of the failure that ends a call before the call
// returns; each as the *Error the Result then holds. Structured calls, tool
// turns and chat turns alike.
func TestWatchEmitBeforeRecovery(t *testing.T) {
	t.Parallel()
	boom := openaitest.Status(500, "server_error", "", "boom")
	type sent struct {
		recs []Recovery
		err  error
	}
	kinds := map[string]struct {
		entity string
		ok     openaitest.Reply
		send   func(ctx context.Context, c *Client) sent
	}{
		"structured": {"intention:ada", openaitest.JSON(validAnswer), func(ctx context.Context, c *Client) sent {
			res := c.Complete(ctx, testRequest("go"))
			return sent{res.Recoveries, res.Err}
		}},
		"tools": {"agent:red", openaitest.ToolCalls(openaitest.Tool("c1", "submit_orders", map[string]any{"orders": []string{}})), func(ctx context.Context, c *Client) sent {
			res := c.CompleteTools(ctx, ToolRequest{EntityKey: "agent:red", Params: Params{Model: "m"},
				Messages: []Message{{Role: "user", Content: "go"}}, Tools: ordersTools})
			return sent{res.Recoveries, res.Err}
		}},
		"chat": {"chronicle:test", openaitest.Content("Hello."), func(ctx context.Context, c *Client) sent {
			res := c.Chat(ctx, chatRequest())
			return sent{res.Recoveries, res.Err}
		}},
	}
	for name, k := range kinds {
		for _, tt := range []struct {
			name    string
			replies []openaitest.Reply
			want    []string
		}{
			{"retried past", []openaitest.Reply{boom, k.ok},
				[]string{"request 1", "failed " + k.entity + " server", "request 2", "ended retry true"}},
			{"retried in vain", []openaitest.Reply{boom},
				[]string{"request 1", "failed " + k.entity + " server", "request 2", "ended retry false", "failed " + k.entity + " server"}},
		} {
			t.Run(name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				var tl timeline
				srv := openaitest.New(t, tl.served(tt.replies...))
				c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.MaxAttempts = 2 })
				got := k.send(WithWatch(t.Context(), tl.watch()), c)
				if !slices.Equal(tl.lines, tt.want) {
					t.Errorf("timeline\n%s\nwant\n%s", strings.Join(tl.lines, "\n"), strings.Join(tt.want, "\n"))
				}
				toldAsHeld(t, tl.told, got.recs, got.err)
			})
		}
	}
	t.Run("structured/repaired", func(t *testing.T) {
		t.Parallel()
		var tl timeline
		srv := openaitest.New(t, tl.served(boom, openaitest.Content("not JSON"), openaitest.JSON(validAnswer)))
		c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.MaxAttempts = 2 })
		res := c.Complete(WithWatch(t.Context(), tl.watch()), testRequest("go"))
		want := []string{"request 1", "failed intention:ada server", "request 2", "ended retry true",
			"failed intention:ada invalid_json", "request 3", "ended repair true"}
		if res.Err != nil || !slices.Equal(tl.lines, want) {
			t.Errorf("err %v, timeline\n%s\nwant\n%s", res.Err, strings.Join(tl.lines, "\n"), strings.Join(want, "\n"))
		}
		toldAsHeld(t, tl.told, res.Recoveries, res.Err)
	})
}

// lateWatch is a context that has a Watch only once given one, as a call
// started before its phase gets the phase's values when it begins.
type lateWatch struct {
	context.Context
	mu sync.Mutex
	w  *Watch
}

func (c *lateWatch) give(w Watch) { c.mu.Lock(); c.w = &w; c.mu.Unlock() }

func (c *lateWatch) Value(key any) any {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := key.(watchKey); ok && c.w != nil {
		return *c.w
	}
	return c.Context.Value(key)
}

// A call whose context gets a Watch after a failure of the call went
// untold tells none of its later failures either, so that whoever emits the
// untold ones from the Result emits them all, in order; a call whose
// context got its Watch before its first failure tells every one.
func TestWatchGivenLate(t *testing.T) {
	t.Parallel()
	boom := openaitest.Status(500, "server_error", "", "boom")
	for _, tt := range []struct {
		name   string
		giveAt int // the request by which the context has the Watch
		want   []string
	}{
		{"after the first failure", 2, []string{"request 1", "request 2"}},
		{"before it", 1, []string{"request 1", "failed intention:ada server", "request 2", "ended retry false", "failed intention:ada server"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var tl timeline
			ctx := &lateWatch{Context: t.Context()}
			srv := openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
				if c.N == tt.giveAt {
					ctx.give(tl.watch())
				}
				return tl.served(boom)(c)
			})
			c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.MaxAttempts = 2 })
			if res := c.Complete(ctx, testRequest("go")); res.Err == nil || len(res.Recoveries) != 1 {
				t.Fatalf("the call did not fail after a retry: %+v", res)
			}
			if !slices.Equal(tl.lines, tt.want) {
				t.Errorf("timeline\n%s\nwant\n%s", strings.Join(tl.lines, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// toldAsHeld checks that the failures told are the Result's, in order: its
// recoveries', then the one that ended it.
func toldAsHeld(t *testing.T, told []*Error, recs []Recovery, err error) {
	t.Helper()
	var held []*Error
	for _, r := range recs {
		held = append(held, r.Err)
	}
	if e, ok := err.(*Error); ok {
		held = append(held, e)
	}
	if !slices.Equal(told, held) {
		t.Errorf("told %v, the result holds %v", told, held)
	}
}
