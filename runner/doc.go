// Package runner is the tick machine of seed 002, shared by every kind of
// simulation: it loads the last committed state, plays ticks (or turns) one
// at a time through a Game, and commits each whole in one storage
// transaction.
//
// A Game (narrative, chronicle, ...) says what one tick does; the runner owns
// everything around it. Each phase of model calls runs through Tick.Phase:
// failures are emitted before recovery (TOOL_FAILURE, STATE_ENTRY state=ERROR
// error_type=..., RECOVERY_ATTEMPT strategy=... success=...), and known error
// types have handlers: a phase deadline uses the partial results
// (error_type=timeout); a tick in which no model call succeeded stops with the
// last committed tick kept (quorum_failure); a spent token budget stops
// cleanly between ticks (budget_exhausted); an interrupt stops between ticks
// or rolls back the tick in flight. Anything else returns with a summary.
package runner
