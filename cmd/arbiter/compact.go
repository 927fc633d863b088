package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// CompactOptions are the inputs of `arbiter compact`.
type CompactOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
	Keep    int // --keep-texts
	Depth   int // llm.depth: the past exchanges a resumed run sends back
}

// defaultKeepTexts is how many of the last ticks keep their texts when
// --keep-texts is not given.
const defaultKeepTexts = 10

func newCompactCmd(io *IOStreams, g *globals, runF func(context.Context, *CompactOptions) error) *cobra.Command {
	opts := &CompactOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "compact <simulation-dir> [--keep-texts N]",
		Short: "Drop the prompt and answer texts of all but the last N ticks from state.db",
		Long: `compact makes state.db smaller: it drops the prompts sent and the answers
received of every tick but the last N (--keep-texts, default 10), and the past
exchanges a resumed run no longer sends back (it keeps each entity's last
llm.depth), then rewrites the file without the freed space. Every count, token,
latency, cost, state, intention, output, memory and event is kept: status,
usage, story, export and report read as before, and say which ticks lost their
texts. It is refused while a run or a chat holds the simulation; killed at any
point, it leaves state.db as it was or compacted, never in between.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Keep < 0 {
				return usageErrorf("--keep-texts %d: give 0 or more ticks", opts.Keep)
			}
			cfg, err := g.loadConfig(nil, nil)
			if err != nil {
				return err
			}
			opts.Dir, opts.Depth = args[0], cfg.LLM.Depth
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runCompact(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.Keep, "keep-texts", defaultKeepTexts, "keep the prompt and answer texts of the last N ticks")
	return cmd
}

func runCompact(ctx context.Context, opts *CompactOptions) error {
	c, err := session.Compact(ctx, opts.Dir, opts.Keep, opts.Depth)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, map[string]any{"simulation": opts.Dir, "compacted": c})
	}
	what := "no texts dropped"
	if c.DroppedThrough > 0 {
		what = fmt.Sprintf("the prompt and answer texts of ticks 1..%d dropped (%s now)", c.DroppedThrough, plural(c.Calls, "call"))
	}
	fmt.Fprintf(opts.IO.Out, "%s: %s; state.db %s → %s\n", opts.Dir, what, mib(c.BytesBefore), mib(c.BytesAfter))
	return nil
}

func mib(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// droppedNote is the line that says which ticks lost their texts to
// `arbiter compact`, "" when none did.
func droppedNote(through int) string {
	if through == 0 {
		return ""
	}
	return fmt.Sprintf("texts:        the prompts and answers of ticks 1..%d were dropped by `arbiter compact` (counts, tokens, costs and states are whole)", through)
}

// noteDropped writes droppedNote to stderr, for the commands whose stdout
// is data (story, export).
func noteDropped(ctx context.Context, io *IOStreams, s interface {
	TextsDroppedThrough(context.Context) (int, error)
}) error {
	n, err := s.TextsDroppedThrough(ctx)
	if err != nil || n == 0 {
		return err
	}
	_, err = fmt.Fprintf(io.ErrOut, "note: the prompts and answers of ticks 1..%d were dropped by `arbiter compact`; states and stories are whole\n", n)
	return err
}
