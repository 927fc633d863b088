package llm

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"time"
)

// DefaultBaseURL is the endpoint used when Config.BaseURL is empty.
const DefaultBaseURL = "https://api.openai.com/v1"

// Config configures a Client. Start from DefaultConfig: in a Config literal,
// Depth 0 means "send no history" and RepairAttempts 0 means "never repair".
// Zero Timeout, MaxAttempts, Concurrency, BackoffBase and BackoffMax take
// their defaults.
type Config struct {
	BaseURL string // OpenAI-compatible endpoint ending in /v1; DefaultBaseURL when empty
	APIKey  string // may be empty when BaseURL is set (local servers)

	Timeout        time.Duration // per HTTP attempt (default 2m)
	MaxAttempts    int           // HTTP attempts per request sent, for transient errors (default 2: seed 002 retries once)
	RateLimitWaits int           // 429 rate limits waited out per request sent, not counted as attempts (default 8)
	RepairAttempts int           // re-asks after invalid JSON or a schema mismatch (default 1)
	Concurrency    int           // calls in flight in CreateEach and HTTP attempts over the whole client, lowered for a while after 429s (default 4)
	Depth          int           // history exchanges sent back per entity (default 3)
	BackoffBase    time.Duration // first retry delay before jitter (default 500ms)
	BackoffMax     time.Duration // cap of any retry delay, Retry-After included (default 20s)
	// RPM and TPM are the endpoint's published limits, requests and tokens
	// per minute (0: unknown). The client paces its attempts under them so
	// that none is answered 429 (see pacer); with neither, it finds the
	// rate the server allows by lowering its concurrency on 429s.
	RPM int
	TPM int
	// MaxResponseBytes is the largest body read from the server; a larger
	// answer fails its call (KindOversized). 0: a few times the largest
	// answer the request's max_tokens allows (see responseLimit).
	MaxResponseBytes int64
	// ContextTokens is the model's context in tokens (llm.context_tokens;
	// 0: what an Ollama server says, else unknown). An answer whose
	// prompt_tokens reach it had its prompt cut by the server
	// (Result.PromptTruncated).
	ContextTokens int

	// Endpoints, when set, are the servers calls go to instead of BaseURL
	// and APIKey: each call to the one with the most free capacity, each
	// with its own limits, 429 handling, adaptive concurrency and circuit
	// breaker. PhaseEndpoints names a phase's own list (by
	// Request.Phase); a phase it does not name uses Endpoints.
	Endpoints      []Endpoint
	PhaseEndpoints map[string][]Endpoint
	// BreakerCooldown is how long an endpoint that failed BreakerFailures
	// times in a row is left out before a call probes it again (default
	// 30s, doubling after a failed probe up to 5m).
	BreakerCooldown time.Duration
	// BatchPoll is the wait between two polls of a Batch API job
	// (CompleteBatch); 0 is DefaultBatchPoll.
	BatchPoll time.Duration

	Logger *slog.Logger // retries and repairs are logged here; discarded when nil

	// Cassette, when set, records every chat completion or answers them
	// from a recording (see Cassette); replaying with no live misses, the
	// client needs no endpoint or key.
	Cassette *Cassette
}

// Defaults of Config.
const (
	DefaultTimeout        = 2 * time.Minute
	DefaultMaxAttempts    = 2
	DefaultRateLimitWaits = 8 // backoff ceilings of 0.5 s doubling to 20 s add up past a minute, a per-minute limit's window
	DefaultRepairAttempts = 1
	DefaultConcurrency    = 4
	DefaultDepth          = 3
	DefaultBackoffBase    = 500 * time.Millisecond
	DefaultBackoffMax     = 20 * time.Second

	// MaxConcurrency bounds Concurrency and an endpoint's: far above what
	// one server answers at once, and low enough that a typo of a few
	// zeros is refused rather than taken for a plan.
	MaxConcurrency = 10000
)

// DefaultConfig returns a Config with every default filled in and the
// default endpoint.
func DefaultConfig() Config {
	return Config{
		BaseURL:        DefaultBaseURL,
		Timeout:        DefaultTimeout,
		MaxAttempts:    DefaultMaxAttempts,
		RateLimitWaits: DefaultRateLimitWaits,
		RepairAttempts: DefaultRepairAttempts,
		Concurrency:    DefaultConcurrency,
		Depth:          DefaultDepth,
		BackoffBase:    DefaultBackoffBase,
		BackoffMax:     DefaultBackoffMax,
	}
}

// Validate reports every invalid field at once, naming the config key.
func (c Config) Validate() error {
	var errs []error
	if c.BaseURL != "" {
		u, err := url.Parse(c.BaseURL)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("llm.base_url %q is not a URL", RedactURL(c.BaseURL)))
		case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
			errs = append(errs, fmt.Errorf("llm.base_url %q must be an http:// or https:// URL, e.g. http://127.0.0.1:11434/v1", RedactURL(c.BaseURL)))
		}
	}
	if (c.BaseURL == "" || c.BaseURL == DefaultBaseURL) && c.APIKey == "" && len(c.Endpoints) == 0 && !c.Cassette.ReplayOnly() {
		errs = append(errs, errors.New("no API key for "+DefaultBaseURL+": set OPENAI_API_KEY, or llm.base_url for a local server"))
	}
	for _, f := range []struct {
		key string
		v   int64
	}{
		{"llm.timeout", int64(c.Timeout)},
		{"llm.max_attempts", int64(c.MaxAttempts)},
		{"llm.rate_limit_waits", int64(c.RateLimitWaits)},
		{"llm.repair_attempts", int64(c.RepairAttempts)},
		{"llm.concurrency", int64(c.Concurrency)},
		{"llm.depth", int64(c.Depth)},
		{"llm.backoff_base", int64(c.BackoffBase)},
		{"llm.backoff_max", int64(c.BackoffMax)},
		{"llm.max_response_bytes", c.MaxResponseBytes},
		{"llm.rpm", int64(c.RPM)},
		{"llm.tpm", int64(c.TPM)},
		{"llm.context_tokens", int64(c.ContextTokens)},
	} {
		if f.v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative", f.key))
		}
	}
	if c.Concurrency > MaxConcurrency {
		errs = append(errs, fmt.Errorf("llm.concurrency must be at most %d, got %d", MaxConcurrency, c.Concurrency))
	}
	if c.BreakerCooldown < 0 {
		errs = append(errs, errors.New("llm.breaker_cooldown must not be negative"))
	}
	check := func(key string, eps []Endpoint) {
		for i, ep := range eps {
			at := fmt.Sprintf("%s[%d]", key, i)
			if ep.BaseURL == "" {
				errs = append(errs, fmt.Errorf("%s.base_url must be set", at))
			} else if u, err := url.Parse(ep.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				errs = append(errs, fmt.Errorf("%s.base_url %q must be an http:// or https:// URL", at, RedactURL(ep.BaseURL)))
			}
			if ep.Concurrency < 0 || ep.RPM < 0 || ep.TPM < 0 || ep.ContextTokens < 0 {
				errs = append(errs, fmt.Errorf("%s: concurrency, rpm, tpm and context_tokens must not be negative", at))
			}
			if ep.Concurrency > MaxConcurrency {
				errs = append(errs, fmt.Errorf("%s.concurrency must be at most %d, got %d", at, MaxConcurrency, ep.Concurrency))
			}
		}
	}
	check("llm.endpoints", c.Endpoints)
	for _, phase := range slices.Sorted(maps.Keys(c.PhaseEndpoints)) {
		check("phases."+phase+".endpoints", c.PhaseEndpoints[phase])
	}
	errs = append(errs, c.sameNames()...)
	if c.BackoffBase > 0 && c.BackoffMax > 0 && c.BackoffBase > c.BackoffMax {
		errs = append(errs, fmt.Errorf("llm.backoff_base %s is larger than llm.backoff_max %s", c.BackoffBase, c.BackoffMax))
	}
	return errors.Join(errs...)
}

// sameNames refuses two entries of the endpoint lists with one name
// (their own, or their URL when unnamed) unless they are the same endpoint
// listed for two phases: status, usage and the circuit breakers tell
// endpoints apart by name, so two servers of one name would be counted,
// and taken out, as one.
func (c Config) sameNames() []error {
	type list struct {
		key string
		eps []Endpoint
	}
	lists := []list{{"llm.endpoints", c.Endpoints}}
	for _, phase := range slices.Sorted(maps.Keys(c.PhaseEndpoints)) {
		lists = append(lists, list{"phases." + phase + ".endpoints", c.PhaseEndpoints[phase]})
	}
	type entry struct {
		list, at string
		ep       Endpoint
	}
	var errs []error
	seen := map[string]entry{}
	for _, l := range lists {
		for i, ep := range l.eps {
			e := entry{l.key, fmt.Sprintf("%s[%d]", l.key, i), ep}
			first, ok := seen[ep.name()]
			switch {
			case !ok:
				seen[ep.name()] = e
			case first.list == e.list:
				errs = append(errs, fmt.Errorf("%s and %s are both named %q: give each endpoint a name of its own", first.at, e.at, ep.name()))
			case first.ep != ep:
				errs = append(errs, fmt.Errorf("%s and %s are both named %q but are not the same endpoint: give each a name of its own", first.at, e.at, ep.name()))
			}
		}
	}
	return errs
}

// withDefaults fills the zero fields whose zero value means nothing.
func (c Config) withDefaults() Config {
	if c.BaseURL == "" {
		c.BaseURL = DefaultBaseURL
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = DefaultMaxAttempts
	}
	if c.Concurrency == 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.BackoffBase == 0 {
		c.BackoffBase = DefaultBackoffBase
	}
	if c.BackoffMax == 0 {
		c.BackoffMax = max(DefaultBackoffMax, c.BackoffBase)
	}
	if c.BreakerCooldown == 0 {
		c.BreakerCooldown = DefaultBreakerCooldown
	}
	if c.BatchPoll <= 0 {
		c.BatchPoll = DefaultBatchPoll
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}
