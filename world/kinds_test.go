package world

// The kinds these tests load simulations of, as this module's kinds
// register what they read with the session layer; world itself knows none.
const (
	KindNarrative = "narrative"
	KindConquest  = "conquest"
	KindChronicle = "chronicle"
	KindDuel      = "duel"
)

var testKinds = Kinds{
	KindNarrative: {Folders: []string{"characters", "evals", "locations", "prompts"}, Cast: true, Default: true},
	KindConquest:  {Folders: []string{"prompts"}},
	KindChronicle: {Folders: []string{"prompts"}},
	KindDuel:      {Files: []string{"ships.yaml"}, Folders: []string{"prompts"}},
}

// Load is testKinds.Load.
func Load(dir string) (*Simulation, error) { return testKinds.Load(dir) }

// Lint is testKinds.Lint.
func Lint(dir string) (problems, warnings []error) { return testKinds.Lint(dir) }
