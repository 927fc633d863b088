package world

import (
	"errors"
	"fmt"
	"maps"
	"slices"
)

// InitialState returns tick 0: every character and location in its authored
// starting state, with empty (non-nil) memories.
func (s *Simulation) InitialState() *State {
	st := &State{
		Characters: make(map[string]CharacterState, len(s.Characters)),
		Locations:  make(map[string]LocationState, len(s.Locations)),
	}
	for _, c := range s.Characters {
		cs := c.Start
		cs.Memory = []MemoryEntry{}
		st.Characters[c.ID] = cs
	}
	for _, l := range s.Locations {
		st.Locations[l.ID] = l.Start
	}
	return st
}

// Clone returns a deep copy of st: changing the copy's maps or memories never
// changes st. Nil memories become empty ones, so the JSON form is always [].
func (st *State) Clone() *State {
	c := &State{
		Tick:       st.Tick,
		Characters: make(map[string]CharacterState, len(st.Characters)),
		Locations:  make(map[string]LocationState, len(st.Locations)),
	}
	for id, cs := range st.Characters {
		cs.Memory = append(make([]MemoryEntry, 0, len(cs.Memory)), cs.Memory...)
		c.Characters[id] = cs
	}
	for id, ls := range st.Locations {
		c.Locations[id] = ls
	}
	return c
}

// CharactersAt returns the IDs of the characters in location locID, sorted.
// It scans every character: to place them all, use Occupancy once.
func (st *State) CharactersAt(locID string) []string {
	var ids []string
	for id, cs := range st.Characters {
		if cs.Location == locID {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// Occupancy maps a location id to the sorted ids of the characters in it.
// A location nobody is in has no entry; reading it gives nil.
type Occupancy map[string][]string

// Occupancy places every character of st in one pass: what a tick's
// prompts read for every character and location, built once per tick.
func (st *State) Occupancy() Occupancy {
	occ := make(Occupancy, len(st.Characters))
	for _, id := range slices.Sorted(maps.Keys(st.Characters)) {
		l := st.Characters[id].Location
		occ[l] = append(occ[l], id)
	}
	return occ
}

// Validate checks that st fits sim: it holds exactly sim's characters and
// locations, and every character is in one of sim's locations. A state read
// back from an earlier run fails it when the authored files have changed
// since (a character or location added, removed or renamed).
func (st *State) Validate(sim *Simulation) error {
	var errs []error
	for _, c := range sim.Characters {
		if _, ok := st.Characters[c.ID]; !ok {
			errs = append(errs, fmt.Errorf("state at tick %d: character %q is authored but not in the state", st.Tick, c.ID))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.Characters)) {
		cs := st.Characters[id]
		switch {
		case sim.Character(id) == nil:
			errs = append(errs, fmt.Errorf("state at tick %d: character %q is not authored in %s", st.Tick, id, sim.Dir))
		case sim.Location(cs.Location) == nil:
			errs = append(errs, fmt.Errorf("state at tick %d: character %q is in unknown location %q", st.Tick, id, cs.Location))
		}
	}
	for _, l := range sim.Locations {
		if _, ok := st.Locations[l.ID]; !ok {
			errs = append(errs, fmt.Errorf("state at tick %d: location %q is authored but not in the state", st.Tick, l.ID))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(st.Locations)) {
		if sim.Location(id) == nil {
			errs = append(errs, fmt.Errorf("state at tick %d: location %q is not authored in %s", st.Tick, id, sim.Dir))
		}
	}
	return errors.Join(errs...)
}
