package conquest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// A model seat's first call of a turn can be made outside a game (`prompts
// try`, `eval`): session.Caller.
var _ session.Caller = (*Game)(nil)

// CallPhases: orders, a model seat's turn.
func (g *Game) CallPhases() []string { return []string{PhaseOrders} }

// Entities are the players, each of whom a model seat may play.
func (g *Game) Entities(phase string, state any) ([]string, error) {
	if phase != PhaseOrders {
		return nil, &session.InputError{Err: fmt.Errorf("phase %q: a conquest's model seats have one phase, %s", phase, PhaseOrders)}
	}
	return state.(*State).Players, nil
}

// CallAt is player q.Entity's first call of turn q.Tick+1, with the tools
// of that turn's map.
func (g *Game) CallAt(_ context.Context, q session.RequestQuery) (*session.Call, error) {
	st := q.State.(*State)
	if !st.HasPlayer(q.Entity) {
		return nil, &session.InputError{Err: fmt.Errorf("entity %q: not a player (players: %s)", q.Entity, strings.Join(st.Players, ", "))}
	}
	tr := g.OpeningRequest(st, q.Entity, q.Tick+1)
	key, err := session.KeyOf(tr)
	if err != nil {
		return nil, err
	}
	req := llm.Request{EntityKey: tr.EntityKey, Phase: PhaseOrders, Tick: tr.Tick, Params: tr.Params}
	return &session.Call{Request: req, Messages: tr.Messages, Key: key, Send: func(ctx context.Context, c *llm.Client) llm.Result {
		res := c.CompleteTools(ctx, tr)
		out := llm.Result{Request: req, Messages: tr.Messages, Attempts: res.Attempts, Latency: res.Latency,
			Usage: res.Usage, Err: res.Err, Endpoint: res.Endpoint, Recoveries: res.Recoveries,
			PromptTruncated: res.PromptTruncated, ContextTokens: res.ContextTokens}
		raw, _ := json.Marshal(res.Message)
		out.Raw = string(raw)
		if res.Err == nil {
			out.Output, _ = json.Marshal(toolAnswer(res))
		}
		return out
	}}, nil
}

// toolCallJSON is one tool call of a model seat's answer, as eval's
// assertions read it (/calls/0/name, /calls/0/arguments/orders).
type toolCallJSON struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Invalid   string          `json:"invalid,omitempty"`
}

func toolAnswer(res llm.ToolResult) map[string]any {
	calls := []toolCallJSON{}
	for _, c := range res.Calls {
		args := c.Arguments
		if !json.Valid(args) {
			args, _ = json.Marshal(string(c.Arguments))
		}
		calls = append(calls, toolCallJSON{Name: c.Name, Arguments: args, Invalid: c.Invalid})
	}
	return map[string]any{"content": res.Message.Content, "calls": calls}
}

// Judge reads the seat's first answer as the game does: each tool call
// checked, the orders it proposes or submits checked against the map.
func (g *Game) Judge(q session.RequestQuery, res llm.Result) session.Verdict {
	v := session.Verdict{Problems: []string{}, Changes: []string{}}
	if res.Err != nil {
		v.Fallback = true
		v.Problems = append(v.Problems, fmt.Sprintf("the call failed (%s): the turn passes with no orders", llm.ErrorKindOf(res.Err)))
		return v
	}
	var ans struct {
		Calls []toolCallJSON `json:"calls"`
	}
	_ = json.Unmarshal(res.Output, &ans)
	if len(ans.Calls) == 0 {
		v.Problems = append(v.Problems, "no tool call: the seat is asked again to call one")
	}
	st := q.State.(*State)
	for i, c := range ans.Calls {
		// The game reads the orders of propose and submit leniently, as
		// answer does, whatever the client said of the call's schema.
		if c.Name != ToolPropose && c.Name != ToolSubmit {
			if c.Invalid != "" {
				v.Problems = append(v.Problems, fmt.Sprintf("call %d (%s): %s", i+1, c.Name, strings.Join(strings.Fields(c.Invalid), " ")))
			} else {
				v.Changes = append(v.Changes, fmt.Sprintf("call %d: %s", i+1, c.Name))
			}
			continue
		}
		orders, err := ToolOrders(c.Arguments)
		if err != nil {
			v.Problems = append(v.Problems, fmt.Sprintf("call %d (%s): %v", i+1, c.Name, err))
			continue
		}
		for _, e := range Check(st, q.Entity, orders) {
			v.Problems = append(v.Problems, fmt.Sprintf("call %d (%s): %s", i+1, c.Name, e))
		}
		verb := map[string]string{ToolPropose: "proposes", ToolSubmit: "submits"}[c.Name]
		v.Changes = append(v.Changes, fmt.Sprintf("%s %s %d orders: %s", q.Entity, verb, len(orders), mustJSON(orders)))
	}
	return v
}

// Assertions: a conquest has none of its own.
func (g *Game) Assertions() map[string]session.KindAssertion { return nil }
