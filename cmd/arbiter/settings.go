package main

import (
	"github.com/arbiter-sim/arbiter/session"
)

// settings is what the configuration decides for a session. withClient
// gives the model client's configuration, which needs an endpoint (else
// the error says how to get one); command names the command, which the
// session checks plays the simulation's kind ("": any kind).
func (c *Config) settings(withClient bool, command string) (session.Settings, error) {
	s := session.Settings{
		Depth:           c.LLM.Depth,
		Sections:        c.Kinds,
		Context:         c.LLM.ContextTokens,
		MaxOutputTokens: c.LLM.MaxOutputTokens,
		BatchPhases:     c.batchPhases(),
		Command:         command,
		Model:           c.LLM.Model,
		Run: session.Limits{PhaseTimeout: c.Run.PhaseTimeout, TokenBudget: c.Run.TokenBudget,
			MaxCost: c.Run.MaxCost, Prices: c.prices()},
	}
	if withClient {
		s.LLM = func() (session.ClientConfig, error) {
			url, err := c.endpoint()
			return c.llmConfig(url), err // without a base URL when none is configured
		}
	}
	return s, nil
}
