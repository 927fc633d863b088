package session

// Ending is how a game ended, or where it stands when it has not: the
// report's page of a game opens with it.
type Ending struct {
	Over bool
	// Result says who won and how ("p3 won at turn 39 (last player
	// holding stars or ships)"), or where a game not over stands.
	Result   string
	Turns    int // turns played
	MaxTurns int
	Players  []EndPlayer
	// Final is a last line of the game's story, the one that decided it
	// ("p2's health fell to 0 at turn 12: p1 won with 18 of 30").
	Final string
}

// EndPlayer is one player at the end of a game.
type EndPlayer struct {
	Player, Seat string
	Winner       bool
	// Holds is what the player has at the end: "3 stars, 45 ships" or
	// "health 18/30, 2 ships".
	Holds string
	// Invalid counts the player's orders or choices the rules refused
	// over the game; InvalidNoun names them ("order errors").
	Invalid     int
	InvalidNoun string
}

// Trend is a figure of each player over a game's turns (ships per
// player), which the report plots.
type Trend struct {
	Title, Unit string
	Series      []TrendSeries
}

// TrendSeries is one player's values, one per turn from turn 1.
type TrendSeries struct {
	Name   string
	Values []float64
}
