package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// ValidateOptions are the inputs of `arbiter validate`.
type ValidateOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
}

func newValidateCmd(io *IOStreams, g *globals, runF func(context.Context, *ValidateOptions) error) *cobra.Command {
	opts := &ValidateOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "validate <simulation-dir>",
		Short: "Check a simulation's files and prompt templates; list every problem",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := loadConfig(g.configFile, cmd.Flags(), nil)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runValidate(opts)
		},
	}
}

func runValidate(opts *ValidateOptions) error {
	io, dir := opts.IO, opts.Dir
	set, err := opts.Config.settings(false)
	if err != nil {
		return err
	}
	sim, problems := session.Validate(dir, set)
	if opts.Globals.json {
		msgs := make([]string, len(problems))
		for i, p := range problems {
			msgs[i] = p.Error()
		}
		if err := writeJSON(io, map[string]any{"ok": len(problems) == 0, "problems": msgs}); err != nil {
			return err
		}
	} else {
		for _, p := range problems {
			fmt.Fprintln(io.Out, p)
		}
	}
	if len(problems) > 0 {
		return usageErrorf("%s: %d problem(s)", dir, len(problems))
	}
	if !opts.Globals.json {
		if sim.Kind == "narrative" {
			fmt.Fprintf(io.Out, "ok: %s (%s, %s)\n", sim.ID, plural(len(sim.Characters), "character"), plural(len(sim.Locations), "location"))
		} else {
			fmt.Fprintf(io.Out, "ok: %s (%s)\n", sim.ID, sim.Kind)
		}
	}
	return nil
}
