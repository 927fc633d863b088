package eval

import (
	"strings"
	"testing"
)

// TestAgainstSetsTwoEvalsSideBySide: two stored evals become one result
// whose variants are name@id, a variant of both in adjacent columns, one
// case row per case of either, and the later eval's variants compared
// with themselves in the earlier on the cases both made.
func TestAgainstSetsTwoEvalsSideBySide(t *testing.T) {
	pass, fail := true, false
	result := func(id int64, variants []string, entities string, passes func(i int) bool) *Result {
		r := &Result{ID: id, Simulation: "demo", Repeat: 1, Passed: id == 2,
			Assertions: []AssertionInfo{{Name: "short", Phase: "intention", Kind: "length"}}}
		for _, v := range variants {
			r.Variants = append(r.Variants, VariantInfo{Name: v})
		}
		for i, e := range entities {
			r.Cases = append(r.Cases, Case{Tick: 1, Phase: "intention", Entity: string(e)})
			for _, v := range variants {
				p := &fail
				if passes(i) {
					p = &pass
				}
				r.Answers = append(r.Answers, Answer{Case: i, Variant: v, Outcomes: []Outcome{{Assertion: "short", Pass: p}}})
			}
		}
		summarize(r)
		return r
	}
	earlier := result(1, []string{Baseline, "terse"}, "abcd", func(int) bool { return false })
	later := result(2, []string{Baseline, "chatty"}, "bcde", func(i int) bool { return i < 3 })
	both := Against(earlier, later)
	var names []string
	for _, v := range both.Variants {
		names = append(names, v.Name)
	}
	if got := strings.Join(names, " "); got != "baseline@1 baseline@2 chatty@2 terse@1" {
		t.Errorf("variants %s, want baseline@1 baseline@2 chatty@2 terse@1", got)
	}
	if len(both.Cases) != 5 || len(both.Answers) != 16 || both.ID != 2 || both.Against != 1 || !both.Passed {
		t.Errorf("%d cases, %d answers, id %d against %d, passed %v; want 5, 16, 2 against 1, true", len(both.Cases), len(both.Answers), both.ID, both.Against, both.Passed)
	}
	for _, a := range both.Answers {
		if c := both.Cases[a.Case]; a.Variant == "baseline@1" && c.Entity == "e" || a.Variant == "baseline@2" && c.Entity == "a" {
			t.Errorf("answer of %s filed under case %s", a.Variant, c.ID())
		}
	}
	// b, c, d are both evals' cases: later passes b, c, d where earlier
	// passed none; e and a are one eval's alone.
	if len(both.Comparisons) != 1 {
		t.Fatalf("comparisons %+v, want baseline's alone", both.Comparisons)
	}
	if c := both.Comparisons[0]; c.Variant != "baseline@2" || c.Against != "baseline@1" || c.Wins != 3 || c.Losses != 0 || c.Ties != 0 {
		t.Errorf("comparison %+v, want baseline@2 against baseline@1: 3 wins", c)
	}
	if len(both.Summaries) != 4 || both.Summaries[1].Variant != "baseline@2" {
		t.Errorf("summaries %+v", both.Summaries)
	}
	page, err := Page(both)
	if err != nil || !strings.Contains(string(page), "eval 2 against eval 1 of demo") || !strings.Contains(string(page), "Against eval 1, on the same cases") {
		t.Errorf("page of two evals: %v\n%.600s", err, page)
	}
}
