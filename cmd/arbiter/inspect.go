package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// openExisting opens the run state of dir for reading; it returns nil (and
// creates nothing) when no run has committed yet.
func openExisting(ctx context.Context, dir string) (*store.Store, error) {
	path := statePath(dir)
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	return store.Open(ctx, path)
}

func newStatusCmd(io *IOStreams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "status <simulation-dir>",
		Short: "Show the last committed tick, calls, failures and token usage",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			sim, err := loadNarrative(args[0])
			if err != nil {
				return err
			}
			st, err := openExisting(ctx, args[0])
			if err != nil {
				return err
			}
			var sum store.Summary
			if st != nil {
				defer st.Close()
				if sum, err = st.Summary(ctx); err != nil {
					return err
				}
			}
			if g.json {
				return writeJSON(io, struct {
					Simulation string `json:"simulation"`
					Title      string `json:"title"`
					store.Summary
				}{sim.ID, sim.Title, sum})
			}
			return writeStatus(io, sim, sum)
		},
	}
}

func writeStatus(io *IOStreams, sim *world.Simulation, s store.Summary) error {
	fmt.Fprintf(io.Out, "%s — %s\n", sim.ID, sim.Title)
	if s.LastTick == 0 {
		fmt.Fprintf(io.Out, "no tick committed yet (%d characters, %d locations)\n", len(sim.Characters), len(sim.Locations))
		return nil
	}
	fmt.Fprintf(io.Out, "last tick:    %d (committed %s)\n", s.LastTick, s.LastCommittedAt.Local().Format("2006-01-02 15:04:05"))
	fmt.Fprintf(io.Out, "model calls:  %d (%d failed, %d fallbacks, %d repairs)\n", s.Total.Calls, s.Total.FailedCalls, s.Fallbacks, s.Total.Repairs)
	fmt.Fprintf(io.Out, "apply errors: %d\n", s.ApplyErrors)
	if st := s.LastStop; st != nil {
		fmt.Fprintf(io.Out, "last run:     stopped at tick %d, not committed (%s, %s): %s\n",
			st.Tick, st.Reason, st.StoppedAt.Local().Format("2006-01-02 15:04:05"), st.Error)
	}
	fmt.Fprintf(io.Out, "tokens:       %d prompt (%d cached) + %d completion = %d\n",
		s.Total.PromptTokens, s.Total.CachedTokens, s.Total.CompletionTokens, s.Total.PromptTokens+s.Total.CompletionTokens)
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\ncalls by\tcalls\tfailed\tprompt\tcompletion\tcached\tlatency")
	for _, group := range [][]store.GroupUsage{s.ByPhase, s.ByEntity} {
		for _, u := range group {
			fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%dms\n", u.Key, u.Calls, u.FailedCalls, u.PromptTokens, u.CompletionTokens, u.CachedTokens, u.LatencyMS)
		}
	}
	return tw.Flush()
}

func newExportCmd(io *IOStreams, g *globals) *cobra.Command {
	var (
		format string
		tick   int
	)
	cmd := &cobra.Command{
		Use:   "export <simulation-dir>",
		Short: "Print the world state at the latest tick (or --tick N) as JSON",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "json" {
				return usageErrorf("--format %q: only json is supported", format)
			}
			sim, err := loadNarrative(args[0])
			if err != nil {
				return err
			}
			state, err := stateAt(cmd.Context(), sim, args[0], tick, cmd.Flags().Changed("tick"))
			if err != nil {
				return err
			}
			return writeJSON(io, state)
		},
	}
	cmd.Flags().StringVar(&format, "format", "json", "output format (json)")
	cmd.Flags().IntVar(&tick, "tick", 0, "tick to export (default: the latest; 0: the authored state)")
	return cmd
}

func newResetCmd(io *IOStreams, _ *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "reset <simulation-dir>",
		Short: "Delete a simulation's run state (state.db; a chronicle's chronicle.json); authored files are kept",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			dir := args[0]
			sim, err := world.Load(dir)
			if err != nil {
				return usageError(err)
			}
			unlock, err := lockSimulation(dir)
			if err != nil {
				return err
			}
			defer unlock()
			path, remove := statePath(dir), store.Reset
			if sim.Kind == world.KindChronicle {
				path, remove = filepath.Join(dir, chronicle.FileName), os.Remove
			}
			if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
				fmt.Fprintf(io.Out, "%s: no run state to delete\n", dir)
				return nil
			}
			if err := remove(path); err != nil {
				return err
			}
			fmt.Fprintf(io.Out, "deleted %s\n", path)
			return nil
		},
	}
}

// loadNarrative loads a simulation that ticks (kind narrative); any other
// kind is a usage error that names the command for it.
func loadNarrative(dir string) (*world.Simulation, error) {
	sim, err := world.Load(dir)
	if err != nil {
		return nil, usageError(err)
	}
	switch sim.Kind {
	case world.KindNarrative:
		return sim, nil
	case world.KindChronicle:
		return nil, usageErrorf("%s is a chronicle, not a narrative simulation: see `arbiter chronicle show %s` and `arbiter chat %s`", dir, dir, dir)
	default:
		return nil, usageErrorf("%s: kind %q cannot be run as a narrative simulation", filepath.Join(dir, "simulation.yaml"), sim.Kind)
	}
}

// stateAt returns the world state of dir at tick, or at the latest committed
// tick when tickSet is false; tick 0 is the authored state. Nothing is
// created when no run has committed yet.
func stateAt(ctx context.Context, sim *world.Simulation, dir string, tick int, tickSet bool) (*world.State, error) {
	st, err := openExisting(ctx, dir)
	if err != nil {
		return nil, err
	}
	last := 0
	if st != nil {
		defer st.Close()
		if last, err = st.LastTick(ctx); err != nil {
			return nil, err
		}
	}
	if !tickSet {
		tick = last
	}
	if tick < 0 || tick > last {
		return nil, usageErrorf("--tick %d: no such tick (committed ticks: 0..%d; 0 is the authored state)", tick, last)
	}
	if tick == 0 {
		return sim.InitialState(), nil
	}
	state, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	if err := state.Validate(sim); err != nil {
		return nil, usageErrorf("state of tick %d no longer fits the files of %s (edited since the run? `arbiter reset` starts over): %v", tick, dir, err)
	}
	return state, nil
}

// writeJSON prints v as indented JSON, with <, > and & as they are (model
// text and chronicle names are not HTML).
func writeJSON(io *IOStreams, v any) error {
	enc := json.NewEncoder(io.Out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
