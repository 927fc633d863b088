package main

import (
	"cmp"
	"context"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// newKindCmds are the registered kinds' own commands, `arbiter <kind>
// <tool>` (session.KindTools), each kind's a group named after it.
func newKindCmds(ios *IOStreams, g *globals) []*cobra.Command {
	var out []*cobra.Command
	for _, kind := range session.Kinds() {
		tools := session.KindTools(kind)
		if len(tools.List) == 0 {
			continue
		}
		group := &cobra.Command{Use: kind, Short: tools.Short}
		for _, t := range tools.List {
			group.AddCommand(newToolCmd(ios, g, t))
		}
		out = append(out, group)
	}
	return out
}

// newToolCmd mounts a kind's tool: its flags are string flags, its output
// goes through the exporter with --json, and as JSON when it has no text.
func newToolCmd(ios *IOStreams, g *globals, t session.Tool) *cobra.Command {
	values := map[string]*string{}
	cmd := &cobra.Command{
		Use:   strings.TrimSpace(t.Name + " " + t.Usage),
		Short: t.Short,
		Long:  t.Long,
		Args:  exactArgs(t.Args),
		RunE: func(cmd *cobra.Command, args []string) error {
			call := session.ToolCall{Args: args, Flags: map[string]string{}, Set: map[string]bool{}, In: ios.In,
				Open: func(ctx context.Context, dir string) (*session.Session, error) { return openRead(ctx, g, dir) }}
			for name, v := range values {
				call.Flags[name], call.Set[name] = *v, cmd.Flags().Changed(name)
			}
			out, err := t.Run(cmd.Context(), call)
			if err != nil {
				return err
			}
			if ex := g.exporter(); ex != nil || out.Text == "" {
				return cmp.Or(ex, exportJSON).Write(ios, out.Data)
			}
			_, err = io.WriteString(ios.Out, out.Text)
			return err
		},
	}
	for _, f := range t.Flags {
		values[f.Name] = cmd.Flags().String(f.Name, f.Value, f.Usage)
	}
	return cmd
}
