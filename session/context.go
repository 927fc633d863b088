package session

import (
	"context"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
)

// ContextChecker is a Kind that checks the calls of its first tick against
// the context of each phase's model (FitContext).
type ContextChecker interface {
	FitContext(window func(phase, model string) llm.Window) []error
}

// contextWait bounds what validate waits for a server to say its model's
// context: validate is a quick check, and an unreachable server only
// leaves the context unknown.
const contextWait = 5 * time.Second

// ContextWarnings checks the first tick's prompts of the simulation in dir
// against the context the server gives each phase's model (Ollama's
// /api/show), when the configuration sets none (llm.context_tokens, which
// Validate checks as a problem) and an endpoint other than OpenAI's is
// configured: each call that would not fit is a warning naming its phase
// and entity. A server that does not say, or cannot be reached, leaves the
// context unknown and adds nothing.
func ContextWarnings(ctx context.Context, dir string, set Settings) []error {
	if set.Context > 0 || set.LLM == nil {
		return nil
	}
	cfg, err := set.LLM()
	if err != nil || cfg.Cassette != nil || (cfg.BaseURL == "" || cfg.BaseURL == llm.DefaultBaseURL) && len(cfg.Endpoints) == 0 {
		return nil // no endpoint, or OpenAI's, which says no context
	}
	set.Logger = nil
	s, err := Load(dir, set)
	if err != nil {
		return nil // Validate reports it
	}
	checker, ok := s.Kind.(ContextChecker)
	if !ok {
		return nil
	}
	client, err := llm.New(cfg)
	if err != nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, contextWait)
	defer cancel()
	return checker.FitContext(func(phase, model string) llm.Window {
		w, _ := client.ContextWindow(ctx, phase, model)
		return w
	})
}
