package eval

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// Arm is one variant as the runner makes its calls: the simulation opened
// with the variant's templates and settings, and the client its calls go
// through (variants on the same endpoint share one, and its limits).
type Arm struct {
	Name    string
	Session *session.Session
	Client  *llm.Client
	// Endpoint is where the arm's calls go, as the cache key names it.
	Endpoint string
	// Templates are the folders laid over the simulation's.
	Templates []string
}

// Runner runs a suite.
type Runner struct {
	Suite *Suite
	Arms  []Arm // the baseline first
	// Judge answers judge assertions, with JudgeParams; nil when the
	// suite has none.
	Judge       *llm.Client
	JudgeParams llm.Params
	// DB caches answers and keeps results; nil: neither.
	DB *DB
	// NoCache asks every call again (the answers are still cached).
	NoCache bool
	Prices  map[string]session.Price
	// Progress, when set, is told of each answer as it arrives.
	Progress func(done, total, cached int)

	mu     sync.Mutex
	asking map[string]*asked // by key: variants with the same request share one call
}

// asked is the answer of one key in this eval, made once.
type asked struct {
	once sync.Once
	a    cachedAnswer
	err  error
}

// cachedAnswer is an answer as eval.db keeps it.
type cachedAnswer struct {
	Output          json.RawMessage `json:"output,omitempty"`
	Raw             string          `json:"raw"`
	ErrorKind       string          `json:"error_kind,omitempty"`
	Error           string          `json:"error,omitempty"`
	Prompt          int             `json:"prompt_tokens"`
	Completion      int             `json:"completion_tokens"`
	LatencyMS       int64           `json:"latency_ms"`
	Attempts        int             `json:"attempts"`
	Repairs         int             `json:"repairs"`
	Endpoint        string          `json:"endpoint,omitempty"`
	PromptTruncated bool            `json:"prompt_truncated,omitempty"`
	ContextTokens   int             `json:"context_tokens,omitempty"`
}

// cacheable: an answer the model gave (valid or not) is kept; a failure
// of the endpoint or the network is asked again next time.
func cacheable(res llm.Result) bool {
	switch llm.ErrorKindOf(res.Err) {
	case llm.KindUnknown:
		return res.Err == nil
	case llm.KindSchema, llm.KindRefusal, llm.KindTruncated:
		return true
	}
	return false
}

func cached(res llm.Result) cachedAnswer {
	a := cachedAnswer{Output: res.Output, Raw: res.Raw, Prompt: res.Usage.PromptTokens, Completion: res.Usage.CompletionTokens,
		LatencyMS: res.Latency.Milliseconds(), Attempts: res.Attempts, Repairs: res.Repairs, Endpoint: res.Endpoint,
		PromptTruncated: res.PromptTruncated, ContextTokens: res.ContextTokens}
	if res.Err != nil {
		a.ErrorKind, a.Error = llm.ErrorKindOf(res.Err).String(), res.Err.Error()
	}
	return a
}

// result is a cached answer as the client would have returned it.
func (a cachedAnswer) result() llm.Result {
	res := llm.Result{Output: a.Output, Raw: a.Raw, Usage: llm.Usage{PromptTokens: a.Prompt, CompletionTokens: a.Completion},
		Latency: time.Duration(a.LatencyMS) * time.Millisecond, Attempts: a.Attempts, Repairs: a.Repairs, Endpoint: a.Endpoint,
		PromptTruncated: a.PromptTruncated, ContextTokens: a.ContextTokens}
	if a.ErrorKind != "" {
		kind, _ := llm.ParseErrorKind(a.ErrorKind)
		res.Err, res.Output = &llm.Error{Kind: kind, Message: a.Error, Attempts: a.Attempts}, nil
	}
	return res
}

// job is one call to make: a case, asked of an arm, the repeat-th time.
type job struct {
	arm, kase, repeat int
	call              *session.Call
	q                 session.RequestQuery
	key               string
}

// Run makes every call of the suite, checks every answer and returns the
// result, its summary and comparison made. The first call of each phase of
// every variant is built before any is sent, so a template that does not
// render stops the eval before anything is paid for; the others are built
// by the workers that send them, as a run's are. Interrupted (ctx
// cancelled), it returns the answers it has with Interrupted set, and
// ctx's error.
func (r *Runner) Run(ctx context.Context, cases []Case) (*Result, error) {
	res := r.newResult(cases)
	defer func(start time.Time) { res.Elapsed = time.Since(start) }(time.Now())
	calls := make([][]built, len(r.Arms))
	for a := range calls {
		calls[a] = make([]built, len(cases))
	}
	if err := r.precheck(ctx, cases, calls); err != nil {
		return nil, err
	}
	rep := r.Suite.Repeat
	res.Answers = make([]Answer, len(r.Arms)*len(cases)*rep)
	var done, hits atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(r.workers())
	for i := range res.Answers {
		g.Go(func() error {
			arm, kase, k := i/(len(cases)*rep), i/rep%len(cases), i%rep
			b, err := r.built(gctx, &calls[arm][kase], arm, cases[kase])
			if err != nil {
				return err
			}
			j := job{arm: arm, kase: kase, repeat: k, call: b.call, q: b.q, key: fmt.Sprintf("%s/%d", b.key, k)}
			ans, hit, err := r.answer(gctx, j)
			if err != nil {
				return err
			}
			res.Answers[i] = r.check(gctx, j, ans, hit)
			n := done.Add(1)
			if hit {
				hits.Add(1)
			}
			if r.Progress != nil {
				r.Progress(int(n), len(res.Answers), int(hits.Load()))
			}
			return nil
		})
	}
	err := g.Wait()
	if ctx.Err() != nil {
		res.Interrupted = true
		res.Answers = answered(res.Answers)
		summarize(res)
		return res, ctx.Err()
	}
	if err != nil {
		return nil, err
	}
	summarize(res)
	return res, nil
}

// built is the call of one case by one arm, built once for its repeats.
type built struct {
	once sync.Once
	call *session.Call
	q    session.RequestQuery
	key  string
	err  error
}

// built builds b, the call of c by arm, once.
func (r *Runner) built(ctx context.Context, b *built, arm int, c Case) (*built, error) {
	b.once.Do(func() {
		a := r.Arms[arm]
		b.call, b.q, b.err = a.Session.CallPatched(ctx, c.Phase, c.Entity, c.Tick, c.State)
		switch {
		case b.err != nil && a.Name != Baseline:
			b.err = fmt.Errorf("variant %s: case %s: %w", a.Name, c.ID(), b.err)
		case b.err != nil:
			b.err = fmt.Errorf("case %s: %w", c.ID(), b.err)
		default:
			b.key = requestKey(b.call.Key, a.Endpoint)
		}
	})
	return b, b.err
}

// precheck builds the first case of each phase for every arm.
func (r *Runner) precheck(ctx context.Context, cases []Case, calls [][]built) error {
	for arm := range r.Arms {
		seen := map[string]bool{}
		for i, c := range cases {
			if seen[c.Phase] && c.File == "" {
				continue
			}
			seen[c.Phase] = true
			if _, err := r.built(ctx, &calls[arm][i], arm, c); err != nil {
				return err
			}
		}
	}
	return nil
}

// answered keeps the answers that arrived (an interrupted eval).
func answered(all []Answer) []Answer {
	var out []Answer
	for _, a := range all {
		if a.Variant != "" {
			out = append(out, a)
		}
	}
	return out
}

// workers is how many calls are in flight at once: each distinct client's
// own workers, added.
func (r *Runner) workers() int {
	seen := map[*llm.Client]bool{}
	n := 0
	for _, a := range r.Arms {
		if !seen[a.Client] {
			seen[a.Client] = true
			n += a.Client.Workers()
		}
	}
	if r.Judge != nil {
		n += r.Judge.Workers()
	}
	return max(n, 1)
}

// requestKey is the cache key of a call (its session.Call.Key: what
// decides its answer) sent to endpoint.
func requestKey(call, endpoint string) string {
	sum := sha256.Sum256([]byte(endpoint + "\x00" + call))
	return hex.EncodeToString(sum[:])
}

// answer is the job's answer: cached, or asked and then cached.
func (r *Runner) answer(ctx context.Context, j job) (cachedAnswer, bool, error) {
	if r.DB != nil && !r.NoCache {
		a, ok, err := r.DB.answer(ctx, j.key)
		if err != nil || ok {
			return a, ok, err
		}
	}
	r.mu.Lock()
	if r.asking == nil {
		r.asking = map[string]*asked{}
	}
	k, shared := r.asking[j.key]
	if !shared {
		k = &asked{}
		r.asking[j.key] = k
	}
	r.mu.Unlock()
	k.once.Do(func() {
		res := j.call.Send(ctx, r.Arms[j.arm].Client)
		k.a = cached(res)
		if k.err = ctx.Err(); k.err != nil {
			return
		}
		if r.DB != nil && cacheable(res) {
			k.err = r.DB.putAnswer(ctx, j.key, k.a)
		}
	})
	return k.a, shared, k.err
}
