package llm

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// gate bounds the client's HTTP attempts in flight with a limit that adapts
// to the server's rate limits when they are not known (AIMD, as TCP does
// with its window): it starts at Config.Concurrency, halves when an attempt
// admitted under the current limit is answered 429 rate_limit (the other
// 429s of the same congestion episode were sent under the old limit and do
// not halve it again), and grows by one once a limit's worth of attempts
// admitted under the current limit have succeeded, back up to
// Config.Concurrency. Free slots go to waiters first come, first served.
type gate struct {
	log *slog.Logger
	max int

	mu       sync.Mutex
	limit    int
	lowest   int // lowest limit reached
	inFlight int
	gen      uint64 // changes with the limit
	ok       int    // successes admitted under gen
	waiters  []*gateWaiter
}

type gateWaiter struct {
	ready chan struct{} // closed when the waiter has a slot
	gen   uint64        // the gate's gen when it got the slot
}

// slot is one admitted attempt; it knows the limit it was admitted under.
type slot struct{ gen uint64 }

// ending is what became of an attempt, for the gate.
type ending int

const (
	endOther       ending = iota // not sent, or failed for another reason: tells nothing about the limit
	endOK                        // answered
	endRateLimited               // 429 rate_limit (not insufficient_quota)
)

func newGate(limit int, log *slog.Logger) *gate {
	limit = max(limit, 1)
	return &gate{log: log, max: limit, limit: limit, lowest: limit}
}

// acquire waits for a slot, or until ctx ends (ctx's error).
func (g *gate) acquire(ctx context.Context) (slot, error) {
	g.mu.Lock()
	if len(g.waiters) == 0 && g.inFlight < g.limit {
		g.inFlight++
		s := slot{g.gen}
		g.mu.Unlock()
		return s, nil
	}
	w := &gateWaiter{ready: make(chan struct{})}
	g.waiters = append(g.waiters, w)
	g.mu.Unlock()

	select {
	case <-w.ready:
		return slot{w.gen}, nil
	case <-ctx.Done():
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-w.ready: // handed a slot as ctx ended: pass it on
		g.inFlight--
		g.admit()
	default:
		for i, o := range g.waiters {
			if o == w {
				g.waiters = append(g.waiters[:i], g.waiters[i+1:]...)
				break
			}
		}
	}
	return slot{}, ctx.Err()
}

// release frees s's slot and adapts the limit to what became of its attempt.
func (g *gate) release(s slot, e ending) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	switch {
	case e == endRateLimited && s.gen == g.gen && g.limit > 1:
		from := g.limit
		g.set(g.limit / 2)
		g.lowest = min(g.lowest, g.limit)
		g.log.Info(fmt.Sprintf("rate limited: concurrency %d -> %d", from, g.limit),
			"concurrency", g.limit, "llm.concurrency", g.max)
	case e == endOK && s.gen == g.gen && g.limit < g.max:
		if g.ok++; g.ok >= g.limit {
			g.set(g.limit + 1)
			g.log.Info(fmt.Sprintf("recovered: concurrency %d", g.limit),
				"concurrency", g.limit, "llm.concurrency", g.max)
		}
	}
	g.admit()
}

// set changes the limit, starting a new episode.
func (g *gate) set(limit int) {
	g.limit, g.gen, g.ok = limit, g.gen+1, 0
}

// admit hands free slots to the waiters in arrival order.
func (g *gate) admit() {
	for len(g.waiters) > 0 && g.inFlight < g.limit {
		w := g.waiters[0]
		g.waiters = g.waiters[1:]
		g.inFlight++
		w.gen = g.gen
		close(w.ready)
	}
}

// state returns the current and lowest limits.
func (g *gate) state() (limit, lowest int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit, g.lowest
}

// free is the slots free now less the waiters queued for them: how much
// more the endpoint takes at once (negative when calls queue at it).
func (g *gate) free() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.limit - g.inFlight - len(g.waiters)
}
