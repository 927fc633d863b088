package phases

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// CheckStory refuses a location or a character that the simulation does
// not have, naming those it has.
func (n *Narrative) CheckStory(_ string, q session.StoryQuery) error {
	if q.Location != "" && n.Sim.Location(q.Location) == nil {
		ids := make([]string, len(n.Sim.Locations))
		for i, l := range n.Sim.Locations {
			ids[i] = l.ID
		}
		return inputErrorf("--location %s: no such location in %s (locations: %s)", q.Location, n.Sim.ID, strings.Join(ids, ", "))
	}
	if q.Character != "" && n.Sim.Character(q.Character) == nil {
		ids := make([]string, len(n.Sim.Characters))
		for i, c := range n.Sim.Characters {
			ids[i] = c.ID
		}
		return inputErrorf("--character %s: no such character in %s (characters: %s)", q.Character, n.Sim.ID, strings.Join(ids, ", "))
	}
	return nil
}

func inputErrorf(format string, args ...any) error {
	return &session.InputError{Err: fmt.Errorf(format, args...)}
}

// worldAt is the stored state of tick (the authored one for 0), without
// memories.
func (n *Narrative) worldAt(ctx context.Context, st *store.Store, tick int) (*world.State, error) {
	if tick == 0 {
		return n.Sim.InitialState(), nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var s world.State
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("read state of tick %d: %w", tick, err)
	}
	return &s, nil
}

type storyKey struct {
	tick int
	id   string
}

// storyRows are the stored rows of a range of ticks, by tick and entity.
type storyRows struct {
	intentions map[storyKey]store.TickIntention
	outputs    map[storyKey]store.TickOutput
	memories   map[storyKey][]string
	skipped    map[storyKey][]session.SkippedUpdate
}

func readStoryRows(ctx context.Context, st *store.Store, from, to int) (*storyRows, error) {
	rows, err := st.Story(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := &storyRows{intentions: map[storyKey]store.TickIntention{}, outputs: map[storyKey]store.TickOutput{},
		memories: map[storyKey][]string{}, skipped: map[storyKey][]session.SkippedUpdate{}}
	for _, r := range rows.Intentions {
		out.intentions[storyKey{r.Tick, r.CharacterID}] = r
	}
	for _, r := range rows.Outputs {
		out.outputs[storyKey{r.Tick, r.LocationID}] = r
	}
	for _, r := range rows.Memories {
		k := storyKey{r.Tick, r.CharacterID}
		out.memories[k] = append(out.memories[k], r.Entry)
	}
	for _, r := range rows.ApplyErrors {
		k := storyKey{r.Tick, r.LocationID}
		out.skipped[k] = append(out.skipped[k], session.SkippedUpdate{Character: r.CharacterID, Reason: r.Reason})
	}
	return out, nil
}

// Story tells ticks from..to location by location (or only q's location
// or character) into out.Ticks.
func (n *Narrative) Story(ctx context.Context, st *store.Store, from, to int, q session.StoryQuery, out *session.Story) error {
	rows, err := readStoryRows(ctx, st, from, to)
	if err != nil {
		return err
	}
	before, err := n.worldAt(ctx, st, from-1)
	if err != nil {
		return err
	}
	for tick := from; tick <= to; tick++ {
		after, err := n.worldAt(ctx, st, tick)
		if err != nil {
			return err
		}
		t := session.StoryTick{Tick: tick, Locations: []session.StoryLocation{}}
		at := before.Occupancy() // everyone placed once, not once per location
		for _, l := range n.Sim.Locations {
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
			t.Locations = append(t.Locations, n.storyLocation(rows, tick, l, present, after, q.Character))
		}
		out.Ticks = append(out.Ticks, t)
		before = after
	}
	return nil
}

// storyLocation is location l's part of tick: the characters present at
// its start, and the updates refused there (of character only, if set).
func (n *Narrative) storyLocation(rows *storyRows, tick int, l *world.Location, present []string, after *world.State, character string) session.StoryLocation {
	sl := session.StoryLocation{ID: l.ID, Name: l.Name, Moment: after.Locations[l.ID].Moment,
		Fallback: rows.outputs[storyKey{tick, l.ID}].Fallback, Characters: []session.StoryCharacter{}, Skipped: []session.SkippedUpdate{}}
	for _, id := range present {
		k := storyKey{tick, id}
		c := session.StoryCharacter{ID: id, Intention: rows.intentions[k].Intention,
			IntentionFallback: rows.intentions[k].Fallback, Memory: rows.memories[k],
			From: l.ID, To: after.Characters[id].Location}
		if ch := n.Sim.Character(id); ch != nil {
			c.Name = ch.Name
		}
		if c.Memory == nil {
			c.Memory = []string{}
		}
		sl.Characters = append(sl.Characters, c)
	}
	for _, sk := range rows.skipped[storyKey{tick, l.ID}] {
		if character == "" || sk.Character == character {
			sl.Skipped = append(sl.Skipped, sk)
		}
	}
	return sl
}
