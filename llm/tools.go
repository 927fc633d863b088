package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Tool is a function the model may call; Parameters is the strict JSON Schema
// of its arguments.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCall is one call the model made. Invalid is empty when the call names a
// known tool and its arguments match the tool's schema; otherwise it says why
// not, in words to send back to the model as the tool's result.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	Invalid   string          `json:"-"`
}

// ToolRequest is one turn of a tool-using conversation. Messages is the whole
// conversation so far (system, user, assistant turns with their tool calls,
// tool results); the caller owns it.
type ToolRequest struct {
	EntityKey string
	Phase     string
	Tick      int
	Params    Params
	Messages  []Message
	Tools     []Tool
	// Choice is "auto" (default), "required", or the name of the one tool
	// the model must call.
	Choice string
	// ForceShape also sends a json_schema response_format admitting only
	// {"name": <a tool>, "arguments": {...}}: servers that build tool calls
	// from the model's text (Ollama with a tools template) then get a call
	// even from a model too small to choose one. Leave it off for OpenAI.
	ForceShape bool
}

// ToolResult is the model's turn: its assistant message (to append to the
// conversation as is) and the calls in it, each checked against its tool.
type ToolResult struct {
	Request  ToolRequest
	Message  Message
	Calls    []ToolCall
	Attempts int
	Latency  time.Duration
	Usage    Usage
	Err      error // *Error: transport, refusal or truncation; bad calls are in Calls
	// Endpoint names the endpoint the last attempt went to, and
	// EndpointFailures the endpoints that failed an attempt, as Result's.
	Endpoint         string
	EndpointFailures []string
	// PromptTruncated and ContextTokens are Result's.
	PromptTruncated bool
	ContextTokens   int
	// Recoveries are the transient failures the call was retried past or
	// tried to, in order, as Result's are (seed 002: each is emitted).
	Recoveries []Recovery
}

// CompleteTools sends one turn with tools, with the same retries and error
// classification as Complete. It does not repair: a call with invalid
// arguments comes back with Invalid set so the caller can answer it with the
// reason, which is how a tool-using agent learns.
func (c *Client) CompleteTools(ctx context.Context, req ToolRequest) ToolResult {
	ctx, span := spanOf(ctx, req.EntityKey, req.Phase, req.Tick, req.Params)
	if span == nil {
		return c.completeTools(ctx, req, nil)
	}
	how := &called{msgs: req.Messages}
	res := c.completeTools(ctx, req, how)
	for _, tc := range res.Calls {
		how.toolCalls = append(how.toolCalls, tc.Name)
	}
	how.answer = res.Message.Content
	c.endSpan(ctx, span, done(res.Usage, res.Attempts, 0, res.Latency, res.Endpoint, res.EndpointFailures, res.Err), *how)
	return res
}

// completeTools is CompleteTools; how, when not nil, is told of the
// answer for the call's span.
func (c *Client) completeTools(ctx context.Context, req ToolRequest, how *called) (res ToolResult) {
	start := time.Now()
	res.Request = req
	ctx = watchCall(ctx, req.EntityKey)
	defer func() {
		res.Latency = time.Since(start)
		tellFinal(ctx, res.Err)
	}()
	if req.Params.Model == "" || len(req.Tools) == 0 {
		res.Err = &Error{Kind: KindBadRequest, Message: "tool request of " + req.EntityKey + " needs a model and at least one tool"}
		return res
	}
	cr, err := toolRequest(req)
	if err != nil {
		res.Err = &Error{Kind: KindBadRequest, Err: err, Message: err.Error()}
		return res
	}
	log := c.log.With("entity", req.EntityKey, "phase", req.Phase, "tick", req.Tick)
	resp, rt, usage, callErr := c.create(ctx, log, &res.Recoveries, callSite{req.EntityKey, req.Phase, req.Tick}, "", cr)
	res.Usage, res.Endpoint, res.EndpointFailures = usage, rt.endpoint(), rt.failed
	res.PromptTruncated, res.ContextTokens = rt.truncated, rt.window.Tokens
	n := rt.attempts
	res.Attempts = n
	how.sent(resp, rt)
	if callErr != nil {
		callErr.Attempts = n
		res.Err = callErr
		return res
	}
	if len(resp.Choices) == 0 {
		res.Err = &Error{Kind: KindInvalidJSON, Attempts: n, Message: "answer has no choices"}
		return res
	}
	ch := resp.Choices[0]
	if e := stopError(ch.Message.Refusal, ch.FinishReason, req.Params.MaxTokens); e != nil {
		e.Attempts = n
		res.Err = e
		return res
	}
	res.Message = Message{Role: openai.ChatMessageRoleAssistant, Content: ch.Message.Content}
	for _, tc := range ch.Message.ToolCalls {
		call := ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(tc.Function.Arguments)}
		call.Invalid = c.checkToolCall(req.Tools, call)
		res.Calls = append(res.Calls, call)
		res.Message.ToolCalls = append(res.Message.ToolCalls, ToolCall{ID: call.ID, Name: call.Name, Arguments: call.Arguments})
	}
	return res
}

// checkToolCall says what is wrong with a call, or "" when nothing is.
func (c *Client) checkToolCall(tools []Tool, call ToolCall) string {
	for _, t := range tools {
		if t.Name != call.Name {
			continue
		}
		schema, err := c.schemas.get(t.Parameters)
		if err != nil {
			return fmt.Sprintf("tool %s has a schema that does not compile: %v", t.Name, err)
		}
		v, err := parseJSON(string(call.Arguments))
		if err != nil {
			return fmt.Sprintf("arguments of %s are not valid JSON: %v", call.Name, err)
		}
		if err := schema.Validate(v); err != nil {
			return fmt.Sprintf("arguments of %s do not match its schema: %v", call.Name, err)
		}
		return ""
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return fmt.Sprintf("no tool named %q (tools: %v)", call.Name, names)
}

// toolRequest builds the wire request of a tool turn.
func toolRequest(req ToolRequest) (openai.ChatCompletionRequest, error) {
	cr := openai.ChatCompletionRequest{
		Model:       req.Params.Model,
		Temperature: req.Params.Temperature,
		MaxTokens:   req.Params.MaxTokens,
	}
	for _, m := range req.Messages {
		om := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			om.ToolCalls = append(om.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: tc.Name, Arguments: string(tc.Arguments)}})
		}
		cr.Messages = append(cr.Messages, om)
	}
	var shapes []any
	for _, t := range req.Tools {
		cr.Tools = append(cr.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: t.Name, Description: t.Description, Parameters: t.Parameters, Strict: true,
		}})
		if req.Choice == "" || req.Choice == "auto" || req.Choice == "required" || req.Choice == t.Name {
			shapes = append(shapes, map[string]any{
				"type":                 "object",
				"properties":           map[string]any{"name": map[string]any{"type": "string", "enum": []string{t.Name}}, "arguments": t.Parameters},
				"required":             []string{"name", "arguments"},
				"additionalProperties": false,
			})
		}
	}
	switch req.Choice {
	case "", "auto":
		cr.ToolChoice = "auto"
	case "required":
		cr.ToolChoice = "required"
	default:
		if len(shapes) == 0 {
			return cr, fmt.Errorf("tool choice %q is not one of the tools", req.Choice)
		}
		cr.ToolChoice = openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: req.Choice}}
	}
	if req.ForceShape {
		schema := shapes[0]
		if len(shapes) > 1 {
			schema = map[string]any{"anyOf": shapes}
		}
		b, err := json.Marshal(schema)
		if err != nil {
			return cr, err
		}
		cr.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "ToolCall", Schema: json.RawMessage(b), Strict: true},
		}
	}
	return cr, nil
}
