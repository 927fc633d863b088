package session

import (
	"context"
	"encoding/json"

	"github.com/arbiter-sim/arbiter/llm"
)

// Request is what one model call of a tick sends: its messages (the system
// prompt, the entity's past exchanges as of that tick, the user prompt) and
// the JSON Schema its answer must satisfy, as a run builds them.
type Request struct {
	Phase      string          `json:"phase"`
	EntityKey  string          `json:"entity_key"`
	Tick       int             `json:"tick"` // the tick the call belongs to
	Model      string          `json:"model"`
	MaxTokens  int             `json:"max_tokens"`
	Messages   []llm.Message   `json:"messages"`
	SchemaName string          `json:"schema_name,omitempty"`
	Schema     json.RawMessage `json:"schema,omitempty"`
}

// Request builds the call that phase makes for entity at the tick after
// tick (or after the latest when latest is set), with the very functions a
// run uses: the kind builds it (its phases and their entities are its
// Opener.Templates').
func (s *Session) Request(ctx context.Context, phase, entity string, tick int, latest bool) (*Request, error) {
	r, ok := s.Kind.(Requester)
	if !ok {
		return nil, inputErrorf("%s is a %s simulation: its requests are not rendered ahead (%s)", s.Dir, s.Sim.Kind, how(s.Dir, s.Kind))
	}
	state, err := s.StateAt(ctx, tick, latest)
	if err != nil {
		return nil, err
	}
	return r.Request(ctx, RequestQuery{Phase: phase, Entity: entity, Tick: tickOf(s, tick, latest), State: state, Store: s.store, Depth: s.settings.Depth})
}

func tickOf(s *Session, tick int, latest bool) int {
	if latest {
		return s.LastTick()
	}
	return tick
}
