package llm

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// CreateBatch runs the requests with at most Config.Concurrency in flight and
// returns their results in input order. A failed call is a Result with Err
// set; it never cancels the others. Only ctx ending stops the batch early, in
// which case the remaining results carry a KindCanceled error.
func (c *Client) CreateBatch(ctx context.Context, reqs []Request) []Result {
	results := make([]Result, len(reqs))
	var g errgroup.Group // not WithContext: tasks never fail, so none can cancel the rest
	g.SetLimit(c.cfg.Concurrency)
	for i, req := range reqs {
		g.Go(func() error {
			results[i] = c.Complete(ctx, req)
			return nil
		})
	}
	_ = g.Wait() // always nil
	return results
}
