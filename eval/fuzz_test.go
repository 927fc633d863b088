package eval

import (
	"testing"
)

// FuzzParseSuite: whatever a suite file holds, ParseSuite returns a suite
// or an error naming the file, and never panics.
func FuzzParseSuite(f *testing.F) {
	for _, seed := range []string{
		"cases: {ticks: 1..3}\nvariants: [{name: t, templates: x}]\nassertions: {intention: [{length: {pointer: /intention, max: 80}}]}",
		"judge: {model: m}\nassertions: {resolution: [{judge: rubric}, {no_fallback: true}]}",
		"assertions: {intention: [{matches: {pointer: /a, regex: '['}}]}",
		"repeat: -1\nmin_pass_rate: .nan",
		"cases: {ticks: 99999999999999999999}",
		"",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSuite("evals.yaml", data, testPhases, kindAssertions)
		if err != nil {
			if s != nil {
				t.Fatal("a suite with its error")
			}
			return
		}
		if s.Repeat < 1 || s.MinPassRate < 0 || s.MinPassRate > 1 {
			t.Fatalf("accepted suite out of bounds: %+v", s)
		}
		for _, list := range s.Assertions {
			for _, a := range list {
				if a.Name == "" || a.MinPassRate < 0 || a.MinPassRate > 1 {
					t.Fatalf("assertion without a name or with a bad threshold: %+v", a)
				}
			}
		}
	})
}
