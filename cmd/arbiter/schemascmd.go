package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// SchemasOptions are the inputs of `arbiter schemas generate` and `check`.
type SchemasOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
}

func newSchemasCmd(io *IOStreams, g *globals, runF func(context.Context, string, *SchemasOptions) error) *cobra.Command {
	opts := &SchemasOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "schemas",
		Short: "Generate or check the JSON Schema files of the model outputs",
	}
	cmd.PersistentFlags().StringVar(&opts.Dir, "dir", "schemas", "folder of the *.schema.json files")
	sub := func(use, short string, run func(*SchemasOptions) error) *cobra.Command {
		return &cobra.Command{
			Use:   use,
			Short: short,
			Args:  exactArgs(0),
			RunE: func(c *cobra.Command, _ []string) error {
				if runF != nil {
					return runF(c.Context(), use, opts)
				}
				return run(opts)
			},
		}
	}
	cmd.AddCommand(
		sub("generate", "Write schemas/*.schema.json from the Go output types", runSchemasGenerate),
		sub("check", "Fail when schemas/*.schema.json differ from the Go output types", runSchemasCheck),
	)
	return cmd
}

func runSchemasGenerate(opts *SchemasOptions) error {
	files, err := session.WriteSchemas(opts.Dir)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, map[string]any{"dir": opts.Dir, "files": files})
	}
	for _, f := range files {
		fmt.Fprintf(opts.IO.Out, "wrote %s\n", f.Path)
	}
	return nil
}

func runSchemasCheck(opts *SchemasOptions) error {
	files, err := session.CheckSchemas(opts.Dir)
	ex := opts.Globals.exporter()
	if ex != nil {
		if err != nil && !errors.Is(err, session.ErrSchemasStale) {
			return err
		}
		if werr := ex.Write(opts.IO, map[string]any{"dir": opts.Dir, "up_to_date": err == nil, "files": files}); werr != nil {
			return werr
		}
	}
	if err != nil {
		return usageError(err)
	}
	if ex == nil {
		fmt.Fprintf(opts.IO.Out, "schemas in %s are up to date\n", opts.Dir)
	}
	return nil
}
