package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/arbiter-sim/arbiter/session"
)

// assertion reads one assertion of phase: a mapping with one assertion key
// and, optionally, name and min_pass_rate.
func (p *parser) assertion(phase string, n yaml.Node, rate float64) *Assertion {
	var m map[string]any
	if err := n.Decode(&m); err != nil || n.Kind != yaml.MappingNode {
		p.fail(n.Line, "assertions.%s: want a mapping such as {length: {pointer: /intention, max: 200}}", phase)
		return nil
	}
	a := &Assertion{Phase: phase, Line: n.Line, MinPassRate: rate}
	if name, ok := m["name"]; ok {
		a.Name, _ = name.(string)
		delete(m, "name")
	}
	if r, ok := m["min_pass_rate"]; ok {
		f, isNum := number(r)
		if !isNum {
			p.fail(n.Line, "min_pass_rate: want a number between 0 and 1, got %v", r)
		}
		a.MinPassRate = p.rate(n.Line, "min_pass_rate", f)
		delete(m, "min_pass_rate")
	}
	if len(m) != 1 {
		p.fail(n.Line, "assertions.%s: want exactly one assertion per entry (known: %s), got %s", phase, knownNames(p.kind), strings.Join(slices.Sorted(maps.Keys(m)), ", "))
		return nil
	}
	for kind, arg := range m {
		a.Kind = kind
		if err := p.argument(a, arg); err != nil {
			p.fail(n.Line, "assertions.%s: %v", phase, err)
			return nil
		}
	}
	if a.Name == "" {
		a.Name = a.Kind
		if a.pointer != "" {
			a.Name += " " + a.pointer
		}
	}
	return a
}

// argument reads the argument of a's kind.
func (p *parser) argument(a *Assertion, arg any) error {
	if ka, ok := p.kind[a.Kind]; ok {
		check, err := ka.Parse(arg)
		a.kindCheck = check
		return err
	}
	bad := func() error { return fmt.Errorf("%s: want %s", a.Kind, common[a.Kind]) }
	switch a.Kind {
	case "equals", "contains", "matches", "length":
		m, ok := arg.(map[string]any)
		if !ok {
			return bad()
		}
		a.pointer, _ = m["pointer"].(string)
		if a.pointer != "" && !strings.HasPrefix(a.pointer, "/") {
			return fmt.Errorf("%s: pointer %q must start with / (a JSON pointer)", a.Kind, a.pointer)
		}
		return a.pointerArgs(m, bad)
	case "no_fallback":
		if b, ok := arg.(bool); !ok || !b {
			return bad()
		}
	case "max_cost":
		f, ok := number(arg)
		if !ok || f < 0 {
			return bad()
		}
		a.bound = f
	case "max_latency":
		d, ok := duration(arg)
		if !ok {
			return bad()
		}
		a.bound = d.Seconds()
	case "judge":
		switch t := arg.(type) {
		case string:
			a.Rubric = t
		case map[string]any:
			a.Rubric, _ = t["rubric"].(string)
			if len(t) != 1 {
				return bad()
			}
		}
		if strings.TrimSpace(a.Rubric) == "" {
			return bad()
		}
	default:
		return fmt.Errorf("unknown assertion %q (known: %s)", a.Kind, knownNames(p.kind))
	}
	return nil
}

func (a *Assertion) pointerArgs(m map[string]any, bad func() error) error {
	allowed := map[string][]string{"equals": {"pointer", "value"}, "contains": {"pointer", "value"},
		"matches": {"pointer", "regex"}, "length": {"pointer", "min", "max"}}[a.Kind]
	for k := range m {
		if !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: unknown key %q (want %s)", a.Kind, k, strings.Join(allowed, ", "))
		}
	}
	switch a.Kind {
	case "equals", "contains":
		v, ok := m["value"]
		if !ok {
			return bad()
		}
		a.value = v
	case "matches":
		s, _ := m["regex"].(string)
		re, err := regexp.Compile(s)
		if err != nil || s == "" {
			return fmt.Errorf("matches: regex %q: %v", s, err)
		}
		a.re = re
	case "length":
		for key, dst := range map[string]**int{"min": &a.min, "max": &a.max} {
			if v, ok := m[key]; ok {
				n, isInt := v.(int)
				if !isInt || n < 0 {
					return fmt.Errorf("length: %s must be a whole number of 0 or more, got %v", key, v)
				}
				*dst = &n
			}
		}
		if a.min == nil && a.max == nil || a.min != nil && a.max != nil && *a.min > *a.max {
			return bad()
		}
	}
	return nil
}

func number(v any) (float64, bool) {
	switch t := v.(type) {
	case int:
		return float64(t), true
	case float64:
		return t, true
	}
	return 0, false
}

// Outcome is what an assertion made of one answer. Pass is nil when the
// assertion could not be judged (a judge error): such an answer counts
// neither as a pass nor as a fail.
type Outcome struct {
	Assertion string   `json:"assertion"`
	Pass      *bool    `json:"pass"`
	Score     *float64 `json:"score,omitempty"` // a judge's 0..1
	Detail    string   `json:"detail"`
	// JudgeError says why the judge gave no verdict.
	JudgeError string `json:"judge_error,omitempty"`
}

func outcome(name string, pass bool, detail string) Outcome {
	return Outcome{Assertion: name, Pass: &pass, Detail: detail}
}

// judge judges one answer by a (a judge assertion is the runner's).
func (a *Assertion) judge(ans session.Answer, costUSD *float64, latency time.Duration) Outcome {
	if a.kindCheck != nil {
		pass, detail := a.kindCheck(ans)
		return outcome(a.Name, pass, detail)
	}
	switch a.Kind {
	case "no_fallback":
		if ans.Verdict.Fallback {
			return outcome(a.Name, false, "a run would fall back")
		}
		return outcome(a.Name, true, "used as it is")
	case "max_cost":
		if costUSD == nil {
			return outcome(a.Name, false, "no price for the model: add it under prices: in the configuration")
		}
		return outcome(a.Name, *costUSD <= a.bound, fmt.Sprintf("$%.6f (at most $%g)", *costUSD, a.bound))
	case "max_latency":
		return outcome(a.Name, latency.Seconds() <= a.bound, fmt.Sprintf("%s (at most %gs)", latency.Round(time.Millisecond), a.bound))
	}
	if ans.Output == nil {
		return outcome(a.Name, false, "no answer: the call failed")
	}
	v, err := pointerValue(ans.Output, a.pointer)
	if err != nil {
		return outcome(a.Name, false, err.Error())
	}
	return a.checkValue(v)
}

// checkValue judges the value at a's pointer.
func (a *Assertion) checkValue(v any) Outcome {
	switch a.Kind {
	case "equals":
		return outcome(a.Name, sameJSON(v, a.value), fmt.Sprintf("%s is %s", a.pointer, short(v)))
	case "contains":
		switch t := v.(type) {
		case string:
			want := fmt.Sprint(a.value)
			return outcome(a.Name, strings.Contains(t, want), fmt.Sprintf("%s %s %q", short(t), verb(strings.Contains(t, want), "contains", "lacks"), want))
		case []any:
			has := slices.ContainsFunc(t, func(e any) bool { return sameJSON(e, a.value) })
			return outcome(a.Name, has, fmt.Sprintf("%s %s %s", a.pointer, verb(has, "holds", "lacks"), short(a.value)))
		}
		return outcome(a.Name, false, fmt.Sprintf("%s is neither a string nor an array", a.pointer))
	case "matches":
		s, ok := v.(string)
		if !ok {
			return outcome(a.Name, false, fmt.Sprintf("%s is not a string", a.pointer))
		}
		m := a.re.MatchString(s)
		return outcome(a.Name, m, fmt.Sprintf("%s %s /%s/", short(s), verb(m, "matches", "does not match"), a.re))
	}
	n := -1
	switch t := v.(type) {
	case string:
		n = utf8.RuneCountInString(t)
	case []any:
		n = len(t)
	}
	if n < 0 {
		return outcome(a.Name, false, fmt.Sprintf("%s has no length (neither a string nor an array)", a.pointer))
	}
	ok := (a.min == nil || n >= *a.min) && (a.max == nil || n <= *a.max)
	return outcome(a.Name, ok, fmt.Sprintf("length %d%s", n, a.bounds()))
}

func (a *Assertion) bounds() string {
	switch {
	case a.min != nil && a.max != nil:
		return fmt.Sprintf(" (want %d..%d)", *a.min, *a.max)
	case a.min != nil:
		return fmt.Sprintf(" (want at least %d)", *a.min)
	}
	return fmt.Sprintf(" (want at most %d)", *a.max)
}

func verb(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}

// short is v as a detail shows it: JSON, cut at 60 characters.
func short(v any) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if r := []rune(s); len(r) > 60 {
		s = string(r[:57]) + "..."
	}
	return s
}

// sameJSON compares a decoded answer value with a YAML one, numbers by
// value.
func sameJSON(answer, want any) bool {
	b, err := json.Marshal(want)
	if err != nil {
		return false
	}
	var w any
	if json.Unmarshal(b, &w) != nil {
		return false
	}
	return reflect.DeepEqual(answer, w)
}

// pointerValue is the value at JSON pointer ptr (RFC 6901) of doc; "" is
// the whole document.
func pointerValue(doc json.RawMessage, ptr string) (any, error) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("the answer is not JSON: %v", err)
	}
	if ptr == "" {
		return v, nil
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := v.(type) {
		case map[string]any:
			next, ok := t[tok]
			if !ok {
				return nil, fmt.Errorf("the answer has nothing at %s", ptr)
			}
			v = next
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(t) {
				return nil, fmt.Errorf("the answer has nothing at %s", ptr)
			}
			v = t[i]
		default:
			return nil, fmt.Errorf("the answer has nothing at %s", ptr)
		}
	}
	return v, nil
}
