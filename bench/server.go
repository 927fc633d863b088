package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"golang.org/x/time/rate"
)

// Latency tails of the stand-in server.
const (
	TailFixed     = "fixed"     // every call takes the latency
	TailPareto    = "pareto"    // Pareto, alpha 2, mean the latency, capped at 20x
	TailLognormal = "lognormal" // log-normal, sigma 1, mean the latency, capped at 20x
)

// Tails lists the latency tails the stand-in server knows.
var Tails = []string{TailFixed, TailPareto, TailLognormal}

// tailCap bounds a heavy-tailed latency, in multiples of the mean.
const tailCap = 20

// ServerConfig is how the stand-in server behaves.
type ServerConfig struct {
	// Latency is how long a call takes once the server starts on it (the
	// mean, with a heavy tail).
	Latency time.Duration `json:"latency_ns"`
	Tail    string        `json:"tail"`
	// Concurrency is how many calls the server works on at once; more
	// wait in a queue, as on a model server with that many slots.
	Concurrency int `json:"concurrency"`
	// RPM is the requests per minute it accepts (0: no limit); over it a
	// request is answered 429 with Retry-After and counted.
	RPM  int    `json:"rpm"`
	Seed uint64 `json:"seed"`
}

// Check reports a configuration the server cannot run, naming the field.
func (c ServerConfig) Check() error {
	var errs []error
	if c.Latency < 0 {
		errs = append(errs, fmt.Errorf("latency must not be negative, got %s", c.Latency))
	}
	switch c.Tail {
	case TailFixed, TailPareto, TailLognormal:
	default:
		errs = append(errs, fmt.Errorf("tail %q: must be one of %s, %s, %s", c.Tail, TailFixed, TailPareto, TailLognormal))
	}
	if c.Concurrency < 1 {
		errs = append(errs, fmt.Errorf("server concurrency must be at least 1, got %d", c.Concurrency))
	}
	if c.RPM < 0 {
		errs = append(errs, fmt.Errorf("rpm must not be negative, got %d", c.RPM))
	}
	return errors.Join(errs...)
}

// Stats are what the stand-in server counted since it started.
type Stats struct {
	Requests         int64 `json:"requests"`      // chat completion requests received
	Answered         int64 `json:"answered"`      // answered 200
	RateLimited      int64 `json:"rate_limited"`  // answered 429 (over the rpm limit)
	BadRequests      int64 `json:"bad_requests"`  // answered 400: a request it could not answer
	MaxInFlight      int64 `json:"max_in_flight"` // most calls worked on at once (at most the concurrency)
	MaxQueued        int64 `json:"max_queued"`    // most calls waiting for a slot at once
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
}

// Sub is s minus an earlier snapshot t (the maxima are s's).
func (s Stats) Sub(t Stats) Stats {
	s.Requests -= t.Requests
	s.Answered -= t.Answered
	s.RateLimited -= t.RateLimited
	s.BadRequests -= t.BadRequests
	s.PromptTokens -= t.PromptTokens
	s.CompletionTokens -= t.CompletionTokens
	return s
}

// Add is s plus the count of another server; the maxima are added too, the
// most the servers held at once between them at most.
func (s Stats) Add(t Stats) Stats {
	s.Requests += t.Requests
	s.Answered += t.Answered
	s.RateLimited += t.RateLimited
	s.BadRequests += t.BadRequests
	s.MaxInFlight += t.MaxInFlight
	s.MaxQueued += t.MaxQueued
	s.PromptTokens += t.PromptTokens
	s.CompletionTokens += t.CompletionTokens
	return s
}

// Server is the stand-in OpenAI-compatible endpoint: POST
// /v1/chat/completions answers every IntentionResponse and MasterOutput
// request with a valid answer built from the request's own json_schema, after
// the configured latency, holding one of Concurrency slots; GET /bench/stats
// returns its Stats.
type Server struct {
	cfg     ServerConfig
	slots   chan struct{}
	limiter *rate.Limiter

	mu  sync.Mutex
	rng *rand.Rand

	requests, answered, rateLimited, badRequests atomic.Int64
	inFlight, maxInFlight, queued, maxQueued     atomic.Int64
	promptTokens, completionTokens               atomic.Int64
}

// NewServer builds the stand-in server's handler.
func NewServer(cfg ServerConfig) (*Server, error) {
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.Concurrency), rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed))}
	if cfg.RPM > 0 {
		perSecond := float64(cfg.RPM) / 60
		s.limiter = rate.NewLimiter(rate.Limit(perSecond), max(1, int(perSecond)))
	}
	return s, nil
}

// Stats returns what the server counted so far.
func (s *Server) Stats() Stats {
	return Stats{
		Requests: s.requests.Load(), Answered: s.answered.Load(), RateLimited: s.rateLimited.Load(),
		BadRequests: s.badRequests.Load(), MaxInFlight: s.maxInFlight.Load(), MaxQueued: s.maxQueued.Load(),
		PromptTokens: s.promptTokens.Load(), CompletionTokens: s.completionTokens.Load(),
	}
}

// ServeHTTP routes the server's three endpoints; anything else is a 404 in
// OpenAI's error format.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/chat/completions":
		s.chat(w, r)
	case r.Method == http.MethodGet && r.URL.Path == "/v1/models":
		writeJSON(w, http.StatusOK, nil, map[string]any{"object": "list", "data": []any{map[string]any{"id": "bench", "object": "model"}}})
	case r.Method == http.MethodGet && r.URL.Path == "/bench/stats":
		writeJSON(w, http.StatusOK, nil, s.Stats())
	default:
		writeError(w, http.StatusNotFound, nil, "invalid_request_error", "unknown_url", fmt.Sprintf("Unknown request URL: %s %s", r.Method, r.URL.Path))
	}
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	if s.limiter != nil {
		res := s.limiter.Reserve()
		if d := res.Delay(); d > 0 {
			res.Cancel()
			s.rateLimited.Add(1)
			h := http.Header{}
			h.Set("Retry-After", strconv.Itoa(int(math.Ceil(d.Seconds()))))
			h.Set("Retry-After-Ms", strconv.FormatInt(max(1, (d+time.Millisecond-1).Milliseconds()), 10))
			writeError(w, http.StatusTooManyRequests, h, "requests", "rate_limit_exceeded",
				fmt.Sprintf("Rate limit reached: %d requests per minute. Please try again in %s.", s.cfg.RPM, d.Round(time.Millisecond)))
			return
		}
	}
	up(&s.queued, &s.maxQueued)
	select {
	case s.slots <- struct{}{}:
		s.queued.Add(-1)
	case <-r.Context().Done():
		s.queued.Add(-1)
		return
	}
	defer func() { <-s.slots }()
	up(&s.inFlight, &s.maxInFlight)
	defer s.inFlight.Add(-1)
	due := time.Now().Add(s.latency())

	body, err := io.ReadAll(r.Body)
	if err != nil {
		return // the client went away
	}
	c := &openaitest.Call{N: int(s.requests.Load()), Body: body, Header: r.Header}
	if err := json.Unmarshal(body, &c.Request); err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, nil, "invalid_request_error", "", "We could not parse the JSON body of your request: "+err.Error())
		return
	}
	content, err := answer(c, s.cfg.Seed)
	if err != nil {
		s.badRequests.Add(1)
		writeError(w, http.StatusBadRequest, nil, "invalid_request_error", "", "stand-in server: "+err.Error())
		return
	}
	promptBytes := 0
	for _, m := range c.Messages() {
		promptBytes += len(m.Content)
	}
	prompt, completion := tokens(promptBytes), tokens(len(content))

	if wait := time.Until(due); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-r.Context().Done():
			t.Stop()
			return
		}
	}
	s.answered.Add(1)
	s.promptTokens.Add(int64(prompt))
	s.completionTokens.Add(int64(completion))
	writeJSON(w, http.StatusOK, nil, map[string]any{
		"id":      "chatcmpl-bench",
		"object":  "chat.completion",
		"created": time.Now().Unix(),
		"model":   c.Request.Model,
		"choices": []any{map[string]any{
			"index":         0,
			"message":       map[string]any{"role": "assistant", "content": content},
			"finish_reason": "stop",
		}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
	})
}

// tokens estimates the tokens of n bytes of English text: 4 bytes a token.
func tokens(n int) int { return (n + 3) / 4 }

// up adds one to n and raises peak to n when it is higher.
func up(n, peak *atomic.Int64) {
	v := n.Add(1)
	for {
		p := peak.Load()
		if v <= p || peak.CompareAndSwap(p, v) {
			return
		}
	}
}

// latency draws how long the next call takes.
func (s *Server) latency() time.Duration {
	l := float64(s.cfg.Latency)
	if l == 0 || s.cfg.Tail == TailFixed {
		return s.cfg.Latency
	}
	s.mu.Lock()
	u, z := 1-s.rng.Float64(), s.rng.NormFloat64()
	s.mu.Unlock()
	var d float64
	switch s.cfg.Tail {
	case TailPareto: // alpha 2: mean = 2 x_m
		d = (l / 2) / math.Sqrt(u)
	case TailLognormal: // sigma 1: mean = exp(mu + 1/2)
		d = math.Exp(math.Log(l) - 0.5 + z)
	}
	return time.Duration(min(d, tailCap*l))
}

// answer builds the content of a valid answer to c with openaitest's
// generator, from the request's own schema: an intention, or a MasterOutput
// with the tick and location of the schema's enums and an update for every
// character it lists, each staying or moving to one of its location enum's
// values (half of them move).
func answer(c *openaitest.Call, seed uint64) (string, error) {
	name := c.SchemaName()
	switch {
	case c.Schema() == nil:
		return "", errors.New("no response_format json_schema: this server answers structured-output calls only")
	case name != "IntentionResponse" && name != "MasterOutput":
		return "", fmt.Errorf("json_schema %q: this server answers IntentionResponse and MasterOutput only", name)
	}
	tick, loc := c.SchemaConst("tick"), c.SchemaConst("location_id")
	if name == "MasterOutput" && (tick == "" || loc == "") {
		return "", errors.New("MasterOutput schema: properties.tick and properties.location_id need a single enum value each")
	}
	placed := map[string]bool{}
	v, err := openaitest.Instance(c, func(pointer string, enum []any) any {
		id, ok := strings.CutPrefix(pointer, "/characters/")
		if id, ok = strings.CutSuffix(id, "/location"); !ok || strings.Contains(id, "/") {
			return nil
		}
		placed[id] = true
		h := hash(seed, tick, id)
		if h%2 == 0 && slices.ContainsFunc(enum, func(v any) bool { return fmt.Sprint(v) == loc }) {
			return loc
		}
		return enum[(h>>1)%uint64(len(enum))]
	})
	if err != nil {
		return "", err
	}
	root, _ := v.(map[string]any)
	if chars, ok := root["characters"].(map[string]any); ok {
		for id := range chars {
			if !placed[id] {
				return "", fmt.Errorf("MasterOutput schema: characters.%s has no location enum", id)
			}
		}
	} else if name == "MasterOutput" {
		return "", errors.New("MasterOutput schema: no properties.characters")
	}
	b, err := json.Marshal(v)
	return string(b), err
}

func hash(seed uint64, parts ...string) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, p := range parts {
		h.Write([]byte{0})
		io.WriteString(h, p)
	}
	return h.Sum64()
}

func writeJSON(w http.ResponseWriter, status int, h http.Header, v any) {
	for k, vs := range h {
		w.Header()[k] = vs
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, h http.Header, typ, code, msg string) {
	e := map[string]any{"message": msg, "type": typ}
	if code != "" {
		e["code"] = code
	}
	writeJSON(w, status, h, map[string]any{"error": e})
}

// Serve runs the stand-in server on a free port of 127.0.0.1 until ctx ends;
// ready is called with its base URL (ending in /v1) once it listens.
func Serve(ctx context.Context, cfg ServerConfig, ready func(url string)) error {
	s, err := NewServer(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	ready("http://" + ln.Addr().String() + "/v1")
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); errors.Is(err, context.DeadlineExceeded) {
		// Answers still being delayed for calls the run has given up on
		// (work ahead of a stopped run) need not be finished: the measured
		// run is over, so the server closes what is left.
		return srv.Close()
	} else if err != nil {
		return err
	}
	return nil
}
