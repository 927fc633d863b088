package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/arbiter-sim/arbiter/session"
)

func newSchemasCmd(io *IOStreams, _ *globals) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "schemas",
		Short: "Generate or check the JSON Schema files of the model outputs",
	}
	cmd.PersistentFlags().StringVar(&dir, "dir", "schemas", "folder of the *.schema.json files")
	generate := &cobra.Command{
		Use:   "generate",
		Short: "Write schemas/*.schema.json from the Go output types",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			named := session.Schemas()
			if err := schemas.Write(dir, named); err != nil {
				return err
			}
			for _, n := range named {
				fmt.Fprintf(io.Out, "wrote %s/%s\n", dir, n.FileName())
			}
			return nil
		},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "Fail when schemas/*.schema.json differ from the Go output types",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			if err := schemas.Check(dir, session.Schemas()); err != nil {
				return usageError(err)
			}
			fmt.Fprintf(io.Out, "schemas in %s are up to date\n", dir)
			return nil
		},
	}
	cmd.AddCommand(generate, check)
	return cmd
}
