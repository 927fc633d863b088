package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// UsageOptions are the inputs of `arbiter usage`.
type UsageOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
}

func newUsageCmd(io *IOStreams, g *globals, runF func(context.Context, *UsageOptions) error) *cobra.Command {
	opts := &UsageOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "usage <simulation-dir>",
		Short: "Tokens (and cost, when prices are configured) per phase, entity and tick",
		Long: `usage sums the model calls of every committed tick per phase, per entity and
per tick: calls, failed calls, prompt, completion and cached tokens, latency.
With prices in the configuration (prices: a list of {model, prompt,
completion} in USD per million tokens) it adds the cost, and the usage per
model. Each call is priced at the model that answered it, as stored with the
call; a call stored by an arbiter older than schema version 3 has no model
and is priced at the model its phase is configured with now (the report says
so). A model without a price leaves the cost unknown. The tokens a Batch
API job answered (run --batch, or a phase's mode: batch) are priced at
the model's batch_discount off its price (default 0.5, OpenAI's half
price); the rest, repairs included, at the live price.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.loadConfig(nil, nil)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runUsage(cmd.Context(), opts)
		},
	}
}

func runUsage(ctx context.Context, opts *UsageOptions) error {
	s, err := opts.Config.openRead(ctx, opts.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	rep, err := s.UsageReport(ctx)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, rep)
	}
	return writeUsage(opts.IO, rep)
}

func writeUsage(io *IOStreams, rep *session.UsageReport) error {
	w := io.Out
	t := rep.Total
	if t.Calls == 0 {
		fmt.Fprintf(w, "%s: no model calls committed yet\n", rep.Simulation)
		return nil
	}
	fmt.Fprintf(w, "%s: %s over %s, %d failed; %s (%d prompt, %d cached, %d completion); cost %s\n",
		rep.Simulation, plural(t.Calls, "call"), plural(len(rep.ByTick), "tick"), t.FailedCalls,
		plural(t.PromptTokens+t.CompletionTokens, "token"), t.PromptTokens, t.CachedTokens, t.CompletionTokens, costText(t.CostUSD))
	if b := t.BatchPromptTokens + t.BatchCompletionTokens; b > 0 {
		fmt.Fprintf(w, "%s answered through Batch API jobs (%d prompt, %d completion), priced at each model's batch_discount\n",
			plural(b, "token"), t.BatchPromptTokens, t.BatchCompletionTokens)
	}
	if !rep.Priced {
		fmt.Fprintf(w, "no price configured for %v: add them under prices: in config.yaml (USD per million tokens)\n", rep.Unpriced)
	}
	if note := droppedNote(rep.TextsDroppedThrough); note != "" {
		fmt.Fprintln(w, strings.TrimSpace(strings.TrimPrefix(note, "texts:")))
	}
	if rep.Assumed {
		fmt.Fprintln(w, "some calls were stored without their model (by an arbiter before schema version 3): counted at the model their phase is configured with now")
	}
	// The cost column shows when some phase's model has a price.
	costs := slices.ContainsFunc(rep.ByPhase, func(l session.UsageLine) bool { return l.CostUSD != nil })
	// The batch column shows when some tokens went through a Batch API job.
	batch := t.BatchPromptTokens+t.BatchCompletionTokens > 0
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	section := func(title string, lines []session.UsageLine, key func(session.UsageLine) string) {
		fmt.Fprintf(tw, "\n%s\tcalls\tfailed\tprompt\tcompletion\tcached\tlatency (per call)", title)
		if batch {
			fmt.Fprint(tw, "\tbatch")
		}
		if costs {
			fmt.Fprint(tw, "\tcost")
		}
		fmt.Fprintln(tw)
		for _, l := range lines {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s", key(l), l.Calls, l.FailedCalls, l.PromptTokens, l.CompletionTokens, l.CachedTokens, latency(l.LatencyMS, l.Calls))
			if batch {
				fmt.Fprintf(tw, "\t%d", l.BatchPromptTokens+l.BatchCompletionTokens)
			}
			if costs {
				fmt.Fprintf(tw, "\t%s", costText(l.CostUSD))
			}
			fmt.Fprintln(tw)
		}
	}
	section("model", rep.ByModel, func(l session.UsageLine) string { return l.Key })
	section("phase (model)", rep.ByPhase, func(l session.UsageLine) string { return l.Key + " (" + l.Model + ")" })
	section("entity", rep.ByEntity, func(l session.UsageLine) string { return l.Key })
	section("tick", rep.ByTick, func(l session.UsageLine) string { return strconv.Itoa(l.Tick) })
	failures := make([]int, len(rep.ByEndpoint))
	for i, l := range rep.ByEndpoint {
		failures[i] = l.EndpointFailures
	}
	if showEndpoints(failures) {
		section("endpoint", rep.ByEndpoint, func(l session.UsageLine) string { return endpointKey(l.Key, l.EndpointFailures) })
	}
	return tw.Flush()
}

// latency is the time calls took, in seconds: in all, and per call, e.g.
// "338.0s (0.92s)"; summed milliseconds (337951ms) read as nothing.
func latency(totalMS int64, calls int) string {
	if calls == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fs (%.2fs)", float64(totalMS)/1000, float64(totalMS)/1000/float64(calls))
}

func costText(c *float64) string {
	if c == nil {
		return "unknown"
	}
	return fmt.Sprintf("$%.4f", *c)
}
