// Package bench measures what a narrative tick costs at scale: it writes a
// generated world of N characters in M locations as a real simulation folder,
// runs it through the session layer exactly as `arbiter run` would, against
// a stand-in OpenAI-compatible server on 127.0.0.1 that it starts in a child
// process (so the engine's CPU time is not mixed with the server's), and
// reports the figures its targets judge: T against the ideal T* of two waves of
// calls, engine CPU and allocations per call, peak RSS, commit time, state.db
// bytes per tick, prompt tokens per call as history builds up, 429s, the
// speed-up over a sequential loop, and the cost exponent over world sizes.
//
// `arbiter bench` is its command; `go test -bench . ./bench` runs the same
// code on small worlds. Figures are measured, never asserted by tests.
package bench
