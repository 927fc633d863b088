// Package report turns a simulation's committed run into one self-contained
// HTML page, for `arbiter report`: the timeline of ticks (each location's
// moment, each character's intention and memory entries, moves, fallbacks),
// each character's path across locations as a chart, the model calls per
// phase and tick (tokens, latency, failed calls, fallbacks) as plots, and for
// the games the board after every turn and each player's errors; for a
// history built in conversation, its outline.
//
// Build reads a run through the session layer (the queries `arbiter story`,
// `arbiter usage` and `arbiter status` use); Write renders a Report with
// html/template, so everything a model wrote is escaped. The page has inline
// CSS and inline SVG charts drawn here, no script, and a Content Security
// Policy that forbids loading anything: it opens the same offline.
package report
