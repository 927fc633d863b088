package session

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/world"
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
// run uses. A narrative's phases are intention (entity: a character) and
// resolution (a location; the characters' current external_intent stands in
// for that tick's intentions); a chronicle's is chat (no entity).
func (s *Session) Request(ctx context.Context, phase, entity string, tick int, latest bool) (*Request, error) {
	state, err := s.StateAt(ctx, tick, latest)
	if err != nil {
		return nil, err
	}
	switch k := s.Kind.(type) {
	case *phases.Narrative:
		st := state.(*world.State)
		req, err := k.Request(st, phase, entity)
		if err != nil {
			return nil, &InputError{Err: err}
		}
		var hist []llm.Exchange
		if s.store != nil {
			recs, err := s.store.History(ctx, s.settings.Depth, st.Tick)
			if err != nil {
				return nil, err
			}
			for _, h := range recs[req.EntityKey] {
				hist = append(hist, llm.Exchange{User: h.User, Assistant: h.Assistant})
			}
		}
		return &Request{Phase: req.Phase, EntityKey: req.EntityKey, Tick: req.Tick, Model: req.Params.Model, MaxTokens: req.Params.MaxTokens,
			Messages: llm.Messages(req, hist, s.settings.Depth), SchemaName: req.SchemaName, Schema: req.Schema}, nil
	case *chronicle.Game:
		if phase != chronicle.PhaseChat {
			return nil, inputErrorf("--phase %q: a chronicle has one phase, %s", phase, chronicle.PhaseChat)
		}
		cr := k.ChatRequest(state.(*chronicle.State))
		return &Request{Phase: phase, EntityKey: cr.EntityKey, Tick: tickOf(s, tick, latest) + 1, Model: cr.Params.Model, MaxTokens: cr.Params.MaxTokens, Messages: cr.Messages}, nil
	case *conquest.Game:
		if phase != conquest.PhaseOrders {
			return nil, inputErrorf("--phase %q: a conquest's model seats have one phase, %s (--entity: the player)", phase, conquest.PhaseOrders)
		}
		st := state.(*conquest.State)
		if !st.HasPlayer(entity) {
			return nil, inputErrorf("--entity %q: not a player (players: %s)", entity, strings.Join(st.Players, ", "))
		}
		tr := k.OpeningRequest(st, entity, tickOf(s, tick, latest)+1)
		tools, err := json.Marshal(tr.Tools)
		if err != nil {
			return nil, err
		}
		return &Request{Phase: phase, EntityKey: tr.EntityKey, Tick: tr.Tick, Model: tr.Params.Model, MaxTokens: tr.Params.MaxTokens,
			Messages: tr.Messages, SchemaName: "tools", Schema: tools}, nil
	case *duel.Game:
		return nil, inputErrorf("a duel's requests depend on the turn's dice and options, so they are not rendered ahead; each one sent is stored with its call in state.db")
	}
	return nil, fmt.Errorf("session: no requests for kind %s", s.Sim.Kind)
}

func tickOf(s *Session, tick int, latest bool) int {
	if latest {
		return s.LastTick()
	}
	return tick
}
