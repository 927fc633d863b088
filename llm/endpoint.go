package llm

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Endpoint is one OpenAI-compatible server a client sends calls to, with
// limits of its own (Config.Endpoints, Config.PhaseEndpoints). Zero
// Concurrency, RPM and TPM take the client's (Config.Concurrency, RPM, TPM).
type Endpoint struct {
	// Name is how status, usage and the manifest name the endpoint; empty:
	// its base URL without credentials. It never holds the key.
	Name    string
	BaseURL string
	APIKey  string
	// Model, when set, replaces the model a request names: the same model
	// is often served under another name by another server.
	Model       string
	Concurrency int
	RPM         int
	TPM         int
	// ContextTokens is the model's context on this server (0: the
	// client's Config.ContextTokens, else what the server says).
	ContextTokens int
}

// Circuit breaker of an endpoint: BreakerFailures endpoint failures in a
// row (connection refused or reset, 5xx, an attempt's timeout, an answer
// that is not an OpenAI-compatible response) take it out
// for Config.BreakerCooldown; then one call probes it, and a failed probe
// takes it out again for twice as long, up to breakerMaxCooldown.
const (
	BreakerFailures        = 3
	DefaultBreakerCooldown = 30 * time.Second
	breakerMaxCooldown     = 5 * time.Minute
)

// endpoint is an Endpoint made ready: its go-openai client, the pacer of
// its published limits, the gate of its adaptive concurrency, its circuit
// breaker, and what it answered.
type endpoint struct {
	name  string // redacted
	model string
	oa    *openai.Client
	class classifier
	pacer *pacer
	gate  *gate
	brk   breaker

	limited  atomic.Int64 // 429 rate limits
	answered atomic.Int64 // attempts answered (any HTTP answer that was not a failure of the endpoint)
	failed   atomic.Int64 // endpoint failures
	usage    usageTally

	// What askShow needs to reach the server's native API.
	baseURL string
	apiKey  string
	http    *http.Client
	windows windows
}

// name is how the endpoint is named: its Name, else its base URL without
// credentials.
func (e Endpoint) name() string {
	return cmp.Or(e.Name, RedactURL(strings.TrimRight(cmp.Or(e.BaseURL, DefaultBaseURL), "/")))
}

// newEndpoint builds ep under the client-wide settings of cfg (defaults
// filled in); secrets scrub every key the client holds.
func newEndpoint(cfg Config, ep Endpoint, secrets Secrets) *endpoint {
	ep.BaseURL = strings.TrimRight(cmp.Or(ep.BaseURL, DefaultBaseURL), "/")
	conc := cmp.Or(ep.Concurrency, cfg.Concurrency)
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = max(conc, 2)
	// A prompt of tens of kilobytes (a game master's: every character present,
	// their memories and past exchanges) goes out in one write, not in
	// 4 KiB pieces.
	tr.WriteBufferSize = 64 << 10
	shown := RedactURL(ep.BaseURL)
	oc := openai.DefaultConfig(ep.APIKey)
	oc.BaseURL = ep.BaseURL
	hc := &http.Client{Transport: transport{next: tr, secrets: secrets, limit: cfg.responseLimit(0), baseURL: shown}}
	oc.HTTPClient = hc
	set := Window{Tokens: ep.ContextTokens, Source: "context_tokens of endpoint " + ep.name()}
	if set.Tokens == 0 && cfg.ContextTokens > 0 {
		set = Window{Tokens: cfg.ContextTokens, Source: "llm.context_tokens"}
	}
	return &endpoint{
		name:  ep.name(),
		model: ep.Model,
		oa:    openai.NewClientWithConfig(oc),
		class: classifier{baseURL: shown, secrets: secrets, timeout: cfg.Timeout},
		pacer: newPacer(cmp.Or(ep.RPM, cfg.RPM), cmp.Or(ep.TPM, cfg.TPM)),
		gate:  newGate(conc, cfg.Logger),
		brk:   breaker{cooldown: cfg.BreakerCooldown, base: cfg.BreakerCooldown},

		baseURL: ep.BaseURL,
		apiKey:  ep.APIKey,
		http:    hc,
		windows: windows{set: set},
	}
}

// endpointFailure reports whether e says the endpoint, rather than the
// request, failed: the calls it would have answered go to another one.
func endpointFailure(e *Error) bool {
	switch e.Kind {
	case KindServer, KindConnection, KindTimeout, KindBadResponse:
		return true
	}
	return false
}

// breaker is an endpoint's circuit breaker (see BreakerFailures).
type breaker struct {
	mu       sync.Mutex
	fails    int           // endpoint failures in a row
	until    time.Time     // out until then; zero: in
	probing  bool          // one call is probing it after its cooldown
	cooldown time.Duration // of the next opening
	base     time.Duration
}

// usable reports whether a call may be sent to the endpoint at now.
func (b *breaker) usable(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.until.IsZero() || !b.probing && !now.Before(b.until)
}

// take marks a call sent at now: past the cooldown, it is the probe.
func (b *breaker) take(now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.until.IsZero() && !now.Before(b.until) {
		b.probing = true
	}
}

// reopens reports when the endpoint comes back (zero: it is in).
func (b *breaker) reopens() time.Time {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.until
}

// done records what became of a call sent: answered (the endpoint works),
// failed (an endpoint failure), or neither (cancelled before an answer),
// and reports whether that took the endpoint out.
func (b *breaker) done(now time.Time, answered, failed bool) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case answered:
		b.fails, b.until, b.probing, b.cooldown = 0, time.Time{}, false, b.base
	case failed && b.probing:
		b.probing = false
		b.cooldown = min(2*b.cooldown, breakerMaxCooldown)
		b.until = now.Add(b.cooldown)
		return true
	case failed:
		b.fails++
		if b.fails >= BreakerFailures && b.until.IsZero() {
			b.until = now.Add(b.cooldown)
			return true
		}
	default:
		b.probing = false
	}
	return false
}

// pick is the endpoint of pool a call's next attempt goes to: of those in
// (circuit breaker) and not in tried (the endpoints that already failed
// this call), the one with the most free slots, the fewest calls answered
// breaking ties, and one other than the endpoint named avoid (whose answer
// the call repairs) while there is one; when none is left, the one of the
// endpoints not tried that comes back first, and when every one was tried,
// the same among all. A pool of one is always its endpoint, which then
// behaves as a client of one server always did.
func pick(pool []*endpoint, tried []*endpoint, avoid string, now time.Time) *endpoint {
	if len(pool) == 1 {
		return pool[0]
	}
	if best := freest(pool, tried, avoid, now); best != nil {
		return best
	}
	if best := freest(pool, tried, "", now); best != nil {
		return best
	}
	var best *endpoint
	for _, skipTried := range []bool{true, false} {
		for _, ep := range pool {
			if skipTried && slices.Contains(tried, ep) {
				continue
			}
			if best == nil || ep.brk.reopens().Before(best.brk.reopens()) {
				best = ep
			}
		}
		if best != nil {
			return best
		}
	}
	return pool[0]
}

// freest is the endpoint of pool, in and neither in tried nor named avoid,
// with the most free slots, the fewest calls answered breaking ties; nil
// when there is none.
func freest(pool []*endpoint, tried []*endpoint, avoid string, now time.Time) *endpoint {
	var best *endpoint
	bestFree, bestN := 0, int64(0)
	for _, ep := range pool {
		if slices.Contains(tried, ep) || ep.name == avoid || !ep.brk.usable(now) {
			continue
		}
		free, n := ep.gate.free(), ep.answered.Load()
		if best == nil || free > bestFree || free == bestFree && n < bestN {
			best, bestFree, bestN = ep, free, n
		}
	}
	return best
}

// another reports whether pool has an endpoint, other than those in tried,
// that a call may go to now.
func another(pool, tried []*endpoint, now time.Time) bool {
	for _, ep := range pool {
		if !slices.Contains(tried, ep) && ep.brk.usable(now) {
			return true
		}
	}
	return false
}

// EndpointStats are what the client counted of one endpoint.
type EndpointStats struct {
	Name        string `json:"name"`
	Answered    int64  `json:"answered"` // attempts it answered
	Failed      int64  `json:"failed"`   // endpoint failures (refused, 5xx, timeouts, answers not OpenAI-compatible)
	RateLimited int64  `json:"rate_limited"`
	Usage       Usage  `json:"usage"`
	Concurrency int    `json:"concurrency"`
	Lowest      int    `json:"lowest_concurrency"`
	Out         bool   `json:"out,omitempty"` // taken out by its circuit breaker now
}

func (ep *endpoint) stats(now time.Time) EndpointStats {
	limit, lowest := ep.gate.state()
	return EndpointStats{Name: ep.name, Answered: ep.answered.Load(), Failed: ep.failed.Load(),
		RateLimited: ep.limited.Load(), Usage: ep.usage.total(), Concurrency: limit, Lowest: lowest,
		Out: !ep.brk.usable(now)}
}
