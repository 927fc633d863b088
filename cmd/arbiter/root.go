package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globals are the flags every command shares.
type globals struct {
	configFile string
	verbose    int
	json       bool
	// errOut is where the configuration's warnings go (stderr).
	errOut io.Writer
}

// loadConfig loads the configuration as loadConfig does and prints its
// warnings (an unknown key, a deprecated one) on stderr, one line each.
func (g *globals) loadConfig(flags *pflag.FlagSet, flagKeys map[string]string) (*Config, error) {
	c, err := loadConfig(g.configFile, flags, flagKeys)
	if err == nil && g.errOut != nil {
		for _, w := range c.warnings() {
			fmt.Fprintln(g.errOut, "warning:", w)
		}
	}
	return c, err
}

// Execute runs arbiter with args and returns the process exit code. Errors are
// printed once, on ErrOut.
func Execute(ctx context.Context, io *IOStreams, args []string) int {
	io, flush := io.printable()
	defer flush()
	root := newRootCmd(io)
	root.SetArgs(args)
	cmd, err := root.ExecuteContextC(ctx)
	if err != nil {
		prefix := "arbiter"
		var re *runError
		if errors.As(err, &re) {
			err = re.err
		} else {
			// Not from a command's RunE: cobra rejected the arguments or
			// flags of cmd, whose help says what it takes.
			prefix = cmd.CommandPath()
			if cmd.HasParent() && !cmd.HasSubCommands() {
				err = usageErrorf("%v (usage: %s; see %s --help)", err, cmd.UseLine(), prefix)
			} else {
				err = usageErrorf("%v (see %s --help)", err, prefix)
			}
		}
		// Each of several errors (a config's problems) is a line of its
		// own, each named as the first.
		for _, e := range joined(err) {
			fmt.Fprintf(io.ErrOut, "%s: %v\n", prefix, e)
		}
	}
	return exitCode(err)
}

// joined lists the problems of err when it is a lineErrors (a config's
// problems) and says no more than they do, else err alone.
func joined(err error) []error {
	var le lineErrors
	if errors.As(err, &le) && le.Error() == err.Error() {
		return le
	}
	return []error{err}
}

// lineErrors are several problems, each printed by Execute as a line of
// its own, prefixed as the first.
type lineErrors []error

func (e lineErrors) Error() string   { return errors.Join(e...).Error() }
func (e lineErrors) Unwrap() []error { return e }

// runError marks an error returned by a command's RunE, to tell it from
// cobra's own argument and flag errors, which are usage errors.
type runError struct{ err error }

func (e *runError) Error() string { return e.err.Error() }
func (e *runError) Unwrap() error { return e.err }

// markRunErrors wraps the RunE of cmd and its subcommands with runError.
func markRunErrors(cmd *cobra.Command) {
	if run := cmd.RunE; run != nil {
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if err := run(c, args); err != nil {
				return &runError{err}
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		markRunErrors(c)
	}
}

func newRootCmd(io *IOStreams) *cobra.Command {
	g := &globals{errOut: io.ErrOut}
	root := &cobra.Command{
		Use:   "arbiter",
		Short: "Run LLM-driven worlds tick by tick",
		Long: `arbiter runs LLM-driven worlds tick by tick. Every tick or turn commits whole
to the simulation's state.db, or not at all. The kind of simulation
(simulation.yaml's kind:) says what a tick is:
` + session.Help("arbiter"),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.Version = versionLine(session.ReadBuild())
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.PersistentFlags().StringVar(&g.configFile, "config", "", "config file (default ./config.yaml when present; env ARBITER_CONFIG)")
	root.PersistentFlags().CountVarP(&g.verbose, "verbose", "v", "print events and info logs (-vv: debug)")
	root.PersistentFlags().BoolVar(&g.json, "json", false, "machine-readable JSON output on stdout")

	root.AddCommand(
		newRunCmd(io, g, nil),
		newStatusCmd(io, g, nil), newDiffRunsCmd(io, g, nil),
		newExportCmd(io, g, nil),
		newStoryCmd(io, g, nil), newUsageCmd(io, g, nil), newReportCmd(io, g, nil),
		newResetCmd(io, g, nil), newCompactCmd(io, g, nil),
		newValidateCmd(io, g, nil),
		newPromptsCmd(io, g, nil), newEvalCmd(io, g, nil),
		newSchemasCmd(io, g, nil),
		newConfigCmd(io, g),
		newChatCmd(io, g, nil),
		newPlayCmd(io, g, nil), newArenaCmd(io, g, nil),
		newDoctorCmd(io, g), newBenchCmd(io, g, nil),
		newVersionCmd(io, g),
	)
	root.AddCommand(newKindCmds(io, g)...)
	for _, c := range root.Commands() {
		if c.HasSubCommands() && c.RunE == nil {
			// A group run alone shows its help; with a word that is none of
			// its commands it is a usage error, not the help and exit 0.
			c.Args = func(cmd *cobra.Command, args []string) error {
				if len(args) > 0 {
					return fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())
				}
				return nil
			}
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
	}
	markRunErrors(root)
	return root
}

// exactArgs is cobra.ExactArgs in words; Execute makes it a usage error
// naming the command's usage line and help.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("takes %s, got %d", plural(n, "argument"), len(args))
		}
		return nil
	}
}

// logger builds the log handler for the verbosity asked for.
func (g *globals) logger(io *IOStreams) *slog.Logger {
	level := slog.LevelWarn
	switch {
	case g.verbose >= 2:
		level = slog.LevelDebug
	case g.verbose == 1:
		level = slog.LevelInfo
	}
	return slog.New(newLogHandler(io.ErrOut, level))
}
