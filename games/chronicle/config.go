package chronicle

import "github.com/arbiter-sim/arbiter/session"

// Config is the chronicle's section of the configuration: the model seat
// of `arbiter chat`, and how much of the conversation it is sent.
type Config struct {
	session.PhaseConfig `mapstructure:",squash" yaml:",inline"`
	// Window is how many of the latest messages go to the model each turn
	// (0: all); the current timeline is always sent.
	Window int `mapstructure:"window" yaml:"window" json:"window"`
}

// Section is the chronicle's section of the configuration, with its
// built-in values (config.yaml documents them).
var Section = &session.Section{
	Key: "chronicle",
	Defaults: map[string]any{
		"model":       "",
		"temperature": 0.8,
		"max_tokens":  1000,
		"window":      0, // seed 001: everything goes into the conversation
	},
	Ints: []session.IntBound{{Key: "max_tokens", Min: 1, Max: session.MaxTokensBound}, {Key: "window", Min: 0, Max: 1_000_000}},
	Flags: []session.SectionFlag{
		{Command: "chat", Name: "chat-model", Key: "model", Usage: "model of the chat when it differs from llm.model"},
		{Command: "chat", Name: "temperature", Key: "temperature", Usage: "sampling temperature of the model's messages"},
		{Command: "chat", Name: "max-tokens", Key: "max_tokens", Usage: "longest model message, in tokens"},
		{Command: "chat", Name: "window", Key: "window", Usage: "latest messages sent to the model each turn, 0 for all"},
	},
	New: func() session.SectionConfig { return &Config{} },
}

// Phases are the one phase of the chat.
func (c *Config) Phases() map[string]*session.PhaseConfig {
	return map[string]*session.PhaseConfig{"": &c.PhaseConfig}
}

// Check finds nothing: the phase's keys are checked with every kind's,
// and window by its bounds.
func (c *Config) Check(func(string) string) []error { return nil }

// Clone is a copy of c.
func (c *Config) Clone() session.SectionConfig {
	d := *c
	return &d
}
