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

	"github.com/arbiter-sim/arbiter/telemetry"
)

// route is where a call's attempts went: how many were made, the endpoint
// of the last, and the endpoints that failed one (a name per endpoint
// failure, in order).
type route struct {
	attempts int
	last     *endpoint
	failed   []string
	// window is the model's context at the endpoint that answered (or
	// the configuration's, for a replayed answer), and truncated whether
	// the answer's prompt filled it (see Window.Reached) or the server
	// said it truncated the prompt.
	window    Window
	truncated bool
}

// endpoint names the endpoint of the last attempt, "" when none was made.
func (r route) endpoint() string {
	if r.last == nil {
		return ""
	}
	return r.last.name
}

// retry runs call until it succeeds, fails for good, or has been tried
// Config.MaxAttempts times. Each try goes to an endpoint of pool (see
// pick; another than the one named avoid while one is in), runs under its
// own Config.Timeout and waits its turn there (see admit): a slot of the
// endpoint's adaptive concurrency and the pacer of its rpm / tpm, which
// charges it cost tokens. Between tries it waits the server's Retry-After
// (capped at BackoffMax) or an exponential backoff with full jitter. It
// returns where the tries went and the last failure. This is the only
// place that retries.
//
// A 429 rate limit (not insufficient_quota, which is final) is flow
// control, not a failure of the call: it is waited out up to
// Config.RateLimitWaits times per request without counting as a try, for
// the server's Retry-After when it sends one up to BackoffMax, else for the
// exponential backoff of the waits so far; and it halves the endpoint's
// adaptive concurrency (see gate). A failure of the endpoint (refused,
// 5xx, timeout, an answer that is not an OpenAI-compatible response) is
// not a failure of the call while another endpoint of the pool has not
// failed it and is in: the call goes there at once, without counting a
// try. Each retry is added to recs (when not nil), with whether the try
// after it succeeded, and told to the Watch of ctx as it happens.
func (c *Client) retry(ctx context.Context, log *slog.Logger, recs *[]Recovery, pool []*endpoint, cost int, avoid string, call func(ctx context.Context, ep *endpoint) error) (route, *Error) {
	var pending *Recovery // the retry whose outcome the next try tells
	settle := func(ok bool) {
		if pending != nil {
			pending.Success = ok
			*recs = append(*recs, *pending)
			tellRecovered(ctx, *pending)
			pending = nil
		}
	}
	var (
		tried []*endpoint // endpoints that failed this call
		rt    route
	)
	waits, tries := 0, 0
	for n := 1; ctx.Err() == nil; n++ { // nothing is sent once the caller has given up
		ep := pick(pool, tried, avoid, time.Now())
		rt.last = ep
		turn, e := c.admit(ctx, ep, cost)
		if e != nil {
			e.Attempts = n - 1
			settle(false)
			return rt, e
		}
		rt.attempts = n
		e, down, hold := c.try(ctx, log, ep, turn, call)
		if e == nil {
			settle(true)
			return rt, nil
		}
		e.Attempts = n
		if down {
			rt.failed, tried, avoid = append(rt.failed, ep.name), append(tried, ep), ep.name // later tries prefer another
			if len(pool) > 1 && another(pool, tried, time.Now()) {
				log.Info("endpoint failed, sending the call to another", "endpoint", ep.name, "kind", e.Kind.String(), "error", e.Error())
				continue
			}
		}
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
			return rt, e
		}
		if hasRA && ra > c.cfg.BackoffMax {
			// Asking again before the server allows only earns another 429.
			e.Hint = fmt.Sprintf("the server asks to wait %s before another request (Retry-After), longer than this client waits (%s); try again later", ra, c.cfg.BackoffMax)
			return rt, e
		}

		if flow {
			waits++
		} else if recs != nil {
			pending = &Recovery{Strategy: StrategyRetry, Err: e}
			tellFailed(ctx, e) // before the retry's wait and attempt
		}
		d := c.delay(log, e, flow, waits, tries, ra, hasRA)
		if werr := c.wait(ctx, d); werr != nil {
			we := c.class.classify(ctx, werr)
			we.Attempts = n
			we.Message += " while waiting to retry after: " + e.Message
			settle(false)
			return rt, we
		}
		tried = tried[:0] // every endpoint may take the next try
	}
	e := c.class.classify(ctx, ctx.Err())
	e.Attempts = rt.attempts
	settle(false)
	return rt, e
}

// try makes one attempt of call at ep, in the turn admit gave it, under
// Config.Timeout, and accounts for it at the endpoint: its gate slot, its
// answered or failed count, its 429s and its breaker. It returns the
// failure (nil: answered), whether it was a failure of the endpoint rather
// than of the call (down), and the Retry-After the server sent.
func (c *Client) try(ctx context.Context, log *slog.Logger, ep *endpoint, turn slot, call func(ctx context.Context, ep *endpoint) error) (e *Error, down bool, hold *retryAfter) {
	hold = new(retryAfter)
	actx, cancel := context.WithTimeout(context.WithValue(ctx, retryAfterKey{}, hold), c.cfg.Timeout)
	ep.brk.take(time.Now())
	telemetry.Attempt(ctx, ep.name, 1, false)
	err := call(actx, ep)
	cancel()
	if err == nil {
		telemetry.Attempt(ctx, ep.name, -1, false)
		ep.gate.release(turn, endOK)
		ep.answered.Add(1)
		ep.brk.done(time.Now(), true, false)
		return nil, false, hold
	}
	e = ep.class.classify(ctx, err)
	telemetry.Attempt(ctx, ep.name, -1, e.Kind == KindRateLimit)
	switch {
	case e.Kind == KindRateLimit:
		ep.limited.Add(1)
		ep.gate.release(turn, endRateLimited)
	default:
		ep.gate.release(turn, endOther)
	}
	down = endpointFailure(e) && ctx.Err() == nil
	if down {
		ep.failed.Add(1)
	} else if e.Kind != KindCanceled {
		ep.answered.Add(1)
	}
	if ep.brk.done(time.Now(), !down && e.Kind != KindCanceled, down) {
		log.Warn("endpoint taken out after failing", "endpoint", ep.name, "error", e.Error())
	}
	return e, down, hold
}

// delay is how long retry waits after failure e, and says why in log: a
// 429 waited out as flow control (its waits-th such wait), else the
// backoff before try tries+1; the server's Retry-After ra when it sent one.
func (c *Client) delay(log *slog.Logger, e *Error, flow bool, waits, tries int, ra time.Duration, hasRA bool) time.Duration {
	if !flow {
		d := c.backoff(tries, ra, hasRA)
		log.Warn("model call failed, retrying", "kind", e.Kind.String(), "attempt", tries,
			"max_attempts", c.cfg.MaxAttempts, "delay", d, "error", e.Error())
		return d
	}
	d := c.backoff(waits, ra, hasRA)
	how := "rate limited, backing off"
	if hasRA {
		how = "rate limited, waiting as the server asks (Retry-After)"
	}
	log.Info(how, "wait", waits, "rate_limit_waits", c.cfg.RateLimitWaits, "delay", d)
	return d
}

// admit waits for an attempt's turn at ep: a slot at its gate, then its
// pacer (rpm / tpm), so that attempts leave at the pace they were given
// rather than in a bunch when slots free up. It runs before the attempt's
// own timeout starts: waiting for a turn is not waiting for the server. On
// failure it holds nothing; the error says which wait ctx ended in.
func (c *Client) admit(ctx context.Context, ep *endpoint, cost int) (slot, *Error) {
	turn, err := ep.gate.acquire(ctx)
	if err != nil {
		e := ep.class.classify(ctx, err)
		if limit, _ := ep.gate.state(); limit < ep.gate.max {
			e.Message += fmt.Sprintf(" (waiting for a slot: concurrency lowered to %d of %d after 429 rate limits)", limit, ep.gate.max)
			e.Hint = "set llm.rpm / llm.tpm to the endpoint's published limits to pace calls under them"
		}
		return slot{}, e
	}
	if err := ep.pacer.wait(ctx, time.Now(), cost); err != nil {
		ep.gate.release(turn, endOther)
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
