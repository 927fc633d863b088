package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/schemas"
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

// SchemaFile is one schema file as `schemas generate|check --json` reports it.
type SchemaFile struct {
	Path string `json:"path"`
	// Status is written (generate), or up_to_date, stale or missing (check).
	Status string `json:"status"`
}

func runSchemasGenerate(opts *SchemasOptions) error {
	named := session.Schemas()
	if err := schemas.Write(opts.Dir, named); err != nil {
		return err
	}
	files := make([]SchemaFile, len(named))
	for i, n := range named {
		files[i] = SchemaFile{Path: filepath.Join(opts.Dir, n.FileName()), Status: "written"}
	}
	if opts.Globals.json {
		return writeJSON(opts.IO, map[string]any{"dir": opts.Dir, "files": files})
	}
	for _, f := range files {
		fmt.Fprintf(opts.IO.Out, "wrote %s\n", f.Path)
	}
	return nil
}

func runSchemasCheck(opts *SchemasOptions) error {
	named := session.Schemas()
	err := schemas.Check(opts.Dir, named)
	if opts.Globals.json {
		status := map[string]string{}
		var other []error
		for _, e := range unjoin(err) {
			var se *schemas.StaleError
			switch {
			case errors.As(e, &se) && se.Missing:
				status[se.Path] = "missing"
			case errors.As(e, &se):
				status[se.Path] = "stale"
			case e != nil:
				other = append(other, e)
			}
		}
		if len(other) > 0 {
			return errors.Join(other...)
		}
		files := make([]SchemaFile, len(named))
		for i, n := range named {
			p := filepath.Join(opts.Dir, n.FileName())
			files[i] = SchemaFile{Path: p, Status: "up_to_date"}
			if s, ok := status[p]; ok {
				files[i].Status = s
			}
		}
		if werr := writeJSON(opts.IO, map[string]any{"dir": opts.Dir, "up_to_date": err == nil, "files": files}); werr != nil {
			return werr
		}
	}
	if err != nil {
		return usageError(err)
	}
	if !opts.Globals.json {
		fmt.Fprintf(opts.IO.Out, "schemas in %s are up to date\n", opts.Dir)
	}
	return nil
}
