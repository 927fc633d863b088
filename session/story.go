package session

import (
	"context"
	"fmt"

	"github.com/arbiter-sim/arbiter/store"
)

// StoryQuery selects what `arbiter story` tells: ticks From..To (From 0:
// from the first; To 0: to the last committed), and optionally one location
// or one character.
type StoryQuery struct {
	From, To  int
	Location  string
	Character string
}

// Story is what happened over a range of ticks. The kind tells it: by
// place and character in Ticks (characters in locations), or in Turns, each turn's log
// (a game).
type Story struct {
	Simulation string      `json:"simulation"`
	Kind       string      `json:"kind"`
	From       int         `json:"from"` // 0 with To when no tick has committed
	To         int         `json:"to"`
	Ticks      []StoryTick `json:"ticks,omitempty"`
	Turns      []StoryTurn `json:"turns,omitempty"`
}

// StoryTick is one tick of characters in locations, location by location.
type StoryTick struct {
	Tick      int             `json:"tick"`
	Locations []StoryLocation `json:"locations"`
}

// StoryLocation is one location's part of a tick: its moment at the end of
// the tick and the characters the game master resolved there (those present at
// its start).
type StoryLocation struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Moment is the location's moment at the end of the tick.
	Moment string `json:"moment"`
	// Fallback: the game master's call failed and nothing changed here.
	Fallback   bool             `json:"fallback"`
	Characters []StoryCharacter `json:"characters"`
	// Skipped are the game master's updates the apply step refused.
	Skipped []SkippedUpdate `json:"skipped"`
}

// StoryCharacter is one character's tick.
type StoryCharacter struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Intention string `json:"intention"`
	// IntentionFallback: the intention call failed; Intention is the
	// external intent the character already had.
	IntentionFallback bool     `json:"intention_fallback"`
	Memory            []string `json:"memory"` // entries written this tick
	From              string   `json:"from"`   // location at the start of the tick
	To                string   `json:"to"`     // location at its end
}

// Moved reports whether the character changed location during the tick.
func (c StoryCharacter) Moved() bool { return c.From != c.To }

// SkippedUpdate is a game master's update the apply step refused.
type SkippedUpdate struct {
	Character string `json:"character"`
	Reason    string `json:"reason"`
}

// StoryTurn is one turn of a game, as its log tells it.
type StoryTurn struct {
	Turn  int      `json:"turn"`
	Lines []string `json:"lines"`
	// Errors are the players' failures of the turn, also in Lines:
	// orders refused and passed turns, choices refused.
	Errors []PlayerError `json:"errors"`
}

// PlayerError is one player's failure in a turn.
type PlayerError struct {
	Player string `json:"player"`
	Error  string `json:"error"`
}

// Story tells ticks q.From..q.To of the run. A tick outside the committed
// range, an unknown location or character, or a kind without a per-tick
// story (its CheckStory refuses) is an *InputError saying what there is. The kind
// tells the committed ticks; the session checks the range.
func (s *Session) Story(ctx context.Context, q StoryQuery) (*Story, error) {
	last := s.LastTick()
	out := &Story{Simulation: s.Sim.ID, Kind: s.Sim.Kind}
	teller, ok := s.Kind.(Teller)
	if !ok {
		return nil, inputErrorf("%s is a %s simulation: it tells no story by tick (%s)", s.Dir, s.Sim.Kind, how(s.Dir, s.Kind))
	}
	if err := teller.CheckStory(s.Dir, q); err != nil {
		return nil, err
	}
	if last == 0 {
		if q.From != 0 || q.To != 0 {
			return nil, inputErrorf("no tick committed yet in %s: `arbiter run %s` runs the first", s.Dir, s.Dir)
		}
		return out, nil
	}
	from, to := q.From, q.To
	if from == 0 {
		from = 1
	}
	if to == 0 {
		to = last
	}
	if from < 1 || to > last || from > to {
		return nil, inputErrorf("ticks %s: not committed (committed ticks: 1..%d)", span(from, to), last)
	}
	out.From, out.To = from, to
	if err := teller.Story(ctx, s.store, from, to, q, out); err != nil {
		return nil, err
	}
	return out, nil
}

func span(from, to int) string {
	if from == to {
		return fmt.Sprint(from)
	}
	return fmt.Sprintf("%d..%d", from, to)
}

// Usage is the run's calls summed per tick, phase and entity (none before
// the first commit).
func (s *Session) Usage(ctx context.Context) ([]store.CallUsage, error) {
	if s.store == nil {
		return []store.CallUsage{}, nil
	}
	return s.store.UsageRows(ctx)
}

// CheckTurnStory refuses the filters of a story told place by place (a
// location, a character) for a game of kind, whose story is told by turns.
func CheckTurnStory(dir, kind string, q StoryQuery) error {
	if q.Location != "" || q.Character != "" {
		return inputErrorf("%s is a %s game: --location and --character are for simulations of characters in locations; `arbiter status %s` shows each player", dir, kind, dir)
	}
	return nil
}

// NonNil is s, or an empty slice for nil (a turn with no lines is [] in
// JSON).
func NonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
