package chronicle

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// A chronicle's reply can be asked outside a conversation (`prompts try`,
// `eval`): session.Caller.
var _ session.Caller = (*Game)(nil)

// CallPhases: chat, the model's reply.
func (g *Game) CallPhases() []string { return []string{PhaseChat} }

// Entities: the model is the one party a chronicle calls.
func (g *Game) Entities(phase string, _ any) ([]string, error) {
	if phase != PhaseChat {
		return nil, &session.InputError{Err: fmt.Errorf("phase %q: a chronicle has one phase, %s", phase, PhaseChat)}
	}
	return []string{string(Model)}, nil
}

// CallAt is the model's reply after the conversation of q.State, as the
// chat sends it (chronicle.window messages of it).
func (g *Game) CallAt(_ context.Context, q session.RequestQuery) (*session.Call, error) {
	if q.Entity != "" && q.Entity != string(Model) {
		return nil, &session.InputError{Err: fmt.Errorf("entity %q: a chronicle's calls are the model's (--entity %s, or none)", q.Entity, Model)}
	}
	cr := g.chatRequest(q.State.(*State))
	key, err := session.KeyOf(cr)
	if err != nil {
		return nil, err
	}
	req := llm.Request{EntityKey: cr.EntityKey, Phase: PhaseChat, Tick: q.Tick + 1, Params: cr.Params}
	return &session.Call{Request: req, Messages: cr.Messages, Key: key, Send: func(ctx context.Context, c *llm.Client) llm.Result {
		res := c.Chat(ctx, cr)
		out := llm.Result{Request: req, Messages: cr.Messages, Raw: res.Content, Attempts: res.Attempts, Latency: res.Latency,
			Usage: res.Usage, Err: res.Err, Endpoint: res.Endpoint, Recoveries: res.Recoveries,
			PromptTruncated: res.PromptTruncated, ContextTokens: res.ContextTokens}
		if res.Err == nil {
			out.Output, _ = json.Marshal(res.Content)
		}
		return out
	}}, nil
}

// Judge reads a reply as the chat does: its commands, applied to the
// timeline in memory, or the error that would reject it.
func (g *Game) Judge(q session.RequestQuery, res llm.Result) session.Verdict {
	v := session.Verdict{Problems: []string{}, Changes: []string{}}
	if res.Err != nil {
		v.Fallback = true
		v.Problems = append(v.Problems, fmt.Sprintf("the call failed (%s): the chat keeps no reply", llm.ErrorKindOf(res.Err)))
		return v
	}
	cmds, _, err := Interpret(q.State.(*State).Timeline, res.Raw)
	if err != nil {
		v.Problems = append(v.Problems, "rejected: "+err.Error())
		return v
	}
	for _, c := range cmds {
		v.Changes = append(v.Changes, c.Summary())
	}
	return v
}

// Assertions: a chronicle has none of its own.
func (g *Game) Assertions() map[string]session.KindAssertion { return nil }
