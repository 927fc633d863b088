package main

import (
	"bytes"
	"io"
	"os"
	"strconv"
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
	// Width is the columns of the terminal Out is, where a game's screens
	// wrap (read when the streams are made); 0 when Out is not a terminal
	// and COLUMNS is not set: no wrapping.
	Width int
}

// printable returns the streams with Out and ErrOut escaping every control
// character but newline and tab (escapeWriter): what a model, a server
// or a simulation file wrote reaches the terminal as text, whichever command
// prints it. flush writes what a last write left waiting.
func (s *IOStreams) printable() (ios *IOStreams, flush func()) {
	c := *s
	out, errOut := newEscapeWriter(s.Out), newEscapeWriter(s.ErrOut)
	c.Out, c.ErrOut = out, errOut
	return &c, func() {
		out.Flush()
		errOut.Flush()
	}
}

// styled is Out for text a kind painted for a colour terminal (a game's
// screens): its colour sequences pass, every other control is escaped.
func (s *IOStreams) styled() io.Writer {
	if !s.OutColor {
		return s.Out
	}
	return colourPassing(s.Out)
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
		Width:    columns(outTTY),
	}
}

// columns is the width of the terminal on stdout, else COLUMNS, else 0.
func columns(tty bool) int {
	if tty {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			return w
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 0
}

// TestStreams are in-memory streams for tests: stdin reads in, and the
// returned buffers collect stdout and stderr.
func TestStreams(in string) (*IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &IOStreams{In: strings.NewReader(in), Out: out, ErrOut: errOut}, out, errOut
}
