// Package worldtest holds small worlds for the tests of several packages.
package worldtest

import (
	"github.com/arbiter-sim/arbiter/phases/cast"
	"github.com/arbiter-sim/arbiter/world"
)

// House is a three-room world: hall <-> garden -> cellar, and cellar -> garden.
// Ada and Bo start in the hall, Cy in the garden; the cellar starts empty. A
// tick of it makes 3 intention calls and 3 resolution calls.
func House() *world.Simulation {
	return &world.Simulation{
		ID: "test", Kind: "narrative", Title: "Test", Premise: "A small house.",
		Characters: []*world.Character{
			{ID: "ada", Name: "Ada", Description: "a cook", Start: world.CharacterState{Location: "hall", InternalState: "calm", ExternalIntent: "cook"}},
			{ID: "bo", Name: "Bo", Description: "a thief", Start: world.CharacterState{Location: "hall", InternalState: "greedy", ExternalIntent: "steal"}},
			{ID: "cy", Name: "Cy", Description: "a gardener", Start: world.CharacterState{Location: "garden", InternalState: "tired", ExternalIntent: "dig"}},
		},
		Locations: []*world.Location{
			{ID: "cellar", Name: "Cellar", Description: "dark", Start: world.LocationState{Moment: "silent", Description: "barrels"}, Connections: []string{"garden"}},
			{ID: "garden", Name: "Garden", Description: "green", Start: world.LocationState{Moment: "dawn", Description: "roses"}, Connections: []string{"hall", "cellar"}},
			{ID: "hall", Name: "Hall", Description: "wide", Start: world.LocationState{Moment: "noon", Description: "a long table"}, Connections: []string{"garden"}},
		},
	}
}

// Kinds are what this module's kinds read, as they register it with the
// session layer, for the tests that load a simulation without it.
var Kinds = world.Kinds{
	"narrative": {Folders: []string{"characters", "evals", "locations", "prompts"}, Load: cast.Load, Default: true},
	"conquest":  {Folders: []string{"prompts"}},
	"chronicle": {Folders: []string{"prompts"}},
	"duel":      {Files: []string{"ships.yaml"}, Folders: []string{"prompts"}},
}

// Load loads the simulation in dir as the session layer would (Kinds).
func Load(dir string) (*world.Simulation, error) { return Kinds.Load(dir) }
