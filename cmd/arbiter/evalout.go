package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/arbiter-sim/arbiter/eval"
)

// writeEvalOutputs prints res (a table, or --json) and writes the files
// asked for.
func writeEvalOutputs(opts *EvalOptions, res *eval.Result) error {
	if opts.JUnit != "" {
		if err := eval.WriteJUnit(opts.JUnit, res); err != nil {
			return err
		}
	}
	if opts.HTML != "" {
		if err := eval.WritePage(opts.HTML, res); err != nil {
			return err
		}
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, res)
	}
	writeEvalTable(opts.IO.Out, res)
	return nil
}

func writeEvalTable(w io.Writer, res *eval.Result) {
	cached := 0
	for _, a := range res.Answers {
		if a.Cached {
			cached++
		}
	}
	fmt.Fprintf(w, "eval %d of %s (%s): %s x %s x %s: %s, %d from the cache, %s\n",
		res.ID, res.Simulation, res.Suite, plural(len(res.Cases), "case"), plural(len(res.Variants), "variant"), plural(res.Repeat, "repeat"),
		plural(len(res.Answers), "answer"), cached, res.Elapsed.Round(time.Millisecond))
	if res.Interrupted {
		fmt.Fprintln(w, "INTERRUPTED: the figures are of the answers that came; the rest are asked next time")
	}
	for _, s := range res.Summaries {
		writeSummary(w, s)
	}
	writeComparisons(w, res.Comparisons)
	writeThresholds(w, res)
}

func writeSummary(w io.Writer, s eval.Summary) {
	fmt.Fprintf(w, "\n%s: %d answers\n", s.Variant, s.Answers)
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "  phase\tassertion\tpass\trate\t95% interval\tjudge errors\tmean score")
	for _, r := range s.Rates {
		score := ""
		if r.MeanScore != nil {
			score = fmt.Sprintf("%.2f", *r.MeanScore)
		}
		rate, interval := pct(r.Rate), fmt.Sprintf("[%s, %s]", pct(r.Low), pct(r.High))
		if r.N == 0 {
			rate, interval = "-", "-" // nothing judged: no rate to give
		}
		fmt.Fprintf(tw, "  %s\t%s\t%d/%d\t%s\t%s\t%d\t%s\n", r.Phase, r.Assertion, r.Pass, r.N, rate, interval, r.JudgeErrors, score)
	}
	tw.Flush()
	cost := "cost unknown (a model has no price)"
	if s.CostUSD != nil {
		cost = fmt.Sprintf("cost $%.4f", *s.CostUSD)
	}
	fmt.Fprintf(w, "  schema-valid %s, %d repairs, %d fallbacks, mean tokens %.0f prompt / %.0f completion, %s, latency p50 %s p95 %s\n",
		pct(s.SchemaValid), s.Repairs, s.Fallbacks, s.MeanPromptTokens, s.MeanCompletionTokens, cost,
		time.Duration(s.P50LatencyMS)*time.Millisecond, time.Duration(s.P95LatencyMS)*time.Millisecond)
}

func pct(f float64) string { return fmt.Sprintf("%.0f%%", 100*f) }

func writeComparisons(w io.Writer, cs []eval.Comparison) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintln(w, "\npaired on the same cases (a win: passed more often, or scored higher by the judge):")
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s vs %s\t%s %s\t%d wins, %d losses, %d ties\tp = %s\t%s\n", c.Variant, c.Against, c.Phase, c.Assertion,
			c.Wins, c.Losses, c.Ties, pValue(c.P), verdict(c))
	}
	tw.Flush()
}

func pValue(p float64) string {
	if p < 0.001 {
		return "< 0.001"
	}
	return fmt.Sprintf("%.3f", p)
}

// verdict says a comparison in words: who is better, when the sign test
// says it is unlikely to be chance.
func verdict(c eval.Comparison) string {
	switch {
	case c.Wins+c.Losses == 0:
		return "no difference"
	case c.P >= 0.05:
		return "no significant difference"
	case c.Wins > c.Losses:
		return fmt.Sprintf("%s better on %d of %d cases", c.Variant, c.Wins, c.Wins+c.Losses+c.Ties)
	}
	return fmt.Sprintf("%s worse on %d of %d cases", c.Variant, c.Losses, c.Wins+c.Losses+c.Ties)
}

func writeThresholds(w io.Writer, res *eval.Result) {
	failed := 0
	for _, t := range res.Thresholds {
		if !t.Passed {
			failed++
		}
	}
	if failed == 0 {
		fmt.Fprintf(w, "\nthresholds: all %d met\n", len(res.Thresholds))
		return
	}
	fmt.Fprintf(w, "\nthresholds: %d of %d not met:\n", failed, len(res.Thresholds))
	for _, t := range res.Thresholds {
		if !t.Passed {
			fmt.Fprintf(w, "  %s %s %s: %s of %d answers, want at least %s\n", t.Variant, t.Phase, t.Assertion, pct(t.Rate), t.N, pct(t.Min))
		}
	}
}

func failedThresholds(res *eval.Result) string {
	n := 0
	for _, t := range res.Thresholds {
		if !t.Passed {
			n++
		}
	}
	if res.Interrupted {
		return "eval interrupted"
	}
	return fmt.Sprintf("eval %d: %d of %d thresholds not met", res.ID, n, len(res.Thresholds))
}

// runStoredEvals lists the stored evals, or compares two.
func runStoredEvals(ctx context.Context, opts *EvalOptions) error {
	if _, err := os.Stat(opts.Dir); err != nil {
		return usageErrorf("%s: no such simulation folder", opts.Dir)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, eval.DBFile)); errors.Is(err, fs.ErrNotExist) {
		// Nothing stored yet: say so, and leave no empty eval.db behind.
		return usageErrorf("%s: no eval stored yet (`arbiter eval %s` runs one)", opts.Dir, opts.Dir)
	}
	db, err := eval.OpenDB(ctx, opts.Dir)
	if err != nil {
		return err
	}
	defer db.Close()
	if opts.List {
		return listEvals(ctx, opts, db)
	}
	a, err := db.Stored(ctx, opts.Compare[0])
	if err != nil {
		return usageError(err)
	}
	b, err := db.Stored(ctx, opts.Compare[1])
	if err != nil {
		return usageError(err)
	}
	both := eval.Against(a, b)
	if opts.HTML != "" {
		if err := eval.WritePage(opts.HTML, both); err != nil {
			return err
		}
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, both.Comparisons)
	}
	fmt.Fprintf(opts.IO.Out, "eval %d against eval %d, each variant against itself, on the cases both made:\n", b.ID, a.ID)
	writeComparisons(opts.IO.Out, both.Comparisons)
	if len(both.Comparisons) == 0 {
		fmt.Fprintln(opts.IO.Out, "  no variant in common: "+strings.Join(names(a), ", ")+" against "+strings.Join(names(b), ", "))
	}
	return nil
}

// listEvals prints the evals stored in db, a line each: when, the suite,
// the variants, the cases and answers, and the verdict.
func listEvals(ctx context.Context, opts *EvalOptions, db *eval.DB) error {
	list, err := db.List(ctx)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, list)
	}
	tw := tabwriter.NewWriter(opts.IO.Out, 2, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tstarted\tsuite\tvariants\tcases\tanswers\tthresholds")
	for _, l := range list {
		verdict := "met"
		switch {
		case l.Interrupted:
			verdict = "interrupted"
		case !l.Passed:
			verdict = "not met"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%d\t%s\n", l.ID, l.Started.Local().Format(time.DateTime), l.Suite, strings.Join(l.Variants, ", "), l.Cases, l.Answers, verdict)
	}
	return tw.Flush()
}

func names(r *eval.Result) []string {
	var out []string
	for _, v := range r.Variants {
		out = append(out, v.Name)
	}
	return out
}
