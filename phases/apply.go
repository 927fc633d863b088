package phases

import (
	"fmt"
	"slices"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// ApplyError is a game master's update that broke a world rule and was skipped.
type ApplyError struct {
	Tick        int
	LocationID  string
	CharacterID string // empty when the whole output was rejected
	Reason      string
}

func (e ApplyError) Error() string {
	if e.CharacterID == "" {
		return fmt.Sprintf("tick %d, location %s: %s", e.Tick, e.LocationID, e.Reason)
	}
	return fmt.Sprintf("tick %d, location %s, character %s: %s", e.Tick, e.LocationID, e.CharacterID, e.Reason)
}

// Apply folds the game master's outputs into the next state. Every update is
// checked against the world as it stood before the tick: the character exists
// and is in that location, and its destination is that location or one of its
// connections. An invalid update is skipped and reported; the others apply
// (strict per update, lenient per tick, as seed 000's orders). Memory entries
// are appended, and a character keeps only its latest prompts.MemoryDepth
// (the prompts show no more; all are stored when the tick commits); a location's moment and description are replaced when the
// game master gave a non-null value. The input state is not modified.
func Apply(sim *world.Simulation, st *world.State, outputs map[string]MasterOutput) (*world.State, []ApplyError) {
	next := st.Clone()
	next.Tick = st.Tick + 1
	var errs []ApplyError
	for _, loc := range sim.Locations {
		if out, ok := outputs[loc.ID]; ok {
			errs = append(errs, applyAt(sim, st, next, loc, out)...)
		}
	}
	return next, errs
}

// applyAt folds the output of location loc into next, as Apply does for
// each location: it reads, of st, only the characters the output names
// and changes, of next, only those in loc at st and loc itself. So a
// state holding just the characters present and the location is enough
// to play one location ahead of the others (round.go) with the very
// updates Apply makes.
func applyAt(sim *world.Simulation, st, next *world.State, loc *world.Location, out MasterOutput) []ApplyError {
	tick := st.Tick + 1
	var errs []ApplyError
	reject := func(charID, format string, args ...any) {
		errs = append(errs, ApplyError{Tick: tick, LocationID: loc.ID, CharacterID: charID, Reason: fmt.Sprintf(format, args...)})
	}
	if out.LocationID != loc.ID {
		reject("", "output is for location %q, not %q; whole output skipped", out.LocationID, loc.ID)
		return errs
	}
	if out.Tick != tick {
		reject("", "output is for tick %d, not %d; whole output skipped", out.Tick, tick)
		return errs
	}
	for _, id := range sortedKeys(out.Characters) {
		upd := out.Characters[id]
		before, exists := st.Characters[id]
		switch {
		case !exists:
			reject(id, "no such character")
			continue
		case before.Location != loc.ID:
			reject(id, "character is in %q, not in this location", before.Location)
			continue
		case sim.Location(upd.Location) == nil:
			reject(id, "destination %q does not exist", upd.Location)
			continue
		case !sim.Reachable(loc.ID, upd.Location):
			reject(id, "destination %q is not reachable from %q (connections: %v)", upd.Location, loc.ID, loc.Connections)
			continue
		case upd.MemoryEntry == "":
			reject(id, "memory_entry is empty")
			continue
		}
		cs := next.Characters[id]
		cs.Location = upd.Location
		cs.InternalState = upd.InternalState
		cs.ExternalIntent = upd.ExternalIntent
		cs.Memory = append(cs.Memory, world.MemoryEntry{Tick: tick, Entry: upd.MemoryEntry})
		if over := len(cs.Memory) - prompts.MemoryDepth; over > 0 {
			cs.Memory = slices.Delete(cs.Memory, 0, over)
		}
		next.Characters[id] = cs
	}
	ls := next.Locations[loc.ID]
	if m := out.Location.Moment; m != nil {
		ls.Moment = *m
	}
	if d := out.Location.Description; d != nil {
		ls.Description = *d
	}
	next.Locations[loc.ID] = ls
	return errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
