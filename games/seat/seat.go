// Package seat is the model seats of the games (conquest, duel): their
// section of the configuration, games:, which the games share.
package seat

import "github.com/arbiter-sim/arbiter/session"

// Config is the games' section of the configuration: the model seats'
// model settings, and whether a seat's tool calls are also asked for as a
// json_schema response format.
type Config struct {
	session.PhaseConfig `mapstructure:",squash" yaml:",inline"`
	// ForceToolShape sends a conquest seat's tool calls with a json_schema
	// response format too, for servers that build tool calls from the
	// model's text (Ollama with a small model).
	ForceToolShape bool `mapstructure:"force_tool_shape" yaml:"force_tool_shape" json:"force_tool_shape"`
}

// Section is the games' section of the configuration, with its built-in
// values (config.yaml documents them).
var Section = &session.Section{
	Key: "games",
	Defaults: map[string]any{
		"model":            "",
		"temperature":      0.7,
		"max_tokens":       600,
		"force_tool_shape": false,
	},
	Ints: []session.IntBound{{Key: "max_tokens", Min: 1, Max: session.MaxTokensBound}},
	New:  func() session.SectionConfig { return &Config{} },
}

// Of is the games' section of set.
func Of(set session.Settings) *Config { return session.SectionOf[*Config](set, Section) }

// Phases are the one phase of a model seat.
func (c *Config) Phases() map[string]*session.PhaseConfig {
	return map[string]*session.PhaseConfig{"": &c.PhaseConfig}
}

// Check finds nothing: the phase's keys are checked with every kind's.
func (c *Config) Check(func(string) string) []error { return nil }

// Clone is a copy of c.
func (c *Config) Clone() session.SectionConfig {
	d := *c
	return &d
}
