// Package runner is the tick machine shared by every kind of simulation, as
// seed 002 has it: it loads the last committed state, plays ticks (or turns)
// one at a time through its Stepper, and commits each whole in one storage
// transaction.
//
// A Stepper (narrative, chronicle, ...) says what one tick does; the runner owns
// everything around it. Each phase of model calls runs through Tick.Phase:
// every failure is emitted before its recovery, as it happens (TOOL_FAILURE
// with the model error's kind as detail, told by the client through an
// llm.Watch before the retry or repair begins, then RECOVERY_ATTEMPT
// strategy=retry|repair|fallback success=...), and each ERROR state
// (STATE_ENTRY state=ERROR error_type=...) is handled as seed 002 says: a
// phase deadline uses the partial results (timeout); a tick in which no
// model call succeeded, or any phase of which found the endpoint unusable on
// every call, stops with
// the last committed tick kept (quorum_failure); a request schema that
// cannot be built or is refused stops the run (schema_invalid); a token
// budget that the next phase would pass stops cleanly before it
// (budget_exhausted); an interrupt stops between ticks or rolls back the
// tick in flight. Anything else returns with a summary (DEFAULT).
package runner
