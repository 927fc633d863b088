package eval

import (
	"encoding/json"
	"slices"
	"strings"
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

// FuzzParseCase: whatever a hand-written case file holds, parseCase returns
// a case on a tick that can be called, of a known phase, with an entity, or
// an error naming the file.
func FuzzParseCase(f *testing.F) {
	for _, seed := range []string{
		"tick: 2\nphase: resolution\nentity: wharf\nstate: {locations: {wharf: {moment: flood}}}",
		"tick: 0\nphase: chat",
		"tick: 9999999999999999999\nentity: x\nphase: intention",
		"state: [1, 2]",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseCase("case.yaml", data, testPhases, 3)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "case.yaml") {
				t.Fatalf("error without the file: %v", err)
			}
			return
		}
		if c.Tick < 1 || c.Tick > 4 || c.Entity == "" || !slices.Contains(testPhases, c.Phase) || c.State != nil && !json.Valid(c.State) {
			t.Fatalf("accepted case out of bounds: %+v", c)
		}
	})
}
