package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// llmFlags maps the model flags shared by run (and later commands) to config keys.
var llmFlags = map[string]string{
	"base-url":      "llm.base_url",
	"model":         "llm.model",
	"timeout":       "llm.timeout",
	"max-attempts":  "llm.max_attempts",
	"concurrency":   "llm.concurrency",
	"depth":         "llm.depth",
	"phase-timeout": "run.phase_timeout",
	"token-budget":  "run.token_budget",
	"max-cost":      "run.max_cost",
}

func addLLMFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.String("base-url", "", "OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (llm.base_url)")
	f.String("model", "", "model for every phase without its own (llm.model)")
	f.Duration("timeout", 0, "timeout of one model call attempt (llm.timeout)")
	f.Int("max-attempts", 0, "attempts per call for transient errors (llm.max_attempts)")
	f.Int("concurrency", 0, "model calls in flight at once (llm.concurrency)")
	f.Int("depth", 0, "past exchanges per entity sent back (llm.depth)")
	f.Duration("phase-timeout", 0, "deadline of one phase; late calls fall back (run.phase_timeout)")
	f.Int("token-budget", 0, "tokens the simulation may spend in all (run.token_budget)")
	f.Float64("max-cost", 0, "US dollars the simulation may spend in all, priced with prices: (run.max_cost)")
}

// RunOptions are the inputs of `arbiter run`, flags already parsed.
type RunOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	Ticks   int
	// Cassette records the run's model calls, or answers them from a
	// recording (--record, --replay).
	Cassette CassetteOptions
	// Lockstep plays a world's locations tick by tick together
	// instead of out of order, for comparison (--lockstep).
	Lockstep bool
	// Batch sends each phase's calls of a tick as one Batch API
	// job (--batch).
	Batch bool
	// MetricsAddr serves the run's metrics as Prometheus text at
	// /metrics on this address (--metrics-addr).
	MetricsAddr string
}

func newRunCmd(io *IOStreams, g *globals, runF func(context.Context, *RunOptions) error) *cobra.Command {
	opts := &RunOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "run <simulation-dir>",
		Short: "Run ticks of a simulation, resuming from its last committed tick",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Ticks < 1 {
				return usageErrorf("--ticks must be at least 1, got %d", opts.Ticks)
			}
			if err := opts.Cassette.check(); err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Ticks, "ticks", "n", 1, "ticks to run")
	cmd.Flags().BoolVar(&opts.Lockstep, "lockstep", false, "a world of locations: every location plays each tick with the whole world, not as soon as its neighbours allow (same ticks, for comparison)")
	cmd.Flags().BoolVar(&opts.Batch, "batch", false, "a world of locations: send each phase's calls as one Batch API job (/v1/files, /v1/batches) and wait for it; ticks run in lockstep, and a run stopped meanwhile polls the same job when run again")
	cmd.Flags().StringVar(&opts.MetricsAddr, "metrics-addr", "", "serve the run's metrics as Prometheus text at http://ADDR/metrics, e.g. 127.0.0.1:9464")
	addLLMFlags(cmd)
	addCassetteFlags(cmd, &opts.Cassette)
	return cmd
}

// runRun runs opts.Ticks ticks and prints one line per committed tick and
// a closing line (or the report as JSON).
func runRun(ctx context.Context, opts *RunOptions) (err error) {
	io, g := opts.IO, opts.Globals
	ctx, untrace, err := traced(ctx, io, opts.Config, "run", opts.Dir, opts.MetricsAddr)
	if err != nil {
		return err
	}
	defer func() { untrace(err) }()
	if opts.Batch { // every phase in batch mode, as the manifest records it
		opts.Config.batchAll()
	}
	set, err := opts.Config.settings(true, "run")
	if err != nil {
		return err
	}
	set.Logger = g.logger(io)
	set.Lockstep = opts.Lockstep
	set.Batch = opts.Batch
	if g.verbose > 0 {
		set.OnEvent = func(ev session.Event) { fmt.Fprintln(io.ErrOut, ev.String()) }
	}
	if io.ErrTTY {
		set.OnPhase = progressLine(io)
	}
	if g.exporter() == nil {
		set.OnTick = func(t session.TickReport) { writeTickLine(io, t) }
	}
	s, closeRun, err := openRun(ctx, opts.Dir, opts.Config, opts.Cassette, set)
	if err != nil {
		return err
	}
	defer keepFirst(&err, closeRun)
	rep, runErr := s.Run(ctx, opts.Ticks)
	if rep != nil {
		if werr := writeReport(io, g, s.Sim.ID, rep); werr != nil && runErr == nil {
			runErr = werr
		}
	}
	return runErr
}

// progressLine prints one line per phase on a terminal; while a phase
// waits for its Batch API job, the line shows the job's counts.
func progressLine(io *IOStreams) func(session.PhaseProgress) {
	return func(p session.PhaseProgress) {
		if b := p.Batch; b != nil && !p.Done {
			writeControl(io.ErrOut, "\r\033[K")
			fmt.Fprintf(io.ErrOut, "tick %d/%d · %s · batch job %s %s · %d/%d answered, %d failed …", p.Tick, p.LastTick, p.Phase,
				escapedLine(b.Job), escapedLine(b.Status), b.Completed, b.Total, b.Failed)
			return
		}
		if !p.Done {
			writeControl(io.ErrOut, "\r\033[K")
			fmt.Fprintf(io.ErrOut, "tick %d/%d · %s · %s …", p.Tick, p.LastTick, p.Phase, plural(p.Calls, "call"))
			return
		}
		writeControl(io.ErrOut, "\r\033[K")
		fmt.Fprintf(io.ErrOut, "tick %d/%d · %s · %s, %d failed · %s\n", p.Tick, p.LastTick, p.Phase, plural(p.Calls, "call"), p.Failed, p.Elapsed.Round(time.Millisecond))
	}
}

func writeReport(io *IOStreams, g *globals, id string, rep *session.RunReport) error {
	if ex := g.exporter(); ex != nil {
		return ex.Write(io, rep)
	}
	fmt.Fprintf(io.Out, "%s: %s; last committed tick %d (%s this run, %s)\n", id, rep.Stop, rep.LastTick, plural(len(rep.Ticks), "tick"), plural(rep.Usage.Total(), "token"))
	if rep.Ended != "" {
		fmt.Fprintf(io.Out, "game over: %s (`arbiter reset` starts a new game)\n", rep.Ended)
	}
	for _, ep := range rep.Endpoints {
		out := ""
		if ep.Out {
			out = ", taken out now (failing)"
		}
		fmt.Fprintf(io.Out, "endpoint %s: %s answered, %s failed, %s rate limited%s\n", ep.Name,
			plural(int(ep.Answered), "attempt"), plural(int(ep.Failed), "attempt"), plural(int(ep.RateLimited), "attempt"), out)
	}
	if rep.RateLimited > 0 {
		fmt.Fprintf(io.Out, "the model server rate-limited %s (429), each waited out; calls in flight went down to %d at the lowest (set llm.rpm / llm.tpm to the server's limits to pace under them)\n",
			plural(int(rep.RateLimited), "call"), rep.LowestConcurrency)
	}
	return nil
}

// writeTickLine prints a committed tick on stdout as soon as it commits.
func writeTickLine(io *IOStreams, t session.TickReport) {
	fmt.Fprintf(io.Out, "tick %d committed: %s, %d failed, %s, %s, %s, %s, %s\n",
		t.Tick, plural(t.Calls, "call"), t.Failed, plural(t.Fallbacks, "fallback"), plural(t.Repairs, "repair"),
		plural(t.ApplyErrors, "apply error"), plural(t.Usage.Total(), "token"), t.Duration.Round(time.Millisecond))
}

// plural renders "1 tick", "3 ticks".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
