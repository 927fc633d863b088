package session

import "github.com/arbiter-sim/arbiter/runner"

// ReportPart is a kind's part of `arbiter report`'s page, as data that the
// report draws: the kind fills what it has, the rest stays empty.
type ReportPart struct {
	// Unit is what the page calls a tick: "tick", or "turn" for a game.
	Unit string
	// ApplyErrors names the headline figure of the updates or orders that
	// the rules refused ("skipped updates", "order errors"); "": none.
	ApplyErrors string
	// Fallbacks counts the calls that fell back per phase and tick (tick
	// t at index t-1), plotted beside the failed calls.
	Fallbacks map[string][]float64
	// Truncated counts, per phase and tick as Fallbacks does, the failed
	// calls whose answer was cut at the token limit and kept as written (a
	// message of a conversation): the store counts them among the failed calls,
	// the page as truncated. nil: the kind keeps no cut answer.
	Truncated map[string][]float64

	// Timeline is a story told place by place and character by
	// character (characters in locations); the page draws each character's path from
	// it.
	Timeline []StoryTick

	// Turns are a game's turns, each with its log and its board;
	// Players its players with their errors over the game.
	Turns   []ReportTurn
	Players []PlayerErrors
	// Ending is how a game ended (or stands), which its page opens with;
	// Trends are figures of each player over its turns.
	Ending *Ending
	Trends []Trend

	// Outline is a history built so far: periods and their events.
	Outline *Outline
}

// ReportTurn is one turn of a game: what its log says and the board after
// it.
type ReportTurn struct {
	N      int
	Lines  []string
	Errors []PlayerError
	Board  Board
}

// Board is a game's board after a turn: the kind's status lines, and a
// drawing made of what the report draws for every kind (a grid of places
// and arrows, bars), so that a kind draws its board with no line of the
// report's own.
type Board struct {
	Fields []runner.Field
	Map    *Grid
	Meters []Meter
}

// Grid is a drawing of places on a grid of cells, each coloured by its
// owner, and arrows between them (a star map and its fleets in flight).
type Grid struct {
	Width, Height int // grid cells
	Players       []string
	Points        []Point
	Arrows        []Arrow
}

// Point is one place of a Grid; Owner is "" when neutral. Size (0 to 5)
// is how large it is drawn, Label the text under it, Title what hovering
// it says.
type Point struct {
	ID           string
	X, Y         int
	Owner        string
	Size         int
	Label, Title string
}

// Arrow goes from one point of a Grid to another.
type Arrow struct {
	Owner, From, To string
	Title           string
}

// Meter is a bar: Value of Max (a side's health).
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

// Outline is a history as a list of periods, each with its events: the big
// picture, the phase of play, and the palette of what is in and out.
type Outline struct {
	BigPicture string
	Stage      string // "" in setup
	Palette    struct{ Yes, No []string }
	Periods    []OutlinePeriod
}

// OutlinePeriod is one period of an Outline and its events.
type OutlinePeriod struct {
	Name, Tone, Bookend, Description string
	Events                           []OutlineEvent
}

// OutlineEvent is one event of a period.
type OutlineEvent struct{ Name, Tone, Description string }
