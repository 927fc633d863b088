// Package world holds a simulation as authored on disk (simulation.yaml,
// and what its kind reads besides: characters and locations, for a cast of
// characters in connected places) and the run state that ticks evolve from
// it. It knows no kind: the session layer tells it what each registered
// kind reads (Reads), and a kind checks its own files through Files.
package world

import (
	"slices"
	"sync"
)

// Simulation is the authored, read-only definition of a world. Characters and
// Locations are sorted by ID so every iteration over them is deterministic.
type Simulation struct {
	Dir        string // folder the simulation was loaded from
	ID         string
	Kind       string // the kind that plays it, as registered
	Title      string
	Premise    string
	Settings   map[string]any // free-form, as authored; nil when absent
	Characters []*Character
	Locations  []*Location
	// Warnings name what the simulation's folder holds that its kind does
	// not read (a characters/ beside a game), each a *LoadError; they
	// do not stop a load. Nil when there are none.
	Warnings []error

	index sync.Once // builds byID the first time a lookup needs it
	byID  *lookup
}

// lookup maps ids to the authored characters and locations, so a lookup is
// O(1) however large the world.
type lookup struct {
	characters map[string]*Character
	locations  map[string]*Location
}

func (s *Simulation) lookup() *lookup {
	s.index.Do(func() {
		l := &lookup{
			characters: make(map[string]*Character, len(s.Characters)),
			locations:  make(map[string]*Location, len(s.Locations)),
		}
		for _, c := range s.Characters {
			if _, dup := l.characters[c.ID]; !dup { // the first of a duplicate id, as a scan would find
				l.characters[c.ID] = c
			}
		}
		for _, loc := range s.Locations {
			if _, dup := l.locations[loc.ID]; !dup {
				l.locations[loc.ID] = loc
			}
		}
		s.byID = l
	})
	return s.byID
}

// Character is an authored character: identity plus starting state.
type Character struct {
	ID          string
	Name        string
	Description string // identity: who they are, as the model should play them
	Start       CharacterState
}

// Location is an authored location: identity, starting state and connections
// (the IDs of locations reachable from it in one tick). Connections are
// directed, exactly as authored: a path that can be walked both ways is listed
// in both locations' files, and a one-way path (a slide, a locked door) in one.
type Location struct {
	ID          string
	Name        string
	Description string // identity: what the place is
	Start       LocationState
	Connections []string
}

// State is the whole mutable world after Tick ticks have committed; tick 0 is
// the authored state. Its JSON form is what `arbiter export` prints.
type State struct {
	Tick       int                       `json:"tick"`
	Characters map[string]CharacterState `json:"characters"`
	Locations  map[string]LocationState  `json:"locations"`
}

// CharacterState is what a tick can change about a character.
type CharacterState struct {
	Location       string        `json:"location"`
	InternalState  string        `json:"internal_state"`
	ExternalIntent string        `json:"external_intent"`
	Memory         []MemoryEntry `json:"memory"`
}

// MemoryEntry is one line of a character's memory, written at the tick it happened.
type MemoryEntry struct {
	Tick  int    `json:"tick"`
	Entry string `json:"entry"`
}

// LocationState is what a tick can change about a location.
type LocationState struct {
	Moment      string `json:"moment"`
	Description string `json:"description"`
}

// Character returns the character with the given ID, or nil. Characters
// and Locations must not change once a lookup has been made.
func (s *Simulation) Character(id string) *Character { return s.lookup().characters[id] }

// Location returns the location with the given ID, or nil.
func (s *Simulation) Location(id string) *Location { return s.lookup().locations[id] }

// Reachable reports whether a character in location from may be in location
// to after one tick: staying put, or following one of from's connections.
// It is false when from is not a location.
func (s *Simulation) Reachable(from, to string) bool {
	loc := s.Location(from)
	if loc == nil {
		return false
	}
	return to == from || slices.Contains(loc.Connections, to)
}

// Destinations returns where a character in location from may be after one
// tick: from itself first, then its connections as authored. It is nil when
// from is not a location.
func (s *Simulation) Destinations(from string) []string {
	loc := s.Location(from)
	if loc == nil {
		return nil
	}
	return append([]string{from}, loc.Connections...)
}
