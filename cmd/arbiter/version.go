package main

import (
	"fmt"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/cobra"
)

// versionLine is the build of the running binary in one line: its module
// version, the revision it was built from (and whether the work tree had
// changes), and the Go it was built with.
func versionLine(b session.Build) string {
	return "arbiter " + b.String()
}

func newVersionCmd(io *IOStreams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the build of arbiter: version, revision, Go (--version too)",
		Args:  exactArgs(0),
		RunE: func(*cobra.Command, []string) error {
			b := session.ReadBuild()
			if ex := g.exporter(); ex != nil {
				return ex.Write(io, b)
			}
			_, err := fmt.Fprintln(io.Out, versionLine(b))
			return err
		},
	}
}
