package llm

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// CreateEach fans out n live calls (a Batch API job is CompleteBatch's) with
// at most Config.Concurrency in flight, building request i with build in the
// worker that then sends it: the engine's work on one request overlaps the
// waits of the others instead of running before the first call goes out.
// Results come back in index order; a failed call is a Result with Err set
// and never cancels the others. A request that cannot be built is an error:
// the calls not yet started are not made, those in flight are cancelled, and
// the first build error is returned with no results.
func (c *Client) CreateEach(ctx context.Context, n int, build func(i int) (Request, error)) ([]Result, error) {
	return c.CreateEachThen(ctx, n, build, nil)
}

// Workers is how many goroutines a fan-out of calls runs: twice the calls in
// flight. The client's gate holds the HTTP attempts in flight at
// Config.Concurrency; the other workers build their requests meanwhile and
// wait at the gate, so that a slot freed is taken at once by a request
// ready to go, and a finished call's answer is read and kept while the
// next call is already at the server (with one worker per slot, the slot
// idled for all of that).
//
// With several endpoints, the calls in flight are the sum of theirs.
func (c *Client) Workers() int {
	n := 0
	for _, ep := range c.eps {
		n += ep.gate.max
	}
	return 2 * n
}

// CreateEachThen is CreateEach that also hands each result to done, when
// set, as soon as its call ends (from the worker that made it, so done must
// be safe to call from several goroutines at once): what depends on one call
// need not wait for the whole fan-out.
func (c *Client) CreateEachThen(ctx context.Context, n int, build func(i int) (Request, error), done func(i int, r Result)) ([]Result, error) {
	results := make([]Result, n)
	g, gctx := errgroup.WithContext(ctx) // only a build error fails a task
	g.SetLimit(c.Workers())
	for i := range n {
		if gctx.Err() != nil && ctx.Err() == nil {
			break // a build failed: start nothing more
		}
		g.Go(func() error {
			req, err := build(i)
			if err != nil {
				return err
			}
			results[i] = c.Complete(gctx, req)
			if done != nil {
				done(i, results[i])
				results[i].Decoded = nil // done's to use: the fan-out need not hold every answer twice
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return results, nil
}
