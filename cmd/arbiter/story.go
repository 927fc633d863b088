package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// StoryOptions are the inputs of `arbiter story`.
type StoryOptions struct {
	IO      *IOStreams
	Globals *globals
	Dir     string
	Query   session.StoryQuery
	// Last asks for the latest committed tick alone.
	Last bool
}

func newStoryCmd(io *IOStreams, g *globals, runF func(context.Context, *StoryOptions) error) *cobra.Command {
	opts := &StoryOptions{IO: io, Globals: g}
	var tick int
	cmd := &cobra.Command{
		Use:   "story <simulation-dir>",
		Short: "Tell what happened, tick by tick: moments, intentions, memories, moves, fallbacks",
		Long: `story tells what a run did, tick by tick (a game's turn by turn), as its kind
tells it (below). --last tells the latest committed tick alone. --json gives
the same as data.

What the story holds, by kind:
` + session.Help("story"),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f := cmd.Flags()
			if f.Changed("tick") && (f.Changed("from") || f.Changed("to")) {
				return usageErrorf("--tick and --from/--to: give one tick or a range, not both")
			}
			if opts.Last && (f.Changed("tick") || f.Changed("from") || f.Changed("to")) {
				return usageErrorf("--last and --tick/--from/--to: --last is the latest tick, give one or the other")
			}
			if f.Changed("tick") {
				opts.Query.From, opts.Query.To = tick, tick
			}
			for _, name := range []string{"tick", "from", "to"} {
				if n, _ := f.GetInt(name); f.Changed(name) && n < 1 {
					return usageErrorf("--%s %d: ticks start at 1 (`arbiter export %s --tick 0` shows the authored state)", name, n, args[0])
				}
			}
			opts.Dir = args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runStory(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&tick, "tick", 0, "one tick")
	cmd.Flags().BoolVar(&opts.Last, "last", false, "the latest committed tick alone")
	cmd.Flags().IntVar(&opts.Query.From, "from", 0, "first tick (default: 1)")
	cmd.Flags().IntVar(&opts.Query.To, "to", 0, "last tick (default: the last committed)")
	cmd.Flags().StringVar(&opts.Query.Location, "location", "", "only this location")
	cmd.Flags().StringVar(&opts.Query.Character, "character", "", "only this character, where they were at each tick's start")
	return cmd
}

func runStory(ctx context.Context, opts *StoryOptions) error {
	s, err := openRead(ctx, opts.Globals, opts.Dir)
	if err != nil {
		return err
	}
	defer s.Close()
	if opts.Last {
		opts.Query.From, opts.Query.To = s.LastTick(), s.LastTick() // 0, 0 when none: the story says so
	}
	st, err := s.Story(ctx, opts.Query)
	if err != nil {
		return err
	}
	if err := noteDropped(ctx, opts.IO, s); err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, st)
	}
	writeStory(opts.IO, st)
	return nil
}

// writeStory prints a story as indented text: a tick, its locations, their
// characters.
func writeStory(io *IOStreams, st *session.Story) {
	w := io.Out
	if st.From == 0 {
		fmt.Fprintf(w, "%s: no tick committed yet\n", st.Simulation)
		return
	}
	for i, t := range st.Turns {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "turn %d\n", t.Turn)
		if len(t.Lines) == 0 {
			fmt.Fprintln(w, "  (nothing logged)")
		}
		for _, l := range t.Lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for i, t := range st.Ticks {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "tick %d\n", t.Tick)
		if len(t.Locations) == 0 {
			fmt.Fprintln(w, "  (nothing here for this filter)")
		}
		for _, l := range t.Locations {
			fmt.Fprintf(w, "  %s (%s): %s\n", l.Name, l.ID, oneLine(l.Moment))
			if l.Fallback {
				fmt.Fprintln(w, "    [fallback] the game master's call failed: nothing changed here")
			}
			for _, c := range l.Characters {
				fmt.Fprintf(w, "    %s (%s)\n", c.Name, c.ID)
				mark := ""
				if c.IntentionFallback {
					mark = "[fallback: the call failed, the earlier intent stood] "
				}
				fmt.Fprintf(w, "      intends:    %s%s\n", mark, oneLine(c.Intention))
				for _, m := range c.Memory {
					fmt.Fprintf(w, "      remembers:  %s\n", oneLine(m))
				}
				if c.Moved() {
					fmt.Fprintf(w, "      moved:      %s -> %s\n", c.From, c.To)
				}
			}
			for _, sk := range l.Skipped {
				fmt.Fprintf(w, "    [skipped] update of %s: %s\n", sk.Character, sk.Reason)
			}
		}
	}
}

// oneLine folds a model's text onto one line.
func oneLine(s string) string {
	out := []rune{}
	space := false
	for _, r := range s {
		if r == '\n' || r == '\r' || r == '\t' || r == ' ' {
			space = len(out) > 0
			continue
		}
		if space {
			out = append(out, ' ')
			space = false
		}
		out = append(out, r)
	}
	return string(out)
}
