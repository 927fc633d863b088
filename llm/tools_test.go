package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

var ordersTools = []Tool{
	{Name: "propose_orders", Description: "Check orders without committing them.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"string"}}},"required":["orders"],"additionalProperties":false}`)},
	{Name: "submit_orders", Description: "Commit orders for this turn.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"string"}}},"required":["orders"],"additionalProperties":false}`)},
}

func toolClient(t *testing.T, srv *openaitest.Server) *Client {
	t.Helper()
	cfg := DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffMax = srv.URL, "k", 2, 1, 1
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompleteToolsRoundTrip(t *testing.T) {
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("call_1", "propose_orders", map[string]any{"orders": []string{"move 3 ships from Sol to Vega"}})),
		openaitest.ToolCalls(openaitest.Tool("call_2", "submit_orders", map[string]any{"orders": []string{"move 3 ships from Sol to Vega"}})),
	))
	c := toolClient(t, srv)
	msgs := []Message{{Role: "system", Content: "You command a fleet."}, {Role: "user", Content: "Your turn."}}
	req := ToolRequest{EntityKey: "agent:red", Params: Params{Model: "m", MaxTokens: 200}, Messages: msgs, Tools: ordersTools, Choice: "propose_orders"}
	res := c.CompleteTools(context.Background(), req)
	if res.Err != nil || len(res.Calls) != 1 || res.Calls[0].Name != "propose_orders" || res.Calls[0].Invalid != "" {
		t.Fatalf("first turn: %+v", res)
	}
	msgs = append(msgs, res.Message, Message{Role: "tool", ToolCallID: res.Calls[0].ID, Content: "valid: 1 order"})
	req.Messages, req.Choice = msgs, "submit_orders"
	res = c.CompleteTools(context.Background(), req)
	if res.Err != nil || len(res.Calls) != 1 || res.Calls[0].Name != "submit_orders" {
		t.Fatalf("second turn: %+v", res)
	}
	if res.Usage.PromptTokens != openaitest.DefaultUsage.PromptTokens || c.Usage().PromptTokens != 2*openaitest.DefaultUsage.PromptTokens {
		t.Errorf("usage %+v, client total %+v", res.Usage, c.Usage())
	}

	calls := srv.Calls()
	second := calls[1].Request
	if n := len(second.Messages); n != 4 || len(second.Messages[2].ToolCalls) != 1 || second.Messages[2].ToolCalls[0].ID != "call_1" ||
		second.Messages[3].Role != "tool" || second.Messages[3].ToolCallID != "call_1" {
		t.Errorf("second request does not carry the first turn's call and its result: %+v", second.Messages)
	}
	var choice struct {
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	b, _ := json.Marshal(calls[0].Request.ToolChoice)
	if json.Unmarshal(b, &choice); choice.Type != "function" || choice.Function.Name != "propose_orders" {
		t.Errorf("tool_choice %s, want the named function", b)
	}
	if calls[0].Request.ResponseFormat != nil {
		t.Error("response_format sent without ForceShape")
	}
}

func TestCompleteToolsForceShape(t *testing.T) {
	srv := openaitest.New(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c", "submit_orders", map[string]any{"orders": []string{}}))))
	c := toolClient(t, srv)
	res := c.CompleteTools(context.Background(), ToolRequest{Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "go"}}, Tools: ordersTools, Choice: "required", ForceShape: true})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	call := srv.Calls()[0]
	if call.SchemaName() != "ToolCall" || !call.Strict() {
		t.Fatalf("response_format %q strict %v, want the ToolCall shape", call.SchemaName(), call.Strict())
	}
	var shape struct {
		AnyOf []struct {
			Properties struct {
				Name struct{ Enum []string } `json:"name"`
			} `json:"properties"`
		} `json:"anyOf"`
	}
	if err := json.Unmarshal(call.Schema(), &shape); err != nil || len(shape.AnyOf) != 2 || shape.AnyOf[0].Properties.Name.Enum[0] != "propose_orders" {
		t.Errorf("shape schema %s (%v)", call.Schema(), err)
	}
}

func TestCompleteToolsInvalidCalls(t *testing.T) {
	srv := openaitest.New(t, openaitest.Always(openaitest.ToolCalls(
		openaitest.Tool("a", "launch_missiles", map[string]any{}),
		openaitest.Tool("b", "submit_orders", map[string]any{"orders": "all of them"}),
		openaitest.Tool("c", "propose_orders", "{not json"),
	)))
	res := toolClient(t, srv).CompleteTools(context.Background(), ToolRequest{Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "go"}}, Tools: ordersTools})
	if res.Err != nil || len(res.Calls) != 3 {
		t.Fatalf("%+v", res)
	}
	for i, want := range []string{`no tool named "launch_missiles"`, "arguments of submit_orders do not match its schema", "arguments of propose_orders are not valid JSON"} {
		if !strings.Contains(res.Calls[i].Invalid, want) {
			t.Errorf("call %d: Invalid %q, want %q", i, res.Calls[i].Invalid, want)
		}
	}
}

func TestCompleteToolsErrors(t *testing.T) {
	tests := []struct {
		name  string
		reply openaitest.Reply
		req   func(*ToolRequest)
		want  error
	}{
		{"refusal", openaitest.Refusal("no"), nil, ErrRefusal},
		{"truncated", openaitest.Truncated("{"), nil, ErrTruncated},
		{"401", openaitest.Status(401, "invalid_request_error", "invalid_api_key", "bad key"), nil, ErrAuth},
		{"500 twice", openaitest.Status(500, "server_error", "", "down"), nil, ErrServer},
		{"unknown choice", openaitest.Content("x"), func(r *ToolRequest) { r.Choice = "fly" }, ErrBadRequest},
		{"no tools", openaitest.Content("x"), func(r *ToolRequest) { r.Tools = nil }, ErrBadRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.Always(tc.reply))
			req := ToolRequest{Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "go"}}, Tools: ordersTools}
			if tc.req != nil {
				tc.req(&req)
			}
			res := toolClient(t, srv).CompleteTools(context.Background(), req)
			if !errors.Is(res.Err, tc.want) {
				t.Errorf("err %v, want %v", res.Err, tc.want)
			}
		})
	}
}
