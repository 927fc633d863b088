package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// DiffRunsOptions are the inputs of `arbiter diff-runs`.
type DiffRunsOptions struct {
	IO      *IOStreams
	Globals *globals
	Dirs    []string // one simulation, or two whose latest runs are compared
	Runs    []int    // with one simulation: the two runs to compare; none for the last two
}

func newDiffRunsCmd(io *IOStreams, g *globals, runF func(context.Context, *DiffRunsOptions) error) *cobra.Command {
	opts := &DiffRunsOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "diff-runs <simulation-dir> [other-simulation-dir]",
		Short: "Say what changed between two runs: models, base URL, templates, schemas, seed, version, config",
		Long: `diff-runs compares the manifests of two runs: the arbiter build, the base URL,
the model of each phase, the prompt templates and schemas in effect (by
hash), the seed and the configuration, key by key (old → new).

With one simulation it compares its last two runs, or the two given with
--run (numbered from 1 as status shows them). With two simulations it
compares the latest run of each.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return fmt.Errorf("takes 1 or 2 arguments, got %d", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			switch {
			case len(opts.Runs) != 0 && len(opts.Runs) != 2:
				return usageErrorf("--run given %s: give two (--run 1 --run 2), or none for the last two runs", plural(len(opts.Runs), "time"))
			case len(opts.Runs) != 0 && len(args) == 2:
				return usageErrorf("--run picks runs of one simulation; with two simulations the latest run of each is compared")
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runDiffRuns(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntSliceVar(&opts.Runs, "run", nil, "a run to compare, given twice (--run 1 --run 3); default the last two")
	return cmd
}

// simRuns is the runs stored for one simulation.
type simRuns struct {
	dir  string
	runs []session.Run
}

func readRuns(ctx context.Context, g *globals, dir string) (*simRuns, error) {
	s, err := openRead(ctx, g, dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	runs, err := s.Runs(ctx)
	if err != nil {
		return nil, err
	}
	return &simRuns{dir: dir, runs: runs}, nil
}

// pick returns run n (1-based), or a usage error naming the runs there are.
func (s *simRuns) pick(n int) (session.Run, error) {
	if n < 1 || n > len(s.runs) {
		return session.Run{}, usageErrorf("--run %d: %s has no run %d (%s)", n, s.dir, n, s.have())
	}
	return s.runs[n-1], nil
}

// have says which runs there are: "its runs: 1..3".
func (s *simRuns) have() string {
	switch len(s.runs) {
	case 0:
		return "no run has committed a tick yet"
	case 1:
		return "its only run is 1"
	}
	return fmt.Sprintf("its runs: 1..%d", len(s.runs))
}

func runDiffRuns(ctx context.Context, opts *DiffRunsOptions) error {
	first, err := readRuns(ctx, opts.Globals, opts.Dirs[0])
	if err != nil {
		return err
	}
	var (
		a, b   session.Run
		second *simRuns
	)
	switch {
	case len(opts.Dirs) == 2:
		if second, err = readRuns(ctx, opts.Globals, opts.Dirs[1]); err != nil {
			return err
		}
		for _, s := range []*simRuns{first, second} {
			if len(s.runs) == 0 {
				return usageErrorf("%s has no runs yet: nothing to compare (runs are stored from schema version 3 on)", s.dir)
			}
		}
		a, b = first.runs[len(first.runs)-1], second.runs[len(second.runs)-1]
	case len(opts.Runs) == 2:
		if a, err = first.pick(opts.Runs[0]); err != nil {
			return err
		}
		if b, err = first.pick(opts.Runs[1]); err != nil {
			return err
		}
	default:
		if n := len(first.runs); n < 2 {
			return usageErrorf("%s has %s (%s): diff-runs compares two; run it again, or compare it with another simulation: arbiter diff-runs %s <other-simulation-dir>",
				first.dir, plural(n, "run"), first.have(), first.dir)
		}
		a, b = first.runs[len(first.runs)-2], first.runs[len(first.runs)-1]
	}
	d, err := session.DiffRuns(a, b)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, d)
	}
	return writeRunsDiff(opts.IO, d)
}

func writeRunsDiff(io *IOStreams, d *session.RunsDiff) error {
	fmt.Fprintf(io.Out, "%s → %s\n", d.A, d.B)
	if d.Same {
		fmt.Fprintln(io.Out, "no differences: same arbiter build, base URL, models, templates, schemas, seed and configuration")
		return nil
	}
	for _, c := range d.Changes {
		fmt.Fprintf(io.Out, "  %s\n", c)
	}
	return nil
}
