package report

import (
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// Report is what one page shows. Build fills it from a run; a test may
// build one by hand.
type Report struct {
	Simulation string
	Title      string
	Kind       string
	Unit       string // what a tick is called: tick, turn
	LastTick   int    // the last committed tick (a game's turn); at least 1
	// Figures are the run's headline numbers: calls, tokens, fallbacks.
	Figures []runner.Field
	// Stopped says why the last run stopped short, "" when it did not.
	Stopped string

	// A story told place by place: every tick and each character's path.
	Timeline []session.StoryTick
	Paths    *PathChart

	// Calls are the plots of the model calls per phase and tick; empty
	// when the run made none (a game of bots).
	Calls []Chart
	// Phases sums the calls of each phase over the run.
	Phases []PhaseTotal
	// KeepsCuts is set when the kind keeps answers cut at the token limit
	// (Truncated): the page counts them as truncated, apart from the
	// failed calls.
	KeepsCuts bool

	// Games: how the game ended (the page opens with it), every turn's
	// log and board, each player's errors, and figures of each player
	// over the turns (Trends, charts over turns).
	Ending  *session.Ending
	Turns   []session.ReportTurn
	Players []session.PlayerErrors
	Trends  []Chart

	// TickRuns names the run that committed each tick, with the template
	// set it rendered with ("run 2 · templates: prompts/ (...)").
	TickRuns map[int]string

	// Outline: the history built so far, its periods and their events.
	Outline *session.Outline
}

// PhaseTotal is the calls of one phase over the whole run.
type PhaseTotal struct {
	Phase                          string
	Calls, Failed, Repairs         int
	Truncated                      int // cut at the token limit and kept as written; not in Failed
	PromptTokens, CompletionTokens int
	MeanLatencyMS                  int64
	Fallbacks                      int
}

// Chart is a plot over ticks: a line or a bar per series at each tick.
type Chart struct {
	Title string
	Unit  string // what the values count: tokens, ms, calls
	Axis  string // what the ticks are called on the x axis; "" is tick
	Bars  bool   // bars (counts) instead of lines
	Ticks []int
	// Series have one value per tick.
	Series []Series
}

// Series is one named row of values of a Chart.
type Series struct {
	Name   string
	Values []float64
}

// PathChart is where each character was after each tick (tick 0: the
// authored start), one row per location.
type PathChart struct {
	Locations []Place
	Ticks     []int
	Paths     []Path
}

// Place is a location: its id and name.
type Place struct{ ID, Name string }

// Path is one character's locations, one id per tick of the chart.
type Path struct {
	ID, Name string
	At       []string
}
