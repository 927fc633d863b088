package eval

import (
	"fmt"
	"slices"
)

// Against sets eval later beside eval earlier as one result, so that the
// table and the page show the two as they show the variants of one eval:
// each variant of each is named name@id, a variant of both in adjacent
// columns (earlier's first), the cases of both (one row for a case both
// made), and every variant of later compared with itself in earlier on
// the cases both made. Thresholds are each eval's own, so the result has
// none; Passed is later's verdict.
func Against(earlier, later *Result) *Result {
	out := &Result{ID: later.ID, Against: earlier.ID, Simulation: later.Simulation, Suite: later.Suite,
		Started: later.Started, Repeat: max(earlier.Repeat, later.Repeat), Passed: later.Passed,
		Interrupted: later.Interrupted, Elapsed: later.Elapsed}
	tag := func(r *Result, name string) string { return fmt.Sprintf("%s@%d", name, r.ID) }
	for _, name := range variantOrder(earlier, later) {
		for _, r := range []*Result{earlier, later} {
			for _, v := range r.Variants {
				if v.Name == name {
					v.Name = tag(r, name)
					out.Variants = append(out.Variants, v)
				}
			}
			for _, s := range r.Summaries {
				if s.Variant == name {
					s.Variant = tag(r, name)
					out.Summaries = append(out.Summaries, s)
				}
			}
		}
	}
	rows := map[string]int{}
	for _, r := range []*Result{earlier, later} {
		for _, as := range r.Assertions {
			if !slices.ContainsFunc(out.Assertions, func(o AssertionInfo) bool { return o.Phase == as.Phase && o.Name == as.Name }) {
				out.Assertions = append(out.Assertions, as)
			}
		}
		for _, a := range r.Answers {
			c := r.Cases[a.Case]
			i, ok := rows[c.ID()]
			if !ok {
				i = len(out.Cases)
				rows[c.ID()] = i
				out.Cases = append(out.Cases, c)
			}
			a.Case, a.Variant = i, tag(r, a.Variant)
			out.Answers = append(out.Answers, a)
		}
	}
	for _, v := range later.Variants {
		if !slices.ContainsFunc(earlier.Variants, func(o VariantInfo) bool { return o.Name == v.Name }) {
			continue
		}
		for _, c := range Compare(later, v.Name, earlier, v.Name) {
			c.Variant, c.Against = tag(later, v.Name), tag(earlier, v.Name)
			out.Comparisons = append(out.Comparisons, c)
		}
	}
	return out
}

// variantOrder is the names of the variants of earlier and later, each
// once: later's in its order, then those only earlier has.
func variantOrder(earlier, later *Result) []string {
	var names []string
	for _, r := range []*Result{later, earlier} {
		for _, v := range r.Variants {
			if !slices.Contains(names, v.Name) {
				names = append(names, v.Name)
			}
		}
	}
	return names
}
