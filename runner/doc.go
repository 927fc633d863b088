// Package runner runs narrative ticks as the small state machine of seed 002:
// INTENTION -> RESOLUTION -> APPLY -> COMMIT, one storage transaction per tick.
//
// Failures are emitted before recovery (TOOL_FAILURE, STATE_ENTRY state=ERROR
// error_type=..., RECOVERY_ATTEMPT strategy=... success=...). Known error
// types have handlers: a phase deadline uses the partial results
// (error_type=timeout); a tick in which no model call succeeded stops the run
// with the last committed tick kept (quorum_failure); a spent token budget
// stops cleanly between ticks (budget_exhausted); an interrupt stops between
// ticks or rolls back the tick in flight. Anything else returns with a summary.
package runner
