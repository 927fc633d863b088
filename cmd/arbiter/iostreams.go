package main

import (
	"bytes"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// IOStreams are the terminal of a command: data on Out, logs and progress on
// ErrOut; progress only when ErrOut is a terminal.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// ErrTTY is true when ErrOut is a terminal (progress lines are shown).
	ErrTTY bool
	// Color is false when NO_COLOR is set or ErrOut is not a terminal.
	Color bool
	// OutTTY is true when Out is a terminal (screens may be cleared), and
	// OutColor when it is and NO_COLOR is not set.
	OutTTY, OutColor bool
}

// SystemStreams are the process's standard streams.
func SystemStreams() *IOStreams {
	tty := term.IsTerminal(int(os.Stderr.Fd()))
	outTTY := term.IsTerminal(int(os.Stdout.Fd()))
	noColor := os.Getenv("NO_COLOR") != ""
	return &IOStreams{
		In:       os.Stdin,
		Out:      os.Stdout,
		ErrOut:   os.Stderr,
		ErrTTY:   tty,
		Color:    tty && !noColor,
		OutTTY:   outTTY,
		OutColor: outTTY && !noColor,
	}
}

// TestStreams are in-memory streams for tests: stdin reads in, and the
// returned buffers collect stdout and stderr.
func TestStreams(in string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut}, out, errOut
}
