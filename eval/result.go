package eval

import (
	"context"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// Result is one eval: every answer with its checks, each variant's
// summary, the comparison with the baseline, and the thresholds' verdict.
type Result struct {
	ID int64 `json:"id"` // in eval.db; 0 when not stored
	// Against is the stored eval this one is set beside (Against); 0 for
	// an eval's own result.
	Against    int64           `json:"against,omitempty"`
	Simulation string          `json:"simulation"`
	Suite      string          `json:"suite"`
	Started    time.Time       `json:"started"`
	Variants   []VariantInfo   `json:"variants"` // the baseline first
	Assertions []AssertionInfo `json:"assertions"`
	Cases      []Case          `json:"cases"`
	Repeat     int             `json:"repeat"`
	Answers    []Answer        `json:"answers"`
	// Interrupted: the eval was stopped; Answers holds those that came.
	Interrupted bool          `json:"interrupted"`
	Summaries   []Summary     `json:"summaries"`
	Comparisons []Comparison  `json:"comparisons"`
	Thresholds  []Threshold   `json:"thresholds"`
	Passed      bool          `json:"passed"`
	Elapsed     time.Duration `json:"elapsed_ns"`
}

// VariantInfo says what a variant changes.
type VariantInfo struct {
	Name      string         `json:"name"`
	Templates []string       `json:"templates,omitempty"`
	Model     string         `json:"model,omitempty"`
	Settings  map[string]any `json:"settings,omitempty"`
}

// AssertionInfo is an assertion of the suite, as a result lists it.
type AssertionInfo struct {
	Name        string  `json:"name"`
	Phase       string  `json:"phase"`
	Kind        string  `json:"kind"`
	MinPassRate float64 `json:"min_pass_rate"`
}

// Always-on assertions: the answer's schema, and the kind's own checks.
const (
	AssertSchema = "schema"
	AssertChecks = "kind checks"
)

// Answer is one answer of a variant to a case, with its checks.
type Answer struct {
	Case             int             `json:"case"` // index in Result.Cases
	Variant          string          `json:"variant"`
	Repeat           int             `json:"repeat"`
	Output           any             `json:"output"`
	Raw              string          `json:"raw"`
	Error            string          `json:"error,omitempty"`
	ErrorKind        string          `json:"error_kind,omitempty"`
	PromptTokens     int             `json:"prompt_tokens"`
	CompletionTokens int             `json:"completion_tokens"`
	LatencyMS        int64           `json:"latency_ms"`
	CostUSD          *float64        `json:"cost_usd"`
	Repairs          int             `json:"repairs"`
	Cached           bool            `json:"cached"`
	Verdict          session.Verdict `json:"verdict"`
	Outcomes         []Outcome       `json:"outcomes"`
	// System and User are the rendered prompts sent, for the page's
	// differences between variants.
	System string `json:"system"`
	User   string `json:"user"`
}

func (r *Runner) newResult(cases []Case) *Result {
	res := &Result{Suite: r.Suite.Path, Started: time.Now().UTC(), Cases: cases, Repeat: r.Suite.Repeat}
	if len(r.Arms) > 0 {
		res.Simulation = r.Arms[0].Session.Sim.ID
	}
	for _, a := range r.Arms {
		info := VariantInfo{Name: a.Name, Templates: a.Templates}
		for _, v := range r.Suite.Variants {
			if v.Name == a.Name {
				info.Model, info.Settings = v.Model, v.Settings
			}
		}
		res.Variants = append(res.Variants, info)
	}
	phases := map[string]bool{}
	for _, c := range cases {
		phases[c.Phase] = true
	}
	for _, phase := range sortedKeys(phases) {
		res.Assertions = append(res.Assertions,
			AssertionInfo{Name: AssertSchema, Phase: phase, Kind: AssertSchema, MinPassRate: r.Suite.MinPassRate},
			AssertionInfo{Name: AssertChecks, Phase: phase, Kind: AssertChecks, MinPassRate: r.Suite.MinPassRate})
		for _, a := range r.Suite.Assertions[phase] {
			res.Assertions = append(res.Assertions, AssertionInfo{Name: a.Name, Phase: phase, Kind: a.Kind, MinPassRate: a.MinPassRate})
		}
	}
	return res
}

// check reads ans as the kind does and runs every assertion of its phase.
func (r *Runner) check(ctx context.Context, j job, ca cachedAnswer, hit bool) Answer {
	arm := r.Arms[j.arm]
	res := ca.result()
	res.Request = j.call.Request
	v := arm.Session.Judge(j.q, res)
	a := Answer{Case: j.kase, Variant: arm.Name, Repeat: j.repeat, Raw: ca.Raw, Error: ca.Error, ErrorKind: ca.ErrorKind,
		PromptTokens: ca.Prompt, CompletionTokens: ca.Completion, LatencyMS: ca.LatencyMS, Repairs: ca.Repairs, Cached: hit,
		Verdict: v}
	a.System, a.User = prompts(j.call.Messages)
	if res.Output != nil {
		a.Output = decoded(res.Output)
	}
	truncated := session.Truncated(res)
	if truncated != "" && a.Error == "" {
		a.Error, a.ErrorKind = truncated, "prompt_truncated"
	}
	if p, ok := r.Prices[j.call.Request.Params.Model]; ok {
		c := p.Cost(ca.Prompt, ca.Completion)
		a.CostUSD = &c
	}
	schema := outcome(AssertSchema, res.Err == nil, schemaDetail(res))
	if truncated != "" {
		schema = outcome(AssertSchema, false, truncated)
	}
	a.Outcomes = append(a.Outcomes, schema)
	a.Outcomes = append(a.Outcomes, outcome(AssertChecks, len(v.Problems) == 0, problemsDetail(v)))
	ans := session.Answer{Output: res.Output, Verdict: v}
	for _, as := range r.Suite.Assertions[j.q.Phase] {
		if as.Kind == "judge" {
			a.Outcomes = append(a.Outcomes, r.judge(ctx, as, j, res))
			continue
		}
		a.Outcomes = append(a.Outcomes, as.judge(ans, a.CostUSD, res.Latency))
	}
	return a
}

func schemaDetail(res llm.Result) string {
	if res.Err != nil {
		return llm.ErrorKindOf(res.Err).String() + ": " + res.Err.Error()
	}
	return "valid"
}

func problemsDetail(v session.Verdict) string {
	switch len(v.Problems) {
	case 0:
		return "passed"
	case 1:
		return v.Problems[0]
	}
	return v.Problems[0] + " (and more)"
}

// prompts are the system prompt and the last user prompt of msgs.
func prompts(msgs []llm.Message) (system, user string) {
	if len(msgs) > 0 && msgs[0].Role == "system" {
		system = msgs[0].Content
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" {
			return system, msgs[i].Content
		}
	}
	return system, ""
}
