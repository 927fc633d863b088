package eval

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/arbiter-sim/arbiter/internal/stats"
)

// Summary is one variant's figures over every answer.
type Summary struct {
	Variant string `json:"variant"`
	Answers int    `json:"answers"`
	Cached  int    `json:"cached"`
	// SchemaValid is the share of answers that passed their schema.
	SchemaValid          float64 `json:"schema_valid_rate"`
	Repairs              int     `json:"repairs"`
	Fallbacks            int     `json:"fallbacks"`
	MeanPromptTokens     float64 `json:"mean_prompt_tokens"`
	MeanCompletionTokens float64 `json:"mean_completion_tokens"`
	// CostUSD is what the answers cost; nil when a model has no price.
	CostUSD      *float64 `json:"cost_usd"`
	P50LatencyMS int64    `json:"p50_latency_ms"`
	P95LatencyMS int64    `json:"p95_latency_ms"`
	Rates        []Rate   `json:"rates"`
}

// Rate is how often an assertion passed for a variant, with its 95%
// interval (Wilson). Answers the judge could not judge are counted in
// JudgeErrors, not in N.
type Rate struct {
	Phase       string   `json:"phase"`
	Assertion   string   `json:"assertion"`
	Pass        int      `json:"pass"`
	N           int      `json:"n"`
	JudgeErrors int      `json:"judge_errors"`
	Rate        float64  `json:"rate"`
	Low         float64  `json:"low"`
	High        float64  `json:"high"`
	MeanScore   *float64 `json:"mean_score,omitempty"`
}

// Comparison is a variant against the baseline on the same cases, for one
// assertion: a case is a win when the variant's answers passed more often
// (or a judge scored them higher) than the baseline's. P is the two-sided
// sign test's p-value over the cases that differ.
type Comparison struct {
	Variant   string  `json:"variant"`
	Against   string  `json:"against"`
	Phase     string  `json:"phase"`
	Assertion string  `json:"assertion"`
	Wins      int     `json:"wins"`
	Losses    int     `json:"losses"`
	Ties      int     `json:"ties"`
	P         float64 `json:"p"`
	// Scored: compared by the judge's mean score rather than pass rate.
	Scored bool `json:"scored"`
}

// Threshold is one assertion's pass rate for one variant against its
// minimum.
type Threshold struct {
	Variant   string  `json:"variant"`
	Phase     string  `json:"phase"`
	Assertion string  `json:"assertion"`
	Rate      float64 `json:"rate"`
	N         int     `json:"n"`
	Min       float64 `json:"min_pass_rate"`
	Passed    bool    `json:"passed"`
}

func decoded(raw json.RawMessage) any {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return v
}

// summarize fills r's summaries, comparisons with the baseline and
// thresholds from its answers.
func summarize(r *Result) {
	r.Summaries, r.Comparisons, r.Thresholds = nil, nil, nil
	for _, v := range r.Variants {
		r.Summaries = append(r.Summaries, summary(r, v.Name))
	}
	for _, v := range r.Variants[min(1, len(r.Variants)):] {
		r.Comparisons = append(r.Comparisons, Compare(r, v.Name, r, Baseline)...)
	}
	r.Passed = !r.Interrupted
	for _, s := range r.Summaries {
		for _, rate := range s.Rates {
			min := minRate(r, rate.Phase, rate.Assertion)
			t := Threshold{Variant: s.Variant, Phase: rate.Phase, Assertion: rate.Assertion, Rate: rate.Rate, N: rate.N, Min: min,
				Passed: rate.N > 0 && rate.Rate >= min-1e-12 || rate.N == 0 && min == 0}
			r.Passed = r.Passed && t.Passed
			r.Thresholds = append(r.Thresholds, t)
		}
	}
}

func minRate(r *Result, phase, name string) float64 {
	for _, a := range r.Assertions {
		if a.Phase == phase && a.Name == name {
			return a.MinPassRate
		}
	}
	return 1
}

func summary(r *Result, variant string) Summary {
	s := Summary{Variant: variant}
	var lat []int64
	var prompt, completion, valid int
	cost, priced := 0.0, true
	for _, a := range r.Answers {
		if a.Variant != variant {
			continue
		}
		s.Answers++
		if a.Cached {
			s.Cached++
		}
		if a.Error == "" {
			valid++
		}
		if a.Verdict.Fallback {
			s.Fallbacks++
		}
		s.Repairs += a.Repairs
		prompt += a.PromptTokens
		completion += a.CompletionTokens
		lat = append(lat, a.LatencyMS)
		if a.CostUSD == nil {
			priced = false
		} else {
			cost += *a.CostUSD
		}
	}
	if s.Answers > 0 {
		n := float64(s.Answers)
		s.SchemaValid, s.MeanPromptTokens, s.MeanCompletionTokens = float64(valid)/n, float64(prompt)/n, float64(completion)/n
		s.P50LatencyMS, s.P95LatencyMS = percentile(lat, 0.5), percentile(lat, 0.95)
	}
	if priced && s.Answers > 0 {
		s.CostUSD = &cost
	}
	for _, as := range r.Assertions {
		s.Rates = append(s.Rates, rate(r, variant, as))
	}
	return s
}

func rate(r *Result, variant string, as AssertionInfo) Rate {
	rt := Rate{Phase: as.Phase, Assertion: as.Name}
	var scores []float64
	for _, a := range r.Answers {
		if a.Variant != variant || r.Cases[a.Case].Phase != as.Phase {
			continue
		}
		o, ok := outcomeOf(a, as.Name)
		switch {
		case !ok:
		case o.Pass == nil:
			rt.JudgeErrors++
		default:
			rt.N++
			if *o.Pass {
				rt.Pass++
			}
			if o.Score != nil {
				scores = append(scores, *o.Score)
			}
		}
	}
	if rt.N > 0 {
		rt.Rate = float64(rt.Pass) / float64(rt.N)
		rt.Low, rt.High = stats.Wilson(rt.Pass, rt.N)
	}
	if len(scores) > 0 {
		m := mean(scores)
		rt.MeanScore = &m
	}
	return rt
}

func outcomeOf(a Answer, name string) (Outcome, bool) {
	for _, o := range a.Outcomes {
		if o.Assertion == name {
			return o, true
		}
	}
	return Outcome{}, false
}

// Compare pairs variant of a with against of b on the cases both have
// (by Case.ID), for every assertion both have.
func Compare(a *Result, variant string, b *Result, against string) []Comparison {
	var out []Comparison
	for _, as := range a.Assertions {
		if !slices.ContainsFunc(b.Assertions, func(o AssertionInfo) bool { return o.Phase == as.Phase && o.Name == as.Name }) {
			continue
		}
		mine, scored := perCase(a, variant, as)
		theirs, _ := perCase(b, against, as)
		c := Comparison{Variant: variant, Against: against, Phase: as.Phase, Assertion: as.Name, Scored: scored}
		for _, id := range sortedKeys(mine) {
			t, ok := theirs[id]
			switch {
			case !ok:
			case mine[id] > t+1e-9:
				c.Wins++
			case mine[id] < t-1e-9:
				c.Losses++
			default:
				c.Ties++
			}
		}
		c.P = stats.SignTest(c.Wins, c.Losses)
		out = append(out, c)
	}
	return out
}

// perCase is, by case id, variant's mean pass (or judge score, when every
// judged answer has one) over its repeats of the assertion.
func perCase(r *Result, variant string, as AssertionInfo) (map[string]float64, bool) {
	sums, counts := map[string]float64{}, map[string]int{}
	scored := as.Kind == "judge"
	for _, a := range r.Answers {
		if a.Variant != variant || r.Cases[a.Case].Phase != as.Phase {
			continue
		}
		o, ok := outcomeOf(a, as.Name)
		if !ok || o.Pass == nil {
			continue
		}
		id := r.Cases[a.Case].ID()
		v := 0.0
		switch {
		case scored && o.Score != nil:
			v = *o.Score
		case *o.Pass:
			v = 1
		}
		sums[id] += v
		counts[id]++
	}
	for id := range sums {
		sums[id] /= float64(counts[id])
	}
	return sums, scored
}

// percentile is the p-th percentile of xs (nearest rank).
func percentile(xs []int64, p float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

func mean(xs []float64) float64 {
	sum := 0.0
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}
