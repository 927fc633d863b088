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
// before the first commit. It keeps one prompt a phase, not the tick's:
// a tick of 300,000 characters sends 300,000 of them.
func (s *Session) PromptPrefixes(ctx context.Context, tick int) ([]PromptPrefix, error) {
	if s.store == nil {
		return nil, nil
	}
	calls, err := s.store.Calls(ctx, tick)
	if err != nil {
		return nil, err
	}
	type phase struct {
		first string
		PromptPrefix
	}
	var out []*phase
	byName := map[string]*phase{}
	for i := range calls {
		var msgs []store.Message
		err := json.Unmarshal([]byte(calls[i].Request), &msgs)
		calls[i].Request = "" // read: its memory can go
		if err != nil || len(msgs) == 0 || msgs[0].Role != "system" {
			continue
		}
		text := msgs[0].Content
		p, ok := byName[calls[i].Phase]
		if !ok {
			p = &phase{first: text, PromptPrefix: PromptPrefix{Phase: calls[i].Phase, Shared: len(text)}}
			byName[p.Phase] = p
			out = append(out, p)
		}
		p.Shared = prompts.SharedPrefix([]string{p.first[:p.Shared], text})
		p.Calls++
		p.Mean += len(text) // the sum, until the mean below
	}
	prefixes := make([]PromptPrefix, len(out))
	for i, p := range out {
		p.Mean /= p.Calls
		prefixes[i] = p.PromptPrefix
	}
	return prefixes, nil
}
