package phases

import "github.com/arbiter-sim/arbiter/session"

// Config is the narrative's section of the configuration, phases: the
// model settings of its two phases, how each sends its calls (live or as
// Batch API jobs) and to which servers, and how many characters one
// resolution call resolves.
type Config struct {
	Intention  session.PhaseConfig `mapstructure:"intention" yaml:"intention" json:"intention"`
	Resolution ResolutionConfig    `mapstructure:"resolution" yaml:"resolution" json:"resolution"`
}

// ResolutionConfig is the resolution phase's model settings and how many
// characters one arbiter call resolves (0: as many as llm.max_output_tokens
// allows); a location with more present is resolved in several calls.
type ResolutionConfig struct {
	session.PhaseConfig `mapstructure:",squash" yaml:",inline"`
	MaxCharacters       int `mapstructure:"max_characters" yaml:"max_characters" json:"max_characters"`
}

// Section is the narrative's section of the configuration, with its
// built-in values (config.yaml documents them).
var Section = &session.Section{
	Key: "phases",
	Defaults: map[string]any{
		"intention.endpoints":       []any{},
		"intention.model":           "",
		"intention.mode":            session.ModeLive,
		"intention.temperature":     0.8,
		"intention.max_tokens":      400,
		"resolution.endpoints":      []any{},
		"resolution.model":          "",
		"resolution.mode":           session.ModeLive,
		"resolution.temperature":    0.7,
		"resolution.max_tokens":     2048,
		"resolution.max_characters": 0,
	},
	Ints: []session.IntBound{
		{Key: "intention.max_tokens", Min: 1, Max: session.MaxTokensBound},
		{Key: "resolution.max_tokens", Min: 1, Max: session.MaxTokensBound},
		{Key: "resolution.max_characters", Min: 0, Max: 5000}, // strict mode's 5,000 properties: no call resolves more
	},
	New: func() session.SectionConfig { return &Config{} },
}

// Phases are the intention and resolution phases' model settings.
func (c *Config) Phases() map[string]*session.PhaseConfig {
	return map[string]*session.PhaseConfig{PhaseIntention: &c.Intention, PhaseResolution: &c.Resolution.PhaseConfig}
}

// Check finds nothing: the phases' keys are checked with every kind's,
// and max_characters by its bounds.
func (c *Config) Check(func(string) string) []error { return nil }

// Clone is a copy of c.
func (c *Config) Clone() session.SectionConfig {
	d := *c
	return &d
}

// Of is the narrative's section of set.
func Of(set session.Settings) *Config { return session.SectionOf[*Config](set, Section) }
