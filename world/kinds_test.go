package world_test

import (
	"github.com/arbiter-sim/arbiter/phases/cast"
	"github.com/arbiter-sim/arbiter/world"
)

// The kinds these tests load simulations of, as this module's kinds
// register what they read with the session layer; world itself knows none.
// The narrative's cast is read by its own rules (cast.Load), through
// world's reading of a kind's files.
const (
	KindNarrative = "narrative"
	KindConquest  = "conquest"
	KindChronicle = "chronicle"
	KindDuel      = "duel"
)

var testKinds = world.Kinds{
	KindNarrative: {Folders: []string{"characters", "evals", "locations", "prompts"}, Load: cast.Load, Default: true},
	KindConquest:  {Folders: []string{"prompts"}},
	KindChronicle: {Folders: []string{"prompts"}},
	KindDuel:      {Files: []string{"ships.yaml"}, Folders: []string{"prompts"}},
}

// Load is testKinds.Load.
func Load(dir string) (*world.Simulation, error) { return testKinds.Load(dir) }

// Lint is testKinds.Lint.
func Lint(dir string) (problems, warnings []error) { return testKinds.Lint(dir) }
