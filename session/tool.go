package session

import (
	"context"
	"io"
)

// Tools are a kind's own commands, beside the commands every kind shares:
// the CLI mounts them as `arbiter <kind> <tool>`. Short says what they
// are for, as the group's help line.
type Tools struct {
	Short string
	List  []Tool
}

// Tool is one command of a kind's own. What it takes is data (its
// arguments and string flags) and what it prints is its result, so that
// the CLI mounts every kind's tools the same way.
type Tool struct {
	Name string
	// Usage is the usage line after the name ("<simulation-dir>").
	Usage       string
	Short, Long string
	Args        int // positional arguments it takes
	Flags       []ToolFlag
	Run         func(ctx context.Context, call ToolCall) (*ToolOutput, error)
}

// ToolFlag is a string flag of a tool.
type ToolFlag struct{ Name, Value, Usage string }

// ToolCall is one run of a tool, as the command line asked for it.
type ToolCall struct {
	Args []string
	// Flags holds every flag of the tool: its value, or its default when
	// not given; Set tells which were given.
	Flags map[string]string
	Set   map[string]bool
	In    io.Reader // stdin
	// Open opens the simulation in dir to read its run state, with the
	// configuration of the command line.
	Open func(ctx context.Context, dir string) (*Session, error)
}

// ToolOutput is what a tool prints: Text, or Data as JSON when the command
// line asks for machine output (--json) or there is no Text. A problem the
// person can fix (a flag, a file) is an *InputError instead.
type ToolOutput struct {
	Data any
	Text string
}

// KindTools are the tools the kind name registered (Opener.Tools).
func KindTools(name string) Tools {
	o, _ := opener(name)
	return o.Tools
}
