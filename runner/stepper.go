package runner

import (
	"context"
	"errors"

	"github.com/arbiter-sim/arbiter/store"
)

// Stepper is one kind of simulation as the runner drives it: how its state is
// read back and written, and what one tick or turn does. A kind's state is
// its own type; the runner only hands it back to the Stepper.
type Stepper interface {
	// Kind names the simulation kind: narrative, chronicle, conquest, duel.
	Kind() string
	// Load returns the state after tick: the authored start for 0, else the
	// committed tick read back from st. A state that no longer fits the
	// authored files is an error wrapping ErrStateMismatch.
	Load(ctx context.Context, st *store.Store, tick int) (any, error)
	// Step plays tick t.N from state s. in is the move of an interactive
	// seat (nil for a kind that ticks on its own); a move the rules refuse
	// is an error wrapping ErrRefused, and nothing is recorded. Model calls
	// run through t.Phase; the kind's own rows of the tick go in t.Record.
	// Step stores nothing: the runner commits the state it returns.
	Step(ctx context.Context, t *Tick, s any, in any) (any, error)
	// Encode writes state s, after tick rec.Tick, into rec: its JSON and the
	// rows of its streams that this tick added or replaced. prev is the
	// state before the tick.
	Encode(rec *store.TickRecord, prev, s any) error
}

// ErrRefused marks a move that the rules of the game refuse (a chronicle
// message that does not exist, a stage change that is not allowed yet). It
// is the player's mistake, not a stop: the game goes on from where it was.
var ErrRefused = errors.New("refused")

// Refusal returns an error saying msg that is ErrRefused for errors.Is: a
// kind's own sentinel for a move its rules refuse.
func Refusal(msg string) error { return &refused{msg} }

type refused struct{ msg string }

func (e *refused) Error() string        { return e.msg }
func (e *refused) Is(target error) bool { return target == ErrRefused }

// Ender is a Stepper that can end, as a won game does. Run stops before a
// tick when Over says the state after the last one is final, and reports
// how it ended.
type Ender interface {
	Over(state any) (over bool, how string)
}

// Ahead is a Stepper that may start work of the ticks after the one it plays
// before that tick commits (a narrative location starting its next tick
// as soon as its neighbourhood has resolved this one). Such work is held
// in memory and never stored by the kind; Run calls DropAhead when it
// stops, for whatever reason, and the work not played is dropped: after a
// crash or a stop, a resumed run asks for it again.
type Ahead interface {
	DropAhead()
}
