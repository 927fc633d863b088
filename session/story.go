package session

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// StoryQuery selects what `arbiter story` tells: ticks From..To (From 0:
// from the first; To 0: to the last committed), and optionally one location
// or one character.
type StoryQuery struct {
	From, To  int
	Location  string
	Character string
}

// Story is what happened over a range of ticks. A narrative run fills Ticks;
// a game (conquest, duel) fills Turns with its per-turn log.
type Story struct {
	Simulation string      `json:"simulation"`
	Kind       string      `json:"kind"`
	From       int         `json:"from"` // 0 with To when no tick has committed
	To         int         `json:"to"`
	Ticks      []StoryTick `json:"ticks,omitempty"`
	Turns      []StoryTurn `json:"turns,omitempty"`
}

// StoryTick is one narrative tick, location by location.
type StoryTick struct {
	Tick      int             `json:"tick"`
	Locations []StoryLocation `json:"locations"`
}

// StoryLocation is one location's part of a tick: its moment at the end of
// the tick and the characters the arbiter resolved there (those present at
// its start).
type StoryLocation struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Moment is the location's moment at the end of the tick.
	Moment string `json:"moment"`
	// Fallback: the arbiter's call failed and nothing changed here.
	Fallback   bool             `json:"fallback"`
	Characters []StoryCharacter `json:"characters"`
	// Skipped are the arbiter's updates the apply step refused.
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

// SkippedUpdate is an arbiter update the apply step refused.
type SkippedUpdate struct {
	Character string `json:"character"`
	Reason    string `json:"reason"`
}

// StoryTurn is one turn of a game, as its log tells it.
type StoryTurn struct {
	Turn  int      `json:"turn"`
	Lines []string `json:"lines"`
	// Errors are the players' failures of the turn, also in Lines:
	// conquest's order errors and passed turns, the duel's refused choices.
	Errors []PlayerError `json:"errors"`
}

// PlayerError is one player's failure in a turn.
type PlayerError struct {
	Player string `json:"player"`
	Error  string `json:"error"`
}

// Story tells ticks q.From..q.To of the run. A tick outside the committed
// range, an unknown location or character, or a kind without a per-tick
// story (the chronicle) is an *InputError saying what there is.
func (s *Session) Story(ctx context.Context, q StoryQuery) (*Story, error) {
	last := s.LastTick()
	out := &Story{Simulation: s.Sim.ID, Kind: s.Sim.Kind}
	switch s.Sim.Kind {
	case world.KindNarrative:
		if err := s.checkStoryFilters(q); err != nil {
			return nil, err
		}
	case world.KindConquest, world.KindDuel:
		if q.Location != "" || q.Character != "" {
			return nil, inputErrorf("%s is a %s game: --location and --character are for narrative simulations; `arbiter status %s` shows each player", s.Dir, s.Sim.Kind, s.Dir)
		}
	case world.KindChronicle:
		return nil, inputErrorf("%s is a chronicle: `arbiter chronicle show %s` prints its timeline, and `arbiter chat %s` then /history its conversation", s.Dir, s.Dir, s.Dir)
	default:
		return nil, inputErrorf("%s: a %s simulation has no story", s.Dir, s.Sim.Kind)
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
	var err error
	if s.Sim.Kind == world.KindNarrative {
		out.Ticks, err = s.narrativeStory(ctx, from, to, q)
	} else {
		out.Turns, err = s.gameStory(ctx, from, to)
	}
	if err != nil {
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

func (s *Session) checkStoryFilters(q StoryQuery) error {
	if q.Location != "" && s.Sim.Location(q.Location) == nil {
		ids := make([]string, len(s.Sim.Locations))
		for i, l := range s.Sim.Locations {
			ids[i] = l.ID
		}
		return inputErrorf("--location %s: no such location in %s (locations: %s)", q.Location, s.Sim.ID, strings.Join(ids, ", "))
	}
	if q.Character != "" && s.Sim.Character(q.Character) == nil {
		ids := make([]string, len(s.Sim.Characters))
		for i, c := range s.Sim.Characters {
			ids[i] = c.ID
		}
		return inputErrorf("--character %s: no such character in %s (characters: %s)", q.Character, s.Sim.ID, strings.Join(ids, ", "))
	}
	return nil
}

// worldAt is the stored state of tick (the authored one for 0), without
// memories.
func (s *Session) worldAt(ctx context.Context, tick int) (*world.State, error) {
	if tick == 0 {
		return s.Sim.InitialState(), nil
	}
	raw, err := s.store.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var st world.State
	if err := json.Unmarshal(raw, &st); err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	return &st, nil
}

func (s *Session) narrativeStory(ctx context.Context, from, to int, q StoryQuery) ([]StoryTick, error) {
	rows, err := s.store.Story(ctx, from, to)
	if err != nil {
		return nil, err
	}
	type key struct {
		tick int
		id   string
	}
	intentions := map[key]store.TickIntention{}
	for _, r := range rows.Intentions {
		intentions[key{r.Tick, r.CharacterID}] = r
	}
	outputs := map[key]store.TickOutput{}
	for _, r := range rows.Outputs {
		outputs[key{r.Tick, r.LocationID}] = r
	}
	memories := map[key][]string{}
	for _, r := range rows.Memories {
		k := key{r.Tick, r.CharacterID}
		memories[k] = append(memories[k], r.Entry)
	}
	skipped := map[key][]SkippedUpdate{}
	for _, r := range rows.ApplyErrors {
		k := key{r.Tick, r.LocationID}
		skipped[k] = append(skipped[k], SkippedUpdate{Character: r.CharacterID, Reason: r.Reason})
	}

	before, err := s.worldAt(ctx, from-1)
	if err != nil {
		return nil, err
	}
	var ticks []StoryTick
	for tick := from; tick <= to; tick++ {
		after, err := s.worldAt(ctx, tick)
		if err != nil {
			return nil, err
		}
		st := StoryTick{Tick: tick, Locations: []StoryLocation{}}
		at := before.Occupancy() // everyone placed once, not once per location
		for _, l := range s.Sim.Locations {
			if q.Location != "" && l.ID != q.Location {
				continue
			}
			present := at[l.ID]
			if q.Character != "" {
				if !slices.Contains(present, q.Character) {
					continue
				}
				present = []string{q.Character}
			}
			sl := StoryLocation{ID: l.ID, Name: l.Name, Moment: after.Locations[l.ID].Moment,
				Fallback: outputs[key{tick, l.ID}].Fallback, Characters: []StoryCharacter{}, Skipped: []SkippedUpdate{}}
			for _, id := range present {
				c := StoryCharacter{ID: id, Intention: intentions[key{tick, id}].Intention,
					IntentionFallback: intentions[key{tick, id}].Fallback, Memory: memories[key{tick, id}],
					From: l.ID, To: after.Characters[id].Location}
				if ch := s.Sim.Character(id); ch != nil {
					c.Name = ch.Name
				}
				if c.Memory == nil {
					c.Memory = []string{}
				}
				sl.Characters = append(sl.Characters, c)
			}
			for _, sk := range skipped[key{tick, l.ID}] {
				if q.Character == "" || sk.Character == q.Character {
					sl.Skipped = append(sl.Skipped, sk)
				}
			}
			st.Locations = append(st.Locations, sl)
		}
		ticks = append(ticks, st)
		before = after
	}
	return ticks, nil
}

// gameStory is each turn's log: conquest keeps it in the turn's state, the
// duel in its stream of turn records.
func (s *Session) gameStory(ctx context.Context, from, to int) ([]StoryTurn, error) {
	var turns []StoryTurn
	if s.Sim.Kind == world.KindDuel {
		recs, err := s.store.Records(ctx, duel.Stream, to, to)
		if err != nil {
			return nil, err
		}
		for _, r := range recs {
			if r.Tick < from {
				continue
			}
			var l duel.TurnLog
			if err := json.Unmarshal(r.Body, &l); err != nil {
				return nil, fmt.Errorf("read turn %d: %w", r.Tick, err)
			}
			lines := slices.Clone(l.Events)
			for _, c := range l.Choices {
				lines = append(lines, "choice: "+c)
			}
			errs := []PlayerError{}
			for _, c := range l.Rejected {
				lines = append(lines, "refused: "+c)
				// The duel records a refusal as "<seat>: <why>".
				seat, why, _ := strings.Cut(c, ": ")
				errs = append(errs, PlayerError{Player: seat, Error: why})
			}
			turns = append(turns, StoryTurn{Turn: r.Tick, Lines: nonNil(lines), Errors: errs})
		}
		return turns, nil
	}
	rows, err := s.store.Story(ctx, from, to)
	if err != nil {
		return nil, err
	}
	for tick := from; tick <= to; tick++ {
		raw, err := s.store.State(ctx, tick)
		if err != nil {
			return nil, err
		}
		var st struct {
			Log    []string `json:"log"`
			Passed []struct {
				Turn           int
				Player, Reason string
			} `json:"passed_turns"`
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return nil, fmt.Errorf("read turn %d: %w", tick, err)
		}
		lines := st.Log
		errs := []PlayerError{}
		for _, e := range rows.ApplyErrors {
			if e.Tick == tick {
				lines = append(lines, "order error: "+e.CharacterID+": "+e.Reason)
				errs = append(errs, PlayerError{Player: e.CharacterID, Error: e.Reason})
			}
		}
		for _, p := range st.Passed {
			if p.Turn == tick {
				lines = append(lines, "passed: "+p.Player+": "+p.Reason)
				errs = append(errs, PlayerError{Player: p.Player, Error: "turn passed: " + p.Reason})
			}
		}
		turns = append(turns, StoryTurn{Turn: tick, Lines: nonNil(lines), Errors: errs})
	}
	return turns, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Usage is the run's calls summed per tick, phase and entity (none before
// the first commit).
func (s *Session) Usage(ctx context.Context) ([]store.CallUsage, error) {
	if s.store == nil {
		return []store.CallUsage{}, nil
	}
	return s.store.UsageRows(ctx)
}
