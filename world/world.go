// Package world holds a narrative simulation as authored on disk (simulation.yaml,
// characters/*.yaml, locations/*.yaml) and the run state that ticks evolve from it.
package world

// Simulation is the authored, read-only definition of a world. Characters and
// Locations are sorted by ID so every iteration over them is deterministic.
type Simulation struct {
	Dir        string // folder the simulation was loaded from
	ID         string
	Kind       string // narrative | conquest | chronicle | duel
	Title      string
	Premise    string
	Characters []*Character
	Locations  []*Location
}

// Character is an authored character: identity plus starting state.
type Character struct {
	ID          string
	Name        string
	Description string // identity: who they are, as the model should play them
	Start       CharacterState
}

// Location is an authored location: identity, starting state and connections
// (the IDs of locations reachable from it in one tick).
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
