package session

import (
	"errors"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// ErrNotRegularFile is what Open returns, wrapped, when state.db (or its
// -wal or -shm file) is a link, a folder or a device: bad input that the
// person fixes, not a failure of arbiter's. errors.Is target for commands.
var ErrNotRegularFile = store.ErrNotRegularFile

// ErrRefused is what Turn returns, wrapped, when the kind's rules refuse a
// move: the runner's sentinel, which every kind's refusal wraps, so that a
// command's loop shows the refusal and asks again. errors.Is target.
var ErrRefused = runner.ErrRefused

// ErrInterrupted is what Run and Turn return when the context was
// canceled: the run stopped between ticks or rolled back the tick in
// flight (the runner's sentinel). errors.Is target.
var ErrInterrupted = runner.ErrInterrupted

// Class is what kind of failure stopped a command, as its exit code tells
// it.
type Class int

// The classes of failure; docs/reliability.md documents the exit code of each.
const (
	Failed      Class = iota // unexpected: storage, I/O, a bug
	BadInput                 // what a person wrote: files, templates, a refused move, a price missing
	ModelFailed              // the endpoint failed a tick (quorum_failure); the last tick kept
	OutOfBudget              // the token budget or run.max_cost is spent; stopped cleanly
	Interrupted              // the context was canceled; the tick in flight rolled back
)

// ExitClass classifies err, a failure of the session layer or below: the
// errors.Is and errors.As targets the exit codes need stay here, with the
// layers that return them.
func ExitClass(err error) Class {
	switch {
	case errors.As(err, new(*InputError)), errors.Is(err, runner.ErrStateMismatch), errors.As(err, new(*runner.SchemaError)),
		errors.Is(err, runner.ErrRefused), errors.Is(err, runner.ErrNoPrice), errors.Is(err, ErrNotRegularFile):
		return BadInput
	case errors.Is(err, runner.ErrInterrupted):
		return Interrupted
	case errors.As(err, new(*runner.QuorumError)):
		return ModelFailed
	case errors.As(err, new(*runner.BudgetError)):
		return OutOfBudget
	default:
		return Failed
	}
}

// ModelFailure reports whether err stopped a turn because its model call
// failed (quorum_failure), and what to tell the person: the model client's
// error when that is the cause, else err itself.
func ModelFailure(err error) (shown error, ok bool) {
	qe, ok := errors.AsType[*runner.QuorumError](err)
	if !ok {
		return nil, false
	}
	if _, isLLM := errors.AsType[*llm.Error](qe.Cause); isLLM {
		return qe.Cause, true
	}
	return err, true
}
