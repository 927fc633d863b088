package eval

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/session"
)

var testPhases = []string{"intention", "resolution"}

// kindAssertions is a kind's own assertion, as a narrative's moves_to.
var kindAssertions = map[string]session.KindAssertion{
	"says_hi": {Help: "true: the answer says hi", Parse: func(arg any) (func(session.Answer) (bool, string), error) {
		if arg != true {
			return nil, errBad
		}
		return func(a session.Answer) (bool, string) { return strings.Contains(string(a.Output), "hi"), "" }, nil
	}},
}

var errBad = &SuiteError{Msg: "says_hi: want true"}

func parse(t *testing.T, text string) (*Suite, error) {
	t.Helper()
	return ParseSuite("evals.yaml", []byte(text), testPhases, kindAssertions)
}

func TestParseSuite(t *testing.T) {
	s, err := parse(t, `
cases: {ticks: 2..5, phases: [intention], entities: [ida], sample: 3, seed: 7, files: [cases/a.yaml]}
repeat: 3
min_pass_rate: 0.75
variants:
  - {name: terse, templates: evals/terse, temperature: 0.2}
  - {name: big, model: m2, max_tokens: 300, templates: [a, b]}
judge: {model: judge-model, endpoint: http://127.0.0.1:1/v1}
assertions:
  intention:
    - {name: short, length: {pointer: /intention, max: 80}, min_pass_rate: 0.5}
    - {judge: "one concrete action"}
    - says_hi: true
`)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cases.From != 2 || s.Cases.To != 5 || s.Cases.Sample != 3 || s.Cases.Files[0] != "cases/a.yaml" || s.Repeat != 3 {
		t.Errorf("cases = %+v, repeat %d", s.Cases, s.Repeat)
	}
	if len(s.Variants) != 2 || s.Variants[0].Templates[0] != "evals/terse" || *s.Variants[0].Temperature != 0.2 || len(s.Variants[1].Templates) != 2 {
		t.Errorf("variants = %+v", s.Variants)
	}
	as := s.Assertions["intention"]
	if len(as) != 3 || as[0].Name != "short" || as[0].MinPassRate != 0.5 || as[1].MinPassRate != 0.75 || as[1].Rubric != "one concrete action" || as[2].Name != "says_hi" {
		t.Errorf("assertions = %+v", as)
	}
}

func TestParseSuiteErrorsNameLineAndAllProblems(t *testing.T) {
	_, err := parse(t, `cases: {ticks: 5..2, phases: [chat]}
repeat: 0
variants:
  - {name: terse}
  - {name: terse, model: x}
  - {name: baseline, model: y}
assertions:
  intention:
    - lenght: {pointer: /intention, max: 3}
    - {length: {pointer: intention, max: 3}}
    - {matches: {pointer: /intention, regex: "("}}
    - {judge: ""}
  chat:
    - no_fallback: true
`)
	if err == nil {
		t.Fatal("a suite full of mistakes was accepted")
	}
	for _, want := range []string{
		`evals.yaml:1: cases.ticks: want N or FROM..TO (ticks 1 and up), got "5..2"`,
		`cases.phases: "chat": the simulation's model calls are intention, resolution`,
		`evals.yaml:4: variants: terse changes nothing`,
		`evals.yaml:5: variants: "terse" named twice (first at line 4)`,
		`evals.yaml:6: variants: "baseline" is the simulation as it is`,
		`evals.yaml:9: assertions.intention: unknown assertion "lenght" (known: contains, equals, judge, length, matches, max_cost, max_latency, no_fallback, says_hi)`,
		`evals.yaml:10: assertions.intention: length: pointer "intention" must start with /`,
		`evals.yaml:11: assertions.intention: matches: regex "("`,
		`evals.yaml:12: assertions.intention: judge: want`,
		`assertions: phase "chat": the simulation's model calls are intention, resolution`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("errors lack %q:\n%v", want, err)
		}
	}
}

func TestParseSuiteRefusals(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"cases: {tick: 3}", `evals.yaml:1: field tick not found`},
		{"assertions: {intention: [{judge: rubric}]}", "a judge assertion needs judge: with a model"},
		{"repeat: 101", "repeat: must be 1 to 100, got 101"},
		{"min_pass_rate: 1.5", "min_pass_rate: must be between 0 and 1, got 1.5"},
		{"assertions: {intention: [{length: {pointer: /a, min: 5, max: 2}}]}", "length: want"},
		{"assertions: {intention: [{length: {pointer: /a, max: 2}, contains: {value: x}}]}", "want exactly one assertion per entry"},
		{"assertions: {intention: [{max_latency: soon}]}", "max_latency: want"},
		{"assertions: {intention: [{says_hi: 3}]}", "says_hi: want true"},
		{"variants: [{name: 'a b', model: x}]", `name "a b": want letters`},
		{"variants: [{name: t, model: x, colour: red}]", "field colour not found"},
		{"cases: [1", "evals.yaml:"},
	} {
		if _, err := parse(t, c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

func answerOf(t *testing.T, doc string) session.Answer {
	t.Helper()
	return session.Answer{Output: json.RawMessage(doc)}
}

func TestAssertions(t *testing.T) {
	s, err := parse(t, `
assertions:
  intention:
    - equals: {pointer: /n, value: 3}
    - contains: {pointer: /text, value: wharf}
    - contains: {pointer: /list, value: b}
    - matches: {pointer: /text, regex: "^I "}
    - length: {pointer: /text, min: 3, max: 20}
    - length: {pointer: /list, max: 1}
    - no_fallback: true
    - max_cost: 0.5
    - max_latency: 2s
    - says_hi: true
`)
	if err != nil {
		t.Fatal(err)
	}
	ans := answerOf(t, `{"n": 3, "text": "I go to the wharf, hi", "list": ["a", "b"]}`)
	cost := 0.25
	want := []bool{true, true, true, true, false, false, true, true, false, true}
	for i, a := range s.Assertions["intention"] {
		o := a.judge(ans, &cost, 3e9)
		if o.Pass == nil || *o.Pass != want[i] {
			t.Errorf("%s: %+v, want pass %v", a.Name, o, want[i])
		}
	}
	// Nothing at the pointer, no answer, no price, a fallback: each fails.
	for i, a := range s.Assertions["intention"][:9] {
		o := a.judge(session.Answer{Verdict: session.Verdict{Fallback: true}}, nil, 0)
		if o.Pass == nil || *o.Pass && i != 8 {
			t.Errorf("%s of no answer: %+v", a.Name, o)
		}
	}
	if o := s.Assertions["intention"][0].judge(answerOf(t, `{"m": 1}`), nil, 0); *o.Pass || o.Detail != "the answer has nothing at /n" {
		t.Errorf("equals at a missing pointer: %+v", o)
	}
}

func TestPointerValue(t *testing.T) {
	doc := json.RawMessage(`{"a/b": {"~x": [1, {"c": "d"}]}}`)
	for ptr, want := range map[string]any{"": nil, "/a~1b/~0x/1/c": "d", "/a~1b/~0x/0": 1.0} {
		v, err := pointerValue(doc, ptr)
		if err != nil || want != nil && v != want {
			t.Errorf("%q: %v, %v; want %v", ptr, v, err, want)
		}
	}
	for _, ptr := range []string{"/nope", "/a~1b/~0x/2", "/a~1b/~0x/x", "/a~1b/~0x/1/c/d"} {
		if _, err := pointerValue(doc, ptr); err == nil {
			t.Errorf("%q: no error", ptr)
		}
	}
}
