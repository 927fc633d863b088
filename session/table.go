package session

import (
	"context"
	"slices"
)

// Table is how people play a kind at a terminal (`arbiter play`): its
// seats, and what each turn asks of them, as data. The terminal loop is the
// CLI's: it reads the keyboard, hands it over between people (hot-seat),
// plays the move as a turn of the session, and shows what the turn did;
// the kind says what the choices are and how an answer is checked.
type Table struct {
	// Players are every seat, in turn order; People those that
	// simulation.yaml gives to a person.
	Players, People []string
	// Intro is what the people at the terminal read first.
	Intro func(people []string) string
	// Over reports whether the game in state has ended, and what the
	// table is shown then.
	Over func(state any) (over bool, text string)
	// Move asks the people for the move of the turn after state, through
	// p: before it returns, or while the turn is played, as the turn
	// reaches their choices.
	Move func(ctx context.Context, state any, people []string, p Person) (any, error)
	// Told is what every player sees after a turn (its log, the board).
	Told func(ctx context.Context, state any) ([]string, error)
}

// Person is a person at the terminal, who answers questions.
type Person interface {
	// Ask gives the keyboard to q.Seat, shows q.Screen, and reads answers
	// until one reads and is confirmed: its value. Leaving the game (the
	// end of the input, a request to quit) is an error that refuses the
	// turn in play.
	Ask(ctx context.Context, q Question) (any, error)
}

// Question is one choice of a person's turn: what is shown, what is typed,
// and how the answer is read and checked.
type Question struct {
	Seat   string // who answers
	Screen string // shown once the seat has the keyboard
	Prompt string // shown before each line typed
	// Lines: the answer is every line typed until an empty one (a turn's
	// orders); else one line.
	Lines bool
	// Shortcuts are lines that act at once (matched without case).
	Shortcuts []Shortcut
	// Line, when set, reads each line of a Lines answer as it is typed
	// (n: its number in the answer): what is shown under it (what the
	// line will do, or what is wrong with it), and whether it is kept. A
	// line not kept is dropped at once, to be typed again.
	Line func(n int, line string) (note string, keep bool)
	// Read reads an answer (Lines joined by newlines): its value, or the
	// problem that is shown before the person answers again.
	Read func(answer string) (value any, problem string)
	// Warnings, when set, are the warnings of a value that reads; the
	// person then confirms it or answers again (and is told Again).
	Warnings func(value any) []string
	Again    string
}

// Shortcut is a line that acts at once: it shows Show and the question
// goes on, or, without Show, it is the answer Answer.
type Shortcut struct {
	Line   string
	Show   string
	Answer any
}

// SeatsOf lists the players whose seat in seats (player: seat) is seat,
// sorted: the people of a game whose persons are so marked.
func SeatsOf(seats map[string]string, seat string) []string {
	var out []string
	for p, s := range seats {
		if s == seat {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}
