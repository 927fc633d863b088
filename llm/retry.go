package llm

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// retry runs call until it succeeds, fails for good, or has been tried
// Config.MaxAttempts times. Each try runs under its own Config.Timeout and
// waits its turn at the client's rate limiter; between tries it waits the
// server's Retry-After (capped at BackoffMax) or an exponential backoff with
// full jitter. It returns the number of tries made and the last failure.
// This is the only place that retries.
//
// A 429 that says when to come back (Retry-After, up to BackoffMax) is flow
// control, not a failure of the call: it is waited out up to
// Config.RateLimitWaits times per request without counting as a try. Each
// retry is added to recs (when not nil), with whether the try after it
// succeeded.
func (c *Client) retry(ctx context.Context, log *slog.Logger, recs *[]Recovery, call func(ctx context.Context) error) (int, *Error) {
	var pending *Recovery // the retry whose outcome the next try tells
	settle := func(ok bool) {
		if pending != nil {
			pending.Success = ok
			*recs = append(*recs, *pending)
			pending = nil
		}
	}
	waits, tries := 0, 0
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil { // nothing is sent once the caller has given up
			e := c.class.classify(ctx, err)
			e.Attempts = n - 1
			settle(false)
			return n - 1, e
		}
		if err := c.limiter.Wait(ctx); err != nil {
			e := c.class.classify(ctx, err)
			if ctx.Err() == nil { // the wait would outlast ctx's deadline
				e = &Error{Kind: KindTimeout, Err: err,
					Message: "deadline of the call would pass waiting for the client's rate limit",
					Hint:    "raise llm.rate_limit or the phase deadline"}
			}
			e.Attempts = n - 1
			settle(false)
			return n - 1, e
		}

		hold := new(retryAfter)
		actx, cancel := context.WithTimeout(context.WithValue(ctx, retryAfterKey{}, hold), c.cfg.Timeout)
		err := call(actx)
		cancel()
		if err == nil {
			settle(true)
			return n, nil
		}
		e := c.class.classify(ctx, err)
		e.Attempts = n
		ra, hasRA := hold.get()
		if hasRA {
			e.RetryAfter = ra
		}
		flow := e.Kind == KindRateLimit && hasRA && ra <= c.cfg.BackoffMax && waits < c.cfg.RateLimitWaits
		if !flow {
			settle(false)
			tries++
		}
		if !e.Transient() || (!flow && tries >= c.cfg.MaxAttempts) || ctx.Err() != nil {
			return n, e
		}
		if hasRA && ra > c.cfg.BackoffMax {
			// Asking again before the server allows only earns another 429.
			e.Hint = fmt.Sprintf("the server asks to wait %s before another request (Retry-After), longer than this client waits (%s); try again later", ra, c.cfg.BackoffMax)
			return n, e
		}

		d := c.backoff(tries, ra, hasRA)
		if flow {
			waits++
			log.Info("rate limited, waiting as the server asks (Retry-After)", "wait", waits,
				"rate_limit_waits", c.cfg.RateLimitWaits, "delay", d)
		} else {
			if recs != nil {
				pending = &Recovery{Strategy: StrategyRetry, Err: e}
			}
			log.Warn("model call failed, retrying", "kind", e.Kind.String(), "attempt", tries,
				"max_attempts", c.cfg.MaxAttempts, "delay", d, "error", e.Error())
		}
		if werr := c.wait(ctx, d); werr != nil {
			we := c.class.classify(ctx, werr)
			we.Attempts = n
			we.Message += " while waiting to retry after: " + e.Message
			settle(false)
			return n, we
		}
	}
}

// backoff is the delay before try n+1: the server's Retry-After when it sent
// one (retry gives up instead when that is above BackoffMax), else a
// uniformly random delay up to BackoffBase·2^(n-1) capped at BackoffMax.
func (c *Client) backoff(n int, retryAfter time.Duration, hasRetryAfter bool) time.Duration {
	if hasRetryAfter {
		return min(retryAfter, c.cfg.BackoffMax)
	}
	ceil := c.cfg.BackoffMax
	if shift := n - 1; shift < 62 {
		if d := c.cfg.BackoffBase << shift; d > 0 && d>>shift == c.cfg.BackoffBase {
			ceil = min(d, ceil)
		}
	}
	return c.jitter(ceil)
}

// fullJitter returns a random duration in [0, ceil].
func fullJitter(ceil time.Duration) time.Duration {
	if ceil <= 0 {
		return 0
	}
	return rand.N(ceil + 1)
}

// sleep waits d or until ctx ends, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retryAfterKey carries a *retryAfter in an attempt's context, so that the
// transport below can hand the server's Retry-After header to retry:
// go-openai does not expose the headers of error responses.
type retryAfterKey struct{}

type retryAfter struct {
	mu  sync.Mutex
	d   time.Duration
	set bool
}

func (r *retryAfter) put(d time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.d, r.set = d, true
}

func (r *retryAfter) get() (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.d, r.set
}

// parseRetryAfter reads retry-after-ms (sent by OpenAI) or Retry-After in
// seconds or as an HTTP date.
func parseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	const longest = 24 * time.Hour // anything longer is as good as "give up"; BackoffMax caps it anyway
	fromSeconds := func(s string, unit time.Duration) (time.Duration, bool) {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(v) || v < 0 {
			return 0, false
		}
		if v*float64(unit) > float64(longest) {
			return longest, true
		}
		return time.Duration(v * float64(unit)), true
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if d, ok := fromSeconds(v, time.Millisecond); ok {
			return d, true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if d, ok := fromSeconds(v, time.Second); ok {
		return d, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), longest), true
	}
	return 0, false
}
