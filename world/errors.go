package world

import (
	"fmt"
	"strconv"
)

// LoadError is one problem with a simulation's files. File is the path as
// Load was given it joined with the file's name (so it names a file the user
// can open), Line is 1-based and 0 when the problem concerns the file as a
// whole, and Field names the offending field in dotted form ("state.location")
// when there is one.
type LoadError struct {
	File  string
	Line  int
	Field string
	Msg   string
	Err   error // underlying cause (I/O, YAML syntax), nil for rule violations
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
	}
	return e.File + ": " + e.Msg
}

func (e *LoadError) Unwrap() error { return e.Err }

// Problems is every problem found in a simulation's files, in file and line
// order. Load returns it when there is at least one; its message is the first
// problem's, so a command line shows one clear line, and errors.As reaches
// each *LoadError.
type Problems []error

func (p Problems) Error() string {
	switch len(p) {
	case 0:
		return "no problems"
	case 1:
		return p[0].Error()
	case 2:
		return p[0].Error() + " (and 1 more problem)"
	}
	return fmt.Sprintf("%s (and %d more problems)", p[0].Error(), len(p)-1)
}

func (p Problems) Unwrap() []error { return p }
