package report

import (
	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// Report is what one page shows. Build fills it from a run; a test may
// build one by hand.
type Report struct {
	Simulation string
	Title      string
	Kind       string
	LastTick   int // the last committed tick (a game's turn); at least 1
	// Figures are the run's headline numbers: calls, tokens, fallbacks.
	Figures []runner.Field
	// Stopped says why the last run stopped short, "" when it did not.
	Stopped string

	// Narrative: the story of every tick and each character's path.
	Timeline []session.StoryTick
	Paths    *PathChart

	// Calls are the plots of the model calls per phase and tick; empty
	// when the run made none (a game of bots).
	Calls []Chart
	// Phases sums the calls of each phase over the run.
	Phases []PhaseTotal

	// Games: every turn's log and board, and each player's errors.
	Turns   []Turn
	Players []PlayerErrors

	// Chronicle: the timeline built so far.
	Chronicle *chronicle.Timeline
}

// PhaseTotal is the calls of one phase over the whole run.
type PhaseTotal struct {
	Phase                          string
	Calls, Failed, Repairs         int
	PromptTokens, CompletionTokens int
	MeanLatencyMS                  int64
	Fallbacks                      int
}

// Turn is one turn of a game: what its log says and the board after it.
type Turn struct {
	N      int
	Lines  []string
	Errors []session.PlayerError
	Board  Board
}

// Board is a game's board after a turn: the kind's status lines, and a
// drawing (conquest's star map, the duel's health bars).
type Board struct {
	Fields []runner.Field
	Map    *StarMap
	Meters []Meter
}

// StarMap is conquest's map: stars on a grid, fleets in flight.
type StarMap struct {
	Width, Height int // grid cells
	Players       []string
	Stars         []Star
	Fleets        []Fleet
}

// Star is one star of a StarMap; Owner is "" when neutral.
type Star struct {
	ID         string
	X, Y       int
	Owner      string
	Production int
	Ships      int // every side's ships there, neutral defenders included
}

// Fleet is a fleet in flight between two stars.
type Fleet struct {
	Owner, From, To string
	Ships, Arrives  int
}

// Meter is a bar: Value of Max (a duel side's health).
type Meter struct {
	Label      string
	Value, Max int
}

// PlayerErrors are one player's errors over the game, in turn order.
type PlayerErrors struct {
	Player string
	Seat   string // model, bot or person
	Errors []TurnError
}

// TurnError is one error of a player and the turn it happened in.
type TurnError struct {
	Turn  int
	Error string
}

// Chart is a plot over ticks: a line or a bar per series at each tick.
type Chart struct {
	Title string
	Unit  string // what the values count: tokens, ms, calls
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
