package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// PromptsInitOptions are the inputs of `arbiter prompts init`.
type PromptsInitOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
	Phase   string // "" for every phase of the kind
	Force   bool
}

func newPromptsInitCmd(io *IOStreams, g *globals, runF func(context.Context, *PromptsInitOptions) error) *cobra.Command {
	opts := &PromptsInitOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "init <simulation-dir> [--phase P]",
		Short: "Write the default prompt templates into the simulation's prompts/ folder, to edit",
		Long: `Write the default templates of the simulation's kind into its prompts/
folder, where each file overrides the default of the same name: the
starting point of an override. --phase writes only that phase's templates.
A file there already is left as it is and nothing is written, unless
--force replaces it with the default. Each file written is named; each is
written whole or not at all.

The phases with templates, by kind:
` + kindPhases(),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPromptsInit(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Phase, "phase", "", "only this phase's templates (default: every phase's)")
	cmd.Flags().BoolVar(&opts.Force, "force", false, "replace files already in prompts/ with the defaults")
	return cmd
}

// kindPhases lists each registered kind's phases that render templates,
// one kind a line.
func kindPhases() string {
	var b strings.Builder
	for _, k := range session.Kinds() {
		if phases := session.Phases(k); len(phases) > 0 {
			fmt.Fprintf(&b, "  %-10s %s\n", k, strings.Join(phases, ", "))
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func runPromptsInit(opts *PromptsInitOptions) error {
	written, err := session.InitPrompts(opts.Dir, opts.Phase, opts.Force)
	if ex := opts.Globals.exporter(); ex != nil && err == nil {
		return ex.Write(opts.IO, map[string]any{"written": written})
	}
	for _, p := range written {
		fmt.Fprintln(opts.IO.Out, "wrote", p)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "edit them, then see what a call sends with `arbiter prompts render %s --phase ...` and check them with `arbiter validate %s`\n", opts.Dir, opts.Dir)
	return nil
}
