package main

import (
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// settings is what the configuration decides for a session. withClient
// gives the model client's configuration, which needs an endpoint (else
// the error says how to get one); command names the command, which the
// session checks plays the simulation's kind ("": any kind).
func (c *Config) settings(withClient bool, command string) (session.Settings, error) {
	s := session.Settings{
		Depth:      c.LLM.Depth,
		Intention:  c.params(c.Phases.Intention),
		Resolution: c.params(c.Phases.Resolution.PhaseConfig),
		Chat:       c.params(c.Chronicle.PhaseConfig),
		Window:     c.Chronicle.Window,
		Context:    c.LLM.ContextTokens,

		MaxOutputTokens: c.LLM.MaxOutputTokens,
		MaxCharacters:   c.Phases.Resolution.MaxCharacters,
		Game:            c.params(c.Games.PhaseConfig),
		ForceShape:      c.Games.ForceToolShape,
		Command:         command,
		Run: runner.Config{PhaseTimeout: c.Run.PhaseTimeout, TokenBudget: c.Run.TokenBudget,
			MaxCost: c.Run.MaxCost, Prices: c.prices(), PhaseModel: c.phaseModel},
	}
	if withClient {
		s.LLM = c.clientConfig
	}
	return s, nil
}
