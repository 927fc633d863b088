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
// waits its turn (see admit): a slot of the adaptive concurrency and the
// pacer of llm.rpm / llm.tpm, which charges it cost tokens. Between tries it waits the server's Retry-After (capped at
// BackoffMax) or an exponential backoff with full jitter. It returns the
// number of tries made and the last failure. This is the only place that
// retries.
//
// A 429 rate limit (not insufficient_quota, which is final) is flow
// control, not a failure of the call: it is waited out up to
// Config.RateLimitWaits times per request without counting as a try, for
// the server's Retry-After when it sends one up to BackoffMax, else for the
// exponential backoff of the waits so far; and it halves the adaptive
// concurrency (see gate). Each retry is added to recs (when not nil), with
// whether the try after it succeeded.
func (c *Client) retry(ctx context.Context, log *slog.Logger, recs *[]Recovery, cost int, call func(ctx context.Context) error) (int, *Error) {
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
		turn, e := c.admit(ctx, cost)
		if e != nil {
			e.Attempts = n - 1
			settle(false)
			return n - 1, e
		}

		hold := new(retryAfter)
		actx, cancel := context.WithTimeout(context.WithValue(ctx, retryAfterKey{}, hold), c.cfg.Timeout)
		err := call(actx)
		cancel()
		if err == nil {
			c.gate.release(turn, endOK)
			settle(true)
			return n, nil
		}
		e = c.class.classify(ctx, err)
		if e.Kind == KindRateLimit {
			c.limited.Add(1)
			c.gate.release(turn, endRateLimited)
		} else {
			c.gate.release(turn, endOther)
		}
		e.Attempts = n
		ra, hasRA := hold.get()
		if hasRA {
			e.RetryAfter = ra
		}
		flow := e.Kind == KindRateLimit && (!hasRA || ra <= c.cfg.BackoffMax) && waits < c.cfg.RateLimitWaits
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

		var d time.Duration
		if flow {
			waits++
			d = c.backoff(waits, ra, hasRA)
			how := "rate limited, backing off"
			if hasRA {
				how = "rate limited, waiting as the server asks (Retry-After)"
			}
			log.Info(how, "wait", waits, "rate_limit_waits", c.cfg.RateLimitWaits, "delay", d)
		} else {
			d = c.backoff(tries, ra, hasRA)
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

// admit waits for an attempt's turn: a slot at the gate, then the pacer
// (llm.rpm / llm.tpm), so that attempts leave at the pace they were given
// rather than in a bunch when slots free up. It runs before the attempt's
// own timeout starts: waiting for a turn is not waiting for the server. On
// failure it holds nothing; the error says which wait ctx ended in.
func (c *Client) admit(ctx context.Context, cost int) (slot, *Error) {
	turn, err := c.gate.acquire(ctx)
	if err != nil {
		e := c.class.classify(ctx, err)
		if limit, _ := c.gate.state(); limit < c.gate.max {
			e.Message += fmt.Sprintf(" (waiting for a slot: concurrency lowered to %d of %d after 429 rate limits)", limit, c.gate.max)
			e.Hint = "set llm.rpm / llm.tpm to the endpoint's published limits to pace calls under them"
		}
		return slot{}, e
	}
	if err := c.pacer.wait(ctx, time.Now(), cost); err != nil {
		c.gate.release(turn, endOther)
		return slot{}, c.waitError(ctx, err, "llm.rpm / llm.tpm pace calls under the endpoint's limits; raise the phase deadline")
	}
	return turn, nil
}

// waitError explains the failure of a wait at a rate limit: ctx ended, or
// the turn given is past ctx's deadline.
func (c *Client) waitError(ctx context.Context, err error, hint string) *Error {
	if ctx.Err() != nil {
		return c.class.classify(ctx, err)
	}
	return &Error{Kind: KindTimeout, Err: err,
		Message: "deadline of the call would pass waiting for the client's rate limit", Hint: hint}
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
