package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
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
}

func newRunCmd(io *IOStreams, g *globals) *cobra.Command {
	var ticks int
	cmd := &cobra.Command{
		Use:   "run <simulation-dir>",
		Short: "Run ticks of a simulation, resuming from its last committed tick",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if ticks < 1 {
				return usageErrorf("--ticks must be at least 1, got %d", ticks)
			}
			cfg, err := loadConfig(g.configFile, cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			return runSimulation(cmd, io, g, cfg, args[0], ticks)
		},
	}
	cmd.Flags().IntVarP(&ticks, "ticks", "n", 1, "ticks to run")
	addLLMFlags(cmd)
	return cmd
}

// openWorld loads and checks a simulation and its prompts; any problem is a
// usage error naming the file.
func openWorld(dir string) (*world.Simulation, *prompts.Renderer, error) {
	sim, err := loadNarrative(dir)
	if err != nil {
		return nil, nil, err
	}
	pr, err := prompts.New(dir)
	if err != nil {
		return nil, nil, usageError(err)
	}
	// Render every template once now, so a missing key stops the command
	// before any model call is paid for.
	if errs := lintPrompts(sim, pr); len(errs) > 0 {
		return nil, nil, usageError(errors.Join(errs...))
	}
	return sim, pr, nil
}

func runSimulation(cmd *cobra.Command, io *IOStreams, g *globals, cfg *Config, dir string, ticks int) (err error) {
	ctx := cmd.Context()
	sim, pr, err := openWorld(dir)
	if err != nil {
		return err
	}
	ccfg, err := cfg.clientConfig()
	if err != nil {
		return err
	}
	log := g.logger(io)
	ccfg.Logger = log
	client, err := llm.New(ccfg)
	if err != nil {
		return usageError(err)
	}

	unlock, err := lockSimulation(dir)
	if err != nil {
		return err
	}
	defer unlock()

	dbPath := statePath(dir)
	_, statErr := os.Stat(dbPath)
	created := errors.Is(statErr, os.ErrNotExist)
	st, err := store.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer func() {
		last, lerr := st.LastTick(context.WithoutCancel(ctx))
		if cerr := st.Close(); err == nil {
			err = cerr
		}
		// A first run that committed nothing leaves no state behind.
		if created && lerr == nil && last == 0 {
			if rerr := store.Reset(dbPath); err == nil {
				err = rerr
			}
		}
	}()

	r := &runner.Runner{
		Sim: sim, Store: st, Client: client, Prompts: pr,
		Config: cfg.runnerConfig(),
		Logger: log,
	}
	if g.verbose > 0 {
		r.OnEvent = func(ev runner.Event) { fmt.Fprintln(io.ErrOut, ev.String()) }
	}
	if io.ErrTTY {
		r.OnPhase = progressLine(io)
	}
	if !g.json {
		r.OnTick = func(t runner.TickReport) { writeTickLine(io, t) }
	}

	rep, runErr := r.Run(ctx, ticks)
	if rep != nil {
		if werr := writeReport(io, g, sim, rep); werr != nil && runErr == nil {
			runErr = werr
		}
	}
	return runErr
}

// progressLine prints one line per phase on a terminal.
func progressLine(io *IOStreams) func(runner.PhaseProgress) {
	return func(p runner.PhaseProgress) {
		if !p.Done {
			fmt.Fprintf(io.ErrOut, "\r\033[Ktick %d/%d · %s · %d calls …", p.Tick, p.LastTick, p.Phase, p.Calls)
			return
		}
		fmt.Fprintf(io.ErrOut, "\r\033[Ktick %d/%d · %s · %d calls, %d failed · %s\n", p.Tick, p.LastTick, p.Phase, p.Calls, p.Failed, p.Elapsed.Round(time.Millisecond))
	}
}

func writeReport(io *IOStreams, g *globals, sim *world.Simulation, rep *runner.Report) error {
	if g.json {
		return writeJSON(io, rep)
	}
	fmt.Fprintf(io.Out, "%s: %s; last committed tick %d (%d ticks this run, %d tokens)\n", sim.ID, rep.Stop, rep.LastTick, len(rep.Ticks), rep.Usage.Total())
	return nil
}

// writeTickLine prints a committed tick on stdout as soon as it commits.
func writeTickLine(io *IOStreams, t runner.TickReport) {
	fmt.Fprintf(io.Out, "tick %d committed: %d calls, %d failed, %d fallbacks, %d repairs, %d apply errors, %d tokens, %s\n",
		t.Tick, t.Calls, t.Failed, t.Fallbacks, t.Repairs, t.ApplyErrors, t.Usage.Total(), t.Duration.Round(time.Millisecond))
}

func statePath(dir string) string { return filepath.Join(dir, "state.db") }
