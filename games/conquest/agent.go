package conquest

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/telemetry"
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// The tools of a model seat.
const (
	ToolGetState = "get_state"
	ToolPropose  = "propose_orders"
	ToolSubmit   = "submit_orders"
	// MaxIterations is how many model turns a seat has to submit its
	// orders (seed 000's budget); then its turn passes.
	MaxIterations = 15
	// PhaseOrders is the phase, and "conquest:<player>" the entity key, of
	// the model seats' calls.
	PhaseOrders = "orders"
	// StrategyPass is the recovery of a model seat that failed its turn (a
	// call failed, or its model turns ran out): the turn passes.
	StrategyPass = "pass_turn"
)

// tools returns the three tools, their order lists' star ids an enum of the
// map's stars so a server that enforces schemas never sends an unknown one.
func tools(s *State) []llm.Tool {
	ids := make([]string, len(s.Stars))
	for i, st := range s.Stars {
		ids[i] = st.ID
	}
	star := map[string]any{"type": "string", "enum": ids}
	orders := map[string]any{
		"type": "object",
		"properties": map[string]any{"orders": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"from": star, "to": star, "ships": map[string]any{"type": "integer"}},
				"required":             []string{"from", "to", "ships"},
				"additionalProperties": false,
			},
		}},
		"required":             []string{"orders"},
		"additionalProperties": false,
	}
	none := map[string]any{"type": "object", "properties": map[string]any{}, "required": []string{}, "additionalProperties": false}
	raw := func(v any) json.RawMessage { b, _ := json.Marshal(v); return b }
	return []llm.Tool{
		{Name: ToolGetState, Description: "The map as you see it now: stars, owners, ships, fleets in flight, travel times, your order errors of the last turn.", Parameters: raw(none)},
		{Name: ToolPropose, Description: `Check a list of orders without submitting them. Returns {"ok":true} or {"ok":false,"errors":[...]}, each error starting "Order {index}: ".`, Parameters: raw(orders)},
		{Name: ToolSubmit, Description: "Submit your orders for this turn and end it. An empty list passes the turn.", Parameters: raw(orders)},
	}
}

// seatTurn is what a model seat did in a turn.
type seatTurn struct {
	orders    []Order
	submitted bool
	pass      string // why the turn passed without submit_orders
	exhausted bool   // it passed because its model turns ran out
	calls     []runner.Call
}

// ProposeResult is propose_orders' answer, and what
// `arbiter conquest check-orders` prints.
type ProposeResult struct {
	OK     bool     `json:"ok"`
	Errors []string `json:"errors,omitempty"`
}

// Propose checks orders for player in s as the propose_orders tool does.
func Propose(s *State, player string, orders []Order) ProposeResult {
	errs := Check(s, player, orders)
	return ProposeResult{OK: len(errs) == 0, Errors: errs}
}

// agentTurn plays one model seat's turn: a conversation of tool calls in
// which the model looks at the map, proposes orders, reads their errors,
// corrects them and submits, within MaxIterations model turns. A failed
// call ends the turn with no orders (the turn passes); so does running
// out of iterations. Every call is returned for the record.
func (g *Game) agentTurn(ctx context.Context, tick int, s *State, player string) (out seatTurn) {
	own := g.seat(player)
	req := g.OpeningRequest(s, player, tick)
	ctx, span := telemetry.Start(ctx, "invoke_agent "+player, semconv.GenAIOperationNameInvokeAgent, semconv.GenAIAgentName(player),
		telemetry.KeyEntity.String(req.EntityKey), telemetry.KeyTick.Int(tick), telemetry.KeyPhase.String(PhaseOrders))
	defer func() {
		span.SetAttributes(attribute.Int("arbiter.tool_iterations", len(out.calls)), attribute.Bool("arbiter.submitted", out.submitted))
		span.End()
	}()
	key, msgs := req.EntityKey, req.Messages
	iterations := g.iterations()
	for i := 0; i < iterations; i++ {
		sent := append([]llm.Message(nil), msgs...)
		req.Messages = sent
		res := own.Client.CompleteTools(ctx, req)
		raw, _ := json.Marshal(res.Message)
		call := runner.Call{Result: &llm.Result{
			Request:  llm.Request{EntityKey: key, Phase: PhaseOrders, Tick: tick, Params: own.Params},
			Messages: sent, Raw: string(raw), Attempts: res.Attempts, Latency: res.Latency, Usage: res.Usage, Err: res.Err,
			Recoveries: res.Recoveries, Endpoint: res.Endpoint, EndpointFailures: res.EndpointFailures,
			PromptTruncated: res.PromptTruncated, ContextTokens: res.ContextTokens,
		}}
		if res.Err != nil {
			call.Fallback = true
			out.calls = append(out.calls, call)
			out.pass = fmt.Sprintf("model call %d failed: %v", i+1, res.Err)
			return out
		}
		out.calls = append(out.calls, call)
		msgs = append(msgs, res.Message)
		if len(res.Calls) == 0 {
			msgs = append(msgs, llm.Message{Role: "user", Content: "Call a tool: propose_orders to check orders, submit_orders to end your turn."})
			continue
		}
		for _, c := range res.Calls {
			answer, done := g.execute(ctx, s, player, c, &out)
			msgs = append(msgs, llm.Message{Role: "tool", ToolCallID: c.ID, Content: answer})
			if done {
				return out
			}
		}
	}
	out.pass = fmt.Sprintf("no submit_orders in %d model turns: the turn passes with no orders", iterations)
	out.exhausted = true
	return out
}

func (g *Game) iterations() int {
	if g.MaxIterations > 0 {
		return g.MaxIterations
	}
	return MaxIterations
}

// execute is answer, in a span of its own when ctx has telemetry.
func (g *Game) execute(ctx context.Context, s *State, player string, c llm.ToolCall, out *seatTurn) (string, bool) {
	_, span := telemetry.Start(ctx, "execute_tool "+c.Name, semconv.GenAIOperationNameExecuteTool,
		semconv.GenAIToolName(c.Name), semconv.GenAIToolCallID(c.ID))
	defer span.End()
	return g.answer(s, player, c, out)
}

// answer runs one tool call and returns its result for the model, and
// whether the seat submitted. Arguments are read leniently: a ship count of
// the wrong type is an error of its order, not of the call.
func (g *Game) answer(s *State, player string, c llm.ToolCall, out *seatTurn) (string, bool) {
	switch c.Name {
	case ToolGetState:
		return mustJSON(ViewOf(s, player)), false
	case ToolPropose, ToolSubmit:
		orders, err := ToolOrders(c.Arguments)
		if err != nil {
			return mustJSON(ProposeResult{Errors: []string{err.Error()}}), false
		}
		if c.Name == ToolPropose {
			return mustJSON(Propose(s, player, orders)), false
		}
		out.orders, out.submitted = orders, true
		return mustJSON(map[string]any{"ok": true, "submitted": len(orders)}), true
	}
	// The client's Invalid may already list the tools; the answer says it
	// once, in its own words.
	return mustJSON(ProposeResult{Errors: []string{fmt.Sprintf("no tool named %q (tools: %s, %s, %s)", c.Name, ToolGetState, ToolPropose, ToolSubmit)}}), false
}

// ToolOrders reads the arguments of propose_orders or submit_orders:
// {"orders": [...]}.
func ToolOrders(args json.RawMessage) ([]Order, error) {
	var in struct {
		Orders json.RawMessage `json:"orders"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, fmt.Errorf(`arguments must be {"orders": [{"from","to","ships"}, ...]}: %v`, err)
	}
	if len(in.Orders) == 0 || string(in.Orders) == "null" {
		return nil, fmt.Errorf(`arguments must be {"orders": [...]}: "orders" is missing ([] passes the turn)`)
	}
	return ParseOrders(in.Orders)
}

// mustJSON is v as a model reads it: compact, and "A -> B" written as is,
// not "A -\u003e B".
func mustJSON(v any) string {
	b, err := plainJSON(v)
	if err != nil {
		return fmt.Sprintf(`{"error": %q}`, err.Error())
	}
	return string(b)
}

// OpeningRequest is the first call of player's turn after s: the system
// prompt, the player's view of the map with their order errors of the last
// turn, and the tools. It is what `arbiter prompts render --phase orders`
// shows.
func (g *Game) OpeningRequest(s *State, player string, tick int) llm.ToolRequest {
	user := fmt.Sprintf("Turn %d of %d. You are %s. Your view of the map (get_state gives it again):\n%s",
		s.Turn+1, s.MaxTurns, player, mustJSON(ViewOf(s, player)))
	if block := ErrorBlock(s, player, false); block != "" {
		user += "\n" + strings.TrimSpace(block)
	}
	user += "\nPropose your orders with propose_orders, fix any errors, then call submit_orders."
	// A system message with no content is refused by some servers (Ollama:
	// "invalid message content type: <nil>"), so an empty prompt is left out.
	own := g.seat(player)
	msgs := []llm.Message{{Role: "user", Content: user}}
	if sys := own.prompts[player]; strings.TrimSpace(sys) != "" {
		msgs = append([]llm.Message{{Role: "system", Content: sys}}, msgs...)
	}
	return llm.ToolRequest{EntityKey: "conquest:" + player, Phase: PhaseOrders, Tick: tick, Params: own.Params,
		Messages: msgs,
		Tools:    tools(s), Choice: "auto", ForceShape: own.ForceShape}
}
