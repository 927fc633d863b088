package llm

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// sentByGoOpenAI returns the body and headers go-openai's own client sends
// for cr, to a server answering ok.
func sentByGoOpenAI(t *testing.T, cr openai.ChatCompletionRequest, ok openaitest.Reply) *openaitest.Call {
	t.Helper()
	srv := openaitest.New(t, openaitest.Always(ok))
	oc := openai.DefaultConfig("sk-wire")
	oc.BaseURL = srv.URL
	if _, err := openai.NewClientWithConfig(oc).CreateChatCompletion(t.Context(), cr); err != nil {
		t.Fatal(err)
	}
	return srv.Calls()[0]
}

// TestRequestIsGoOpenAIs: what a structured call, a chat turn and a tool
// turn put on the wire is what go-openai writes for the request they mean,
// byte for byte and header for header: the engine's schema goes in as it
// was built (a json.RawMessage in go-openai's json_schema, strict), history
// and tool calls as go-openai's messages.
func TestRequestIsGoOpenAIs(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type": "object", "properties": {"a": {"type": "string", "description": "<Ada> & \u2028"}}, "required": ["a"], "additionalProperties": false}`)
	args := `{"orders":["x"]}`
	req := testRequest("You are <Ada> & \"friends\"\n\ttabs \u2028 é")
	req.Schema, req.SchemaName = schema, "S"
	tools := ToolRequest{EntityKey: "agent:red", Params: Params{Model: "m", MaxTokens: 9}, Tools: ordersTools[:1],
		Messages: []Message{{Role: "user", Content: "go"},
			{Role: "assistant", ToolCalls: []ToolCall{{ID: "c1", Name: "propose_orders", Arguments: json.RawMessage(args)}}},
			{Role: "tool", Content: "done", ToolCallID: "c1"}}}
	for _, tt := range []struct {
		name string
		ok   openaitest.Reply
		call func(c *Client) error
		want openai.ChatCompletionRequest
	}{
		{"structured", openaitest.JSON(map[string]any{"a": "b"}), func(c *Client) error { return c.Complete(t.Context(), req).Err },
			openai.ChatCompletionRequest{Model: "test-model", Temperature: 0.7, MaxTokens: 256,
				Messages: []openai.ChatCompletionMessage{{Role: "system", Content: req.System}, {Role: "user", Content: req.User}},
				ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
					JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "S", Schema: schema, Strict: true}}}},
		{"chat", openaitest.Content("hi"), func(c *Client) error {
			return c.Chat(t.Context(), ChatRequest{EntityKey: "chat", Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "hello"}}}).Err
		}, openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "hello"}}}},
		{"tools", openaitest.ToolCalls(openaitest.Tool("c2", "propose_orders", map[string]any{"orders": []string{"y"}})),
			func(c *Client) error { return c.CompleteTools(t.Context(), tools).Err },
			openai.ChatCompletionRequest{Model: "m", MaxTokens: 9, ToolChoice: "auto",
				Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "go"},
					{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction,
						Function: openai.FunctionCall{Name: "propose_orders", Arguments: args}}}},
					{Role: "tool", Content: "done", ToolCallID: "c1"}},
				Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
					Name: ordersTools[0].Name, Description: ordersTools[0].Description, Parameters: ordersTools[0].Parameters, Strict: true}}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want := sentByGoOpenAI(t, tt.want, tt.ok)
			srv := openaitest.New(t, openaitest.Always(tt.ok))
			c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.APIKey = "sk-wire" })
			if err := tt.call(c); err != nil {
				t.Fatal(err)
			}
			got := srv.Calls()[0]
			if string(got.Body) != string(want.Body) {
				t.Errorf("sent\n%s\nwant (go-openai)\n%s", got.Body, want.Body)
			}
			for _, h := range []string{"Authorization", "Content-Type", "Accept"} {
				if got.Header.Get(h) != want.Header.Get(h) {
					t.Errorf("%s: %q, want %q", h, got.Header.Get(h), want.Header.Get(h))
				}
			}
		})
	}
}

// TestRequestsGoOpenAIRefusesAreNotSent: a request go-openai will not send
// fails at once as a bad request, naming why, and reaches no server.
func TestRequestsGoOpenAIRefusesAreNotSent(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("x")))
	c, _ := newTestClient(t, srv.URL, nil)
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}
	for _, tt := range []struct {
		cr   openai.ChatCompletionRequest
		want error
	}{
		{openai.ChatCompletionRequest{Model: "m", Messages: msgs, Stream: true}, openai.ErrChatCompletionStreamNotSupported},
		{openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x",
			MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "y"}}}}}, openai.ErrContentFieldsMisused},
	} {
		_, rt, _, err := c.create(t.Context(), c.log, nil, callSite{}, "", tt.cr)
		n := rt.attempts
		if err == nil || !errors.Is(err, tt.want) || err.Kind != KindBadRequest || n != 1 {
			t.Errorf("%+v: err %v (kind %v) after %d attempts, want %v as a bad request", tt.cr, err, ErrorKindOf(err), n, tt.want)
		}
	}
	if srv.CallCount() != 0 {
		t.Errorf("%d requests reached the server", srv.CallCount())
	}
}
