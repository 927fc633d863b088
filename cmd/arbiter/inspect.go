package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// openRead opens the simulation in dir to read its run state; nothing is
// created when no run has committed yet.
func openRead(ctx context.Context, g *globals, dir string) (*session.Session, error) {
	cfg, err := g.loadConfig(nil, nil)
	if err != nil {
		return nil, err
	}
	return cfg.openRead(ctx, dir)
}

// openRead opens the simulation in dir with c's settings to read its run
// state.
func (c *Config) openRead(ctx context.Context, dir string) (*session.Session, error) {
	set, err := c.settings(false, "")
	if err != nil {
		return nil, err
	}
	set.Inspect = true // it renders no call: a template's problem is run's and validate's to say
	return session.Open(ctx, dir, set, session.ReadOnly)
}

// StatusOptions are the inputs of `arbiter status`.
type StatusOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
}

func newStatusCmd(io *IOStreams, g *globals, runF func(context.Context, *StatusOptions) error) *cobra.Command {
	opts := &StatusOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "status <simulation-dir>",
		Short: "Show the last committed tick, calls, failures and token usage",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runStatus(cmd.Context(), opts)
		},
	}
}

func runStatus(ctx context.Context, opts *StatusOptions) error {
	s, err := openRead(ctx, opts.Globals, opts.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Status(ctx)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, st)
	}
	return writeStatus(opts.IO, st)
}

func writeStatus(io *IOStreams, s *session.Status) error {
	fmt.Fprintf(io.Out, "%s — %s (%s)\n", s.Simulation, s.Title, s.Kind)
	for _, f := range s.Fields {
		fmt.Fprintf(io.Out, "%-13s %s\n", f.Key+":", f.Value)
	}
	if s.LastTick == 0 {
		fmt.Fprintln(io.Out, "no tick committed yet")
		return nil
	}
	fmt.Fprintf(io.Out, "last tick:    %d (committed %s)\n", s.LastTick, s.LastCommittedAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(io.Out, "model calls:  %d (%d failed, %s, %s)\n", s.Total.Calls, s.Total.FailedCalls, plural(s.Fallbacks, "fallback"), plural(s.Total.Repairs, "repair"))
	if s.TruncatedPrompts > 0 {
		fmt.Fprintf(io.Out, "truncated prompts: %d (the prompt filled the model's context: the server cut it; see the run's warnings)\n", s.TruncatedPrompts)
	} else {
		fmt.Fprintln(io.Out, "truncated prompts: 0")
	}
	if note := droppedNote(s.TextsDroppedThrough); note != "" {
		fmt.Fprintln(io.Out, note)
	}
	if st := s.LastStop; st != nil {
		fmt.Fprintf(io.Out, "last run:     stopped at tick %d, not committed (%s, %s): %s\n",
			st.Tick, st.Reason, st.StoppedAt.Local().Format("2006-01-02 15:04:05"), st.Error)
	}
	fmt.Fprintf(io.Out, "tokens:       %d prompt (%d cached) + %d completion = %d\n",
		s.Total.PromptTokens, s.Total.CachedTokens, s.Total.CompletionTokens, s.Total.PromptTokens+s.Total.CompletionTokens)
	if b := s.Total.BatchPromptTokens + s.Total.BatchCompletionTokens; b > 0 {
		fmt.Fprintf(io.Out, "batch tokens: %d prompt + %d completion = %d, answered through Batch API jobs (priced at the batch discount)\n",
			s.Total.BatchPromptTokens, s.Total.BatchCompletionTokens, b)
	}
	if r := s.LastRun; r != nil {
		fmt.Fprintf(io.Out, "%-14sticks %d..%d, started %s\n", fmt.Sprintf("run %d:", r.N), r.FirstTick, r.LastTick, r.StartedAt.Local().Format("2006-01-02 15:04:05"))
		if err := writeManifest(io.Out, s.Manifest); err != nil {
			return err
		}
	}
	return writeCallsBy(io, s)
}

// writeCallsBy prints the table of calls by phase, entity and endpoint;
// nothing when no model was called (a game of bots).
func writeCallsBy(io *IOStreams, s *session.Status) error {
	eps := slices.Clone(s.ByEndpoint)
	failures := make([]int, len(eps))
	for i := range eps {
		eps[i].Key, failures[i] = "endpoint "+endpointKey(eps[i].Key, eps[i].EndpointFailures), eps[i].EndpointFailures
	}
	if !showEndpoints(failures) {
		eps = nil
	}
	rows := slices.Concat(s.ByPhase, s.ByEntity, eps)
	if len(rows) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\ncalls by\tcalls\tfailed\tprompt\tcompletion\tcached\tlatency (per call)")
	for _, u := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\n", u.Key, u.Calls, u.FailedCalls, u.PromptTokens, u.CompletionTokens, u.CachedTokens, latency(u.LatencyMS, u.Calls))
	}
	return tw.Flush()
}

// ExportOptions are the inputs of `arbiter export`.
type ExportOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
	Format  string
	Tick    int
	Latest  bool // --tick not given
}

func newExportCmd(io *IOStreams, g *globals, runF func(context.Context, *ExportOptions) error) *cobra.Command {
	opts := &ExportOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "export <simulation-dir>",
		Short: "Print the state at the latest tick (or --tick N) as JSON",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Format != "json" {
				return usageErrorf("--format %q: only json is supported", opts.Format)
			}
			opts.Dir, opts.Latest = args[0], !cmd.Flags().Changed("tick")
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runExport(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "json", "output format (json)")
	cmd.Flags().IntVar(&opts.Tick, "tick", 0, "tick to export (default: the latest; 0: the authored state)")
	return cmd
}

func runExport(ctx context.Context, opts *ExportOptions) error {
	s, err := openRead(ctx, opts.Globals, opts.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	v, err := s.Export(ctx, opts.Tick, opts.Latest)
	if err != nil {
		return err
	}
	if err := noteDropped(ctx, opts.IO, s); err != nil {
		return err
	}
	return exportJSON.Write(opts.IO, v)
}

// ResetOptions are the inputs of `arbiter reset`.
type ResetOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
}

func newResetCmd(io *IOStreams, g *globals, runF func(context.Context, *ResetOptions) error) *cobra.Command {
	opts := &ResetOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "reset <simulation-dir>",
		Short: "Delete a simulation's run state (state.db); authored files are kept",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runReset(opts)
		},
	}
}

func runReset(opts *ResetOptions) error {
	deleted, err := session.Reset(opts.Dir)
	if ex := opts.Globals.exporter(); ex != nil {
		if err != nil && len(deleted) == 0 {
			return err // nothing done: the error alone, no document saying so
		}
		// What was deleted is said even when a later deletion failed.
		doc := map[string]any{"simulation": opts.Dir, "deleted": append([]string{}, deleted...)}
		if err != nil {
			doc["error"] = err.Error()
		}
		if werr := ex.Write(opts.IO, doc); err == nil {
			err = werr
		}
		return err
	}
	for _, p := range deleted {
		fmt.Fprintf(opts.IO.Out, "deleted %s\n", p)
	}
	if err != nil {
		return err
	}
	if len(deleted) == 0 {
		fmt.Fprintf(opts.IO.Out, "%s: no run state to delete\n", opts.Dir)
	}
	return nil
}

// showEndpoints reports whether the lines per endpoint, of the attempts
// each failed, say more than the lines per phase: there are several, or
// one failed attempts.
func showEndpoints(failures []int) bool {
	return len(failures) > 1 || slices.ContainsFunc(failures, func(n int) bool { return n > 0 })
}

// endpointKey is an endpoint's name as its line shows it, with the
// attempts it failed.
func endpointKey(name string, failures int) string {
	if failures == 0 {
		return name
	}
	return fmt.Sprintf("%s (%s failed)", name, plural(failures, "attempt"))
}
