// Package phases holds the phases of a narrative tick: intention (phase 1, one
// call per character), resolution (phase 2a, one call to the game master per
// location, seed 004) and apply (the game master's updates checked against the
// world and folded into the next state).
//
// Every phase runs all of its calls in parallel through llm.Client.CreateEach
// and never fails because of what a model said: a failed call yields a fallback
// that preserves state, and the results carry every call so the runner can
// record it.
package phases
