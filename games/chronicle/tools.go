package chronicle

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/arbiter-sim/arbiter/session"
)

// tools are `arbiter chronicle show` and `arbiter chronicle parse`.
var tools = session.Tools{
	Short: "Inspect a chronicle's timeline, or parse a model message as the chronicle would",
	List: []session.Tool{{
		Name: "show", Usage: "<simulation-dir>", Args: 1,
		Short: "Print the timeline of a chronicle as an indented tree (--json: as JSON)",
		Run:   show,
	}, {
		Name: "parse", Usage: "--phase setup|play [--timeline FILE.json]",
		Short: "Parse one model message from stdin and print its commands or its error as JSON",
		Long:  parseHelp,
		Flags: []session.ToolFlag{
			{Name: "phase", Value: "setup", Usage: "phase to check the message in: setup or play"},
			{Name: "timeline", Usage: "timeline to check the message against (JSON; see above)"},
		},
		Run: parse,
	}},
}

// show prints the timeline of the chronicle in call.Args[0].
func show(ctx context.Context, call session.ToolCall) (*session.ToolOutput, error) {
	dir := call.Args[0]
	s, err := call.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	g, ok := s.Kind.(*Game)
	if !ok {
		return nil, &session.InputError{Err: fmt.Errorf("%s is a %s simulation, not a chronicle", dir, s.Sim.Kind)}
	}
	tl := s.State().(*State).Timeline
	return &session.ToolOutput{Data: tl, Text: fmt.Sprintf("%s\nBig picture: %s\n%s", g.Title, g.BigPicture, tl.Tree())}, nil
}

const parseHelp = `parse reads one message on stdin and checks its commands exactly as the chat
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
--phase, when given, overrides the file's phase; the default is setup.`

// parseOK and parseFailed are what `chronicle parse` prints.
type (
	parseOK struct {
		OK       bool      `json:"ok"`
		Commands []Command `json:"commands"`
	}
	parseFailed struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
	}
)

// parse checks the message on stdin as the chat would.
func parse(_ context.Context, call session.ToolCall) (*session.ToolOutput, error) {
	tl, err := parseTimeline(call)
	if err != nil {
		return nil, err
	}
	msg, err := io.ReadAll(call.In)
	if err != nil {
		return nil, fmt.Errorf("reading the message from stdin: %w", err)
	}
	cmds, _, err := Interpret(tl, string(msg))
	if err != nil {
		return &session.ToolOutput{Data: parseFailed{Error: err.Error()}}, nil
	}
	if cmds == nil {
		cmds = []Command{}
	}
	return &session.ToolOutput{Data: parseOK{OK: true, Commands: cmds}}, nil
}

// parseTimeline is the timeline of --timeline (empty without it) in the
// phase of --phase, or of the file when it has one and --phase is not set.
func parseTimeline(call session.ToolCall) (Timeline, error) {
	var tl Timeline
	if file := call.Flags["timeline"]; file != "" {
		f, err := os.Open(file)
		if err != nil {
			return tl, inputErrorf("--timeline: %v", err)
		}
		defer f.Close()
		if tl, err = ReadTimeline(f); err != nil {
			return tl, inputErrorf("--timeline %s: %v", file, err)
		}
	}
	if call.Set["phase"] || tl.Stage == "" {
		p, err := ParseStage(call.Flags["phase"])
		if err != nil {
			return tl, inputErrorf("--phase: %v", err)
		}
		tl.Stage = p
	}
	return tl, nil
}

func inputErrorf(format string, args ...any) error {
	return &session.InputError{Err: fmt.Errorf(format, args...)}
}
