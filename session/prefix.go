package session

import (
	"context"
	"encoding/json"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/store"
)

// PromptPrefix is the start one phase's system prompts share in one tick:
// what a provider's prefix cache can serve to every call of the phase after
// its first.
type PromptPrefix struct {
	Phase  string `json:"phase"`
	Calls  int    `json:"calls"`
	Shared int    `json:"shared_bytes"` // the longest start every system prompt has
	Mean   int    `json:"mean_bytes"`   // a system prompt's mean length
}

// PromptPrefixes measures, per phase in the order the tick's calls were
// stored, the start that the system prompts its calls sent share; none
// before the first commit.
func (s *Session) PromptPrefixes(ctx context.Context, tick int) ([]PromptPrefix, error) {
	if s.store == nil {
		return nil, nil
	}
	calls, err := s.store.Calls(ctx, tick)
	if err != nil {
		return nil, err
	}
	systems := map[string][]string{}
	var phases []string
	for _, c := range calls {
		var msgs []store.Message
		if err := json.Unmarshal([]byte(c.Request), &msgs); err != nil || len(msgs) == 0 || msgs[0].Role != "system" {
			continue
		}
		if _, ok := systems[c.Phase]; !ok {
			phases = append(phases, c.Phase)
		}
		systems[c.Phase] = append(systems[c.Phase], msgs[0].Content)
	}
	out := make([]PromptPrefix, 0, len(phases))
	for _, ph := range phases {
		texts, total := systems[ph], 0
		for _, t := range texts {
			total += len(t)
		}
		out = append(out, PromptPrefix{Phase: ph, Calls: len(texts), Shared: prompts.SharedPrefix(texts), Mean: total / len(texts)})
	}
	return out, nil
}
