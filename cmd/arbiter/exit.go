package main

import (
	"errors"
	"fmt"

	"github.com/arbiter-sim/arbiter/session"
)

// Exit codes of arbiter (documented in docs/reliability.md).
const (
	ExitOK          = 0   // success
	ExitError       = 1   // unexpected failure: storage, I/O, a bug
	ExitUsage       = 2   // bad input: flags, arguments, config, simulation files, templates
	ExitModel       = 3   // the model endpoint, or the replay cassette standing in for it, failed a tick (quorum_failure); last tick kept
	ExitBudget      = 4   // token budget or run.max_cost exhausted; stopped cleanly, last tick kept
	ExitInterrupted = 130 // interrupted (Ctrl-C); tick in flight rolled back
)

// exitError carries the exit code a failure should end the process with.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageError marks err as bad input from the person at the terminal.
func usageError(err error) error { return &exitError{code: ExitUsage, err: err} }

// usageErrorf formats a usage error.
func usageErrorf(format string, args ...any) error {
	return usageError(fmt.Errorf(format, args...))
}

// exitCode maps an error to the process exit code.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	}
	switch session.ExitClass(err) {
	case session.BadInput:
		return ExitUsage
	case session.Interrupted:
		return ExitInterrupted
	case session.ModelFailed:
		return ExitModel
	case session.OutOfBudget:
		return ExitBudget
	default:
		return ExitError
	}
}
