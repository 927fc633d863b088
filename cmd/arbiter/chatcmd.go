package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/cobra"
)

// chatFlags maps the shared model flags of chat to config keys; the kinds
// played in a chat add their own (session.SectionFlag).
var chatFlags = map[string]string{
	"base-url":     "llm.base_url",
	"model":        "llm.model",
	"timeout":      "llm.timeout",
	"max-attempts": "llm.max_attempts",
}

// ChatOptions are the inputs of `arbiter chat`.
type ChatOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	// Cassette records the chat's model calls, or answers them from a
	// recording (--record, --replay).
	Cassette CassetteOptions
}

func newChatCmd(ios *IOStreams, g *globals, runF func(context.Context, *ChatOptions) error) *cobra.Command {
	opts := &ChatOptions{IO: ios, Globals: g}
	var flagKeys map[string]string
	cmd := &cobra.Command{
		Use:   "chat <simulation-dir>",
		Short: "Play a simulation in conversation with a model, in an interactive terminal chat",
		Long: `chat opens a simulation of a kind played in conversation with the model, and
lets you and the model take turns. Every message is one turn, committed to
the simulation's state.db as it is made.

What the chat builds, by kind:
` + session.Help("chat"),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Cassette.check(); err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd.Flags(), flagKeys)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runChat(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.String("base-url", "", "OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 (llm.base_url)")
	f.String("model", "", "model to chat with (llm.model)")
	f.Duration("timeout", 0, "timeout of one model call attempt (llm.timeout)")
	f.Int("max-attempts", 0, "attempts per call for transient errors (llm.max_attempts)")
	flagKeys = kindFlags("chat", chatFlags, func(sf session.SectionFlag, key string, def any) {
		usage := fmt.Sprintf("%s (%s, default %v)", sf.Usage, key, def)
		switch def.(type) {
		case string:
			f.String(sf.Name, "", fmt.Sprintf("%s (%s)", sf.Usage, key))
		case float64:
			f.Float32(sf.Name, 0, usage)
		default:
			f.Int(sf.Name, 0, usage)
		}
	})
	addCassetteFlags(cmd, &opts.Cassette)
	return cmd
}

func runChat(ctx context.Context, opts *ChatOptions) (err error) {
	ctx, untrace, err := traced(ctx, opts.IO, opts.Config, "chat", opts.Dir, "")
	if err != nil {
		return err
	}
	defer func() { untrace(err) }()
	set, err := opts.Config.settings(true, "chat")
	if err != nil {
		return err
	}
	set.Logger = opts.Globals.logger(opts.IO)
	if opts.Globals.verbose > 0 {
		set.OnEvent = func(ev session.Event) { fmt.Fprintln(opts.IO.ErrOut, ev.String()) }
	}
	s, closeRun, err := openRun(ctx, opts.Dir, opts.Config, opts.Cassette, set)
	if err != nil {
		return err
	}
	defer keepFirst(&err, closeRun)
	conv := s.Chat()
	if conv == nil {
		return usageErrorf("%s is a %s simulation, not one played in a chat; see `arbiter run %s`", opts.Dir, s.Sim.Kind, opts.Dir)
	}
	c := &chat{s: s, conv: conv, in: opts.IO.In, out: opts.IO.Out, clipboard: takesOSC52(opts.IO.OutTTY)}
	if opts.IO.ErrTTY {
		c.status = opts.IO.ErrOut
	}
	err = c.run(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, session.ErrInterrupted) {
		return &exitError{code: ExitInterrupted, err: errors.New("chat interrupted; everything up to the last message is saved")}
	}
	return err
}

// takesOSC52 reports whether stdout, a terminal when tty, can be asked to
// set the clipboard with OSC 52: a TTY with a real TERM, and not GNU
// screen, which would need the sequence wrapped (tmux passes it on).
func takesOSC52(tty bool) bool {
	if !tty {
		return false
	}
	t := os.Getenv("TERM")
	return t != "" && t != "dumb" && (!strings.HasPrefix(t, "screen") || os.Getenv("TMUX") != "")
}
