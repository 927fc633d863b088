package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
			return runValidate(cmd.Context(), opts)
		},
	}
}

func runValidate(ctx context.Context, opts *ValidateOptions) error {
	io, dir := opts.IO, opts.Dir
	set, err := opts.Config.settings(true, "")
	if err != nil {
		return err
	}
	// The templates the simulation overrides come first, then every
	// problem, then the warnings (folders the kind does not read,
	// prefixed "warning: "), which do not fail the check.
	v := session.Validate(dir, set)
	if len(v.Problems) == 0 {
		// The first tick's prompts against the model's context as the
		// server says it, llm.context_tokens being unset.
		v.Warnings = append(v.Warnings, session.ContextWarnings(ctx, dir, set)...)
	}
	// The config file's unknown keys are problems of the check too (a typo
	// would be ignored by every run); its deprecated keys are warnings.
	var cfgProblems, cfgWarnings []error
	for _, u := range opts.Config.unknown {
		cfgProblems = append(cfgProblems, errors.New(u))
	}
	for _, d := range opts.Config.deprecated {
		cfgWarnings = append(cfgWarnings, errors.New(d))
	}
	problems, warnings := append(cfgProblems, v.Problems...), append(cfgWarnings, v.Warnings...)
	if ex := opts.Globals.exporter(); ex != nil {
		overrides := make([]overrideJSON, len(v.Overrides))
		for i, o := range v.Overrides {
			overrides[i] = overrideJSON{Template: o.Template, File: o.Path}
		}
		if err := ex.Write(io, map[string]any{"ok": len(problems) == 0, "problems": messages(problems), "warnings": messages(warnings), "overrides": overrides}); err != nil {
			return err
		}
	} else {
		for _, o := range v.Overrides {
			fmt.Fprintf(io.Out, "overridden: %s (%s)\n", o.Template, o.Path)
		}
		for _, p := range problems {
			fmt.Fprintln(io.Out, p)
		}
		for _, w := range warnings {
			fmt.Fprintln(io.Out, "warning:", w)
		}
	}
	if len(problems) > 0 {
		return usageErrorf("%s: %d problem(s)", dir, len(problems))
	}
	if opts.Globals.exporter() == nil {
		what := session.Summary(v.Sim)
		if len(v.Overrides) > 0 {
			what = append(what, plural(len(v.Overrides), "template")+" overridden")
		}
		if len(warnings) > 0 {
			what = append(what, plural(len(warnings), "warning"))
		}
		fmt.Fprintf(io.Out, "ok: %s (%s)\n", v.Sim.ID, strings.Join(what, ", "))
	}
	return nil
}

// overrideJSON is a template override as validate --json lists it.
type overrideJSON struct {
	Template string `json:"template"`
	File     string `json:"file"`
}

// messages is errs as text, never nil, for JSON.
func messages(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
