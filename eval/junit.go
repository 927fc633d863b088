package eval

import (
	"encoding/xml"
	"fmt"
	"strings"
)

// JUnit is r as JUnit XML, for CI: a test suite per variant, a test case
// per assertion of a phase (its threshold), failed when the threshold was
// not met, with the answers that failed it in its message.
func JUnit(r *Result) []byte {
	type failure struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	}
	type testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Failure   *failure `xml:"failure,omitempty"`
	}
	type testsuite struct {
		Name     string     `xml:"name,attr"`
		Tests    int        `xml:"tests,attr"`
		Failures int        `xml:"failures,attr"`
		Cases    []testcase `xml:"testcase"`
	}
	type testsuites struct {
		XMLName xml.Name    `xml:"testsuites"`
		Name    string      `xml:"name,attr"`
		Suites  []testsuite `xml:"testsuite"`
	}
	out := testsuites{Name: "arbiter eval " + r.Simulation}
	for _, v := range r.Variants {
		ts := testsuite{Name: v.Name}
		for _, t := range r.Thresholds {
			if t.Variant != v.Name {
				continue
			}
			tc := testcase{Name: t.Phase + " " + t.Assertion, Classname: r.Simulation + "." + v.Name}
			if !t.Passed {
				ts.Failures++
				tc.Failure = &failure{Message: fmt.Sprintf("pass rate %.0f%% of %d answers, want at least %.0f%%", 100*t.Rate, t.N, 100*t.Min),
					Text: failedAnswers(r, v.Name, t.Phase, t.Assertion)}
			}
			ts.Cases = append(ts.Cases, tc)
		}
		ts.Tests = len(ts.Cases)
		out.Suites = append(out.Suites, ts)
	}
	b, _ := xml.MarshalIndent(out, "", "  ")
	return append([]byte(xml.Header), append(b, '\n')...)
}

// failedAnswers lists the answers of variant that failed an assertion, one
// line each.
func failedAnswers(r *Result, variant, phase, name string) string {
	var b strings.Builder
	for _, a := range r.Answers {
		if a.Variant != variant || r.Cases[a.Case].Phase != phase {
			continue
		}
		if o, ok := outcomeOf(a, name); ok {
			switch {
			case o.Pass == nil:
				fmt.Fprintf(&b, "%s #%d: judge error: %s\n", r.Cases[a.Case].ID(), a.Repeat+1, o.JudgeError)
			case !*o.Pass:
				fmt.Fprintf(&b, "%s #%d: %s\n", r.Cases[a.Case].ID(), a.Repeat+1, o.Detail)
			}
		}
	}
	return b.String()
}
