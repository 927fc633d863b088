package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/runner"
)

// chatFlags maps the model flags of chat to config keys.
var chatFlags = map[string]string{
	"base-url":     "llm.base_url",
	"model":        "llm.model",
	"timeout":      "llm.timeout",
	"max-attempts": "llm.max_attempts",
	"chat-model":   "chronicle.model",
	"temperature":  "chronicle.temperature",
	"max-tokens":   "chronicle.max_tokens",
	"window":       "chronicle.window",
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
	cmd := &cobra.Command{
		Use:   "chat <simulation-dir>",
		Short: "Build a chronicle's history with a model, in an interactive terminal chat",
		Long: `chat opens a chronicle simulation (kind: chronicle) and lets you and the model
build its history together: bookends and palette in setup, then periods and
events in play. Commands in messages (CREATE PERIOD, CREATE EVENT, CREATE
PALETTE) change the timeline, a whole message or nothing of it. Type /help in
the chat for its commands (/raw, /reparse, /restart, /copy, /timeline, /play).
Every message is one turn, committed to the simulation's state.db as it is
made; a chronicle.json saved by an earlier version is imported the first time.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Cassette.check(); err != nil {
				return err
			}
			cfg, err := loadConfig(g.configFile, cmd.Flags(), chatFlags)
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
	f.String("chat-model", "", "model of the chat when it differs from llm.model (chronicle.model)")
	f.Float32("temperature", 0, "sampling temperature of the model's messages (chronicle.temperature, default 0.8)")
	f.Int("max-tokens", 0, "longest model message, in tokens (chronicle.max_tokens, default 1000)")
	f.Int("window", 0, "latest messages sent to the model each turn, 0 for all (chronicle.window, default 0: the whole conversation)")
	addCassetteFlags(cmd, &opts.Cassette)
	return cmd
}

func runChat(ctx context.Context, opts *ChatOptions) (err error) {
	set, err := opts.Config.settings(true, "chat")
	if err != nil {
		return err
	}
	set.Logger = opts.Globals.logger(opts.IO)
	if opts.Globals.verbose > 0 {
		set.OnEvent = func(ev runner.Event) { fmt.Fprintln(opts.IO.ErrOut, ev.String()) }
	}
	s, closeRun, err := openRun(ctx, opts.Dir, opts.Config, opts.Cassette, set)
	if err != nil {
		return err
	}
	defer keepFirst(&err, closeRun)
	g, ok := s.Kind.(*chronicle.Game)
	if !ok {
		return usageErrorf("%s is a %s simulation, not a chronicle: `arbiter chat` plays chronicles (kind: chronicle); see `arbiter run %s`", opts.Dir, s.Sim.Kind, opts.Dir)
	}
	c := &chat{s: s, g: g, in: opts.IO.In, out: opts.IO.Out, clipboard: takesOSC52(opts.IO.Out)}
	if opts.IO.ErrTTY {
		c.status = opts.IO.ErrOut
	}
	err = c.run(ctx)
	if errors.Is(err, context.Canceled) || errors.Is(err, runner.ErrInterrupted) {
		return &exitError{code: ExitInterrupted, err: errors.New("chat interrupted; everything up to the last message is saved")}
	}
	return err
}

// takesOSC52 reports whether w is a terminal that can be asked to set the
// clipboard with OSC 52: a TTY with a real TERM, and not GNU screen, which
// would need the sequence wrapped (tmux passes it on).
func takesOSC52(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	t := os.Getenv("TERM")
	return t != "" && t != "dumb" && (!strings.HasPrefix(t, "screen") || os.Getenv("TMUX") != "")
}

func newChronicleCmd(ios *IOStreams, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "chronicle",
		Short: "Inspect a chronicle's timeline, or parse a model message as the chronicle would",
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q (see arbiter chronicle --help)", args[0], cmd.CommandPath())
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newChronicleShowCmd(ios, g), newChronicleParseCmd(ios))
	return cmd
}

func newChronicleShowCmd(ios *IOStreams, g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "show <simulation-dir>",
		Short: "Print the timeline of a chronicle as an indented tree (--json: as JSON)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			s, err := openRead(cmd.Context(), g, args[0])
			if err != nil {
				return err
			}
			defer s.Close()
			game, ok := s.Kind.(*chronicle.Game)
			if !ok {
				return usageErrorf("%s is a %s simulation, not a chronicle", args[0], s.Sim.Kind)
			}
			tl := s.State().(*chronicle.State).Timeline
			if ex := g.exporter(); ex != nil {
				return ex.Write(ios, tl)
			}
			_, err = fmt.Fprintf(ios.Out, "%s\nBig picture: %s\n%s", game.Title, game.BigPicture, tl.Tree())
			return err
		},
	}
}

// parseOK and parseFailed are what `chronicle parse` prints.
type (
	parseOK struct {
		OK       bool                `json:"ok"`
		Commands []chronicle.Command `json:"commands"`
	}
	parseFailed struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
)

func newChronicleParseCmd(ios *IOStreams) *cobra.Command {
	var phase, timelineFile string
	cmd := &cobra.Command{
		Use:   "parse --phase setup|play [--timeline FILE.json]",
		Short: "Parse one model message from stdin and print its commands or its error as JSON",
		Long: `parse reads one message on stdin and checks its commands exactly as the chat
would, against the timeline of --timeline (empty when not given) in --phase,
all or nothing. It prints {"ok":true,"commands":[...]} or
{"ok":false,"error":"<reason>"} and exits 0 either way; bad flags or an
unreadable timeline exit 2.

Each command has type (period|event|palette), name, tone, description,
position (first|last|after|before, "" for the first event of a period),
anchor (the period or event of AFTER/BEFORE), period (the period of an
event), line, and for a palette items [{kind: YES|NO, text}].

The timeline JSON (a chronicle.json is one too; every field may be left out,
unknown fields are errors):
  {"phase": "setup|play",
   "periods": [{"name": "...", "tone": "light|dark", "description": "...",
                "bookend": "first|last", "events": [{"name": "...", "tone": "dark"}]}],
   "palette": {"yes": ["..."], "no": ["..."]}}
--phase, when given, overrides the file's phase; the default is setup.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var tl chronicle.Timeline
			if timelineFile != "" {
				f, err := os.Open(timelineFile)
				if err != nil {
					return usageErrorf("--timeline: %v", err)
				}
				defer f.Close()
				if tl, err = chronicle.ReadTimeline(f); err != nil {
					return usageErrorf("--timeline %s: %v", timelineFile, err)
				}
			}
			if cmd.Flags().Changed("phase") || tl.Phase == "" {
				p, err := chronicle.ParsePhase(phase)
				if err != nil {
					return usageErrorf("--phase: %v", err)
				}
				tl.Phase = p
			}
			msg, err := io.ReadAll(ios.In)
			if err != nil {
				return fmt.Errorf("reading the message from stdin: %w", err)
			}
			cmds, _, err := chronicle.Interpret(tl, string(msg))
			if err != nil {
				return exportJSON.Write(ios, parseFailed{Error: err.Error()})
			}
			if cmds == nil {
				cmds = []chronicle.Command{}
			}
			return exportJSON.Write(ios, parseOK{OK: true, Commands: cmds})
		},
	}
	cmd.Flags().StringVar(&phase, "phase", "setup", "phase to check the message in: setup or play")
	cmd.Flags().StringVar(&timelineFile, "timeline", "", "timeline to check the message against (JSON; see above)")
	return cmd
}
