package phases

import (
	"fmt"
	"slices"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// ApplyError is an arbiter update that broke a world rule and was skipped.
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

// Apply folds the arbiter's outputs into the next state. Every update is
// checked against the world as it stood before the tick: the character exists
// and is in that location, and its destination is that location or one of its
// connections. An invalid update is skipped and reported; the others apply
// (strict per update, lenient per tick, as seed 000's orders). Memory entries
// are appended, and a character keeps only its latest prompts.MemoryDepth
// (the prompts show no more; all are stored when the tick commits); a location's moment and description are replaced when the
// arbiter gave a non-null value. The input state is not modified.
func Apply(sim *world.Simulation, st *world.State, outputs map[string]MasterOutput) (*world.State, []ApplyError) {
	tick := st.Tick + 1
	next := st.Clone()
	next.Tick = tick
	var errs []ApplyError
	for _, loc := range sim.Locations {
		out, ok := outputs[loc.ID]
		if !ok {
			continue
		}
		reject := func(charID, format string, args ...any) {
			errs = append(errs, ApplyError{Tick: tick, LocationID: loc.ID, CharacterID: charID, Reason: fmt.Sprintf(format, args...)})
		}
		if out.LocationID != loc.ID {
			reject("", "output is for location %q, not %q; whole output skipped", out.LocationID, loc.ID)
			continue
		}
		if out.Tick != tick {
			reject("", "output is for tick %d, not %d; whole output skipped", out.Tick, tick)
			continue
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
	}
	return next, errs
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
