// Package phases holds the phases of a narrative tick: intention (phase 1, one
// call per character), resolution (phase 2a, one call to the game master per
// location, seed 004) and apply (the game master's updates checked against the
// world and folded into the next state).
//
// A tick's calls run in parallel, location by location (round.go: each
// location as soon as its neighbourhood has resolved the tick before; in
// lockstep, once the whole world has), or as Batch API jobs (batch.go). A
// phase never fails because of what a model said: a failed call yields a
// fallback that preserves state, and the results carry every call so the
// runner can record it.
package phases
