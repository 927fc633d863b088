//go:build integration

package llm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/localmodel"
	"github.com/arbiter-sim/arbiter/llm"
)

func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }

func realClient(t *testing.T) (*llm.Client, string) {
	t.Helper()
	url, key, model := localmodel.ForTest(t)
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Timeout = url, key, 2*time.Minute
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, model
}

var verdictSchema = json.RawMessage(`{"type":"object","properties":{"verdict":{"type":"string","enum":["guilty","innocent"]},"reason":{"type":"string","minLength":1,"maxLength":80},"confidence":{"type":"integer"}},"required":["verdict","reason","confidence"],"additionalProperties":false}`)

// TestIntegrationStructuredOutput: a strict schema is accepted and the answer
// validated (enum, bounded string, integer), on the first attempt.
func TestIntegrationStructuredOutput(t *testing.T) {
	c, model := realClient(t)
	res := c.Complete(context.Background(), llm.Request{
		EntityKey: "it:verdict", Phase: "it", Params: llm.Params{Model: model, MaxTokens: 200, Temperature: 0.01},
		System: "You are a judge. Answer in JSON.", User: "The cat ate the fish. Verdict?",
		SchemaName: "Verdict", Schema: verdictSchema,
	})
	if res.Err != nil {
		t.Fatalf("%v (raw %q)", res.Err, res.Raw)
	}
	var v struct {
		Verdict    string `json:"verdict"`
		Reason     string `json:"reason"`
		Confidence int    `json:"confidence"`
	}
	if err := json.Unmarshal(res.Output, &v); err != nil || (v.Verdict != "guilty" && v.Verdict != "innocent") || v.Reason == "" || len(v.Reason) > 80 {
		t.Errorf("answer %s does not fit the schema (%v)", res.Output, err)
	}
	if res.Usage.PromptTokens == 0 || res.Usage.CompletionTokens == 0 {
		t.Errorf("usage %+v: want the server's token counts", res.Usage)
	}
	t.Logf("answer %s in %d attempt(s), %d repairs, %s, usage %+v", res.Output, res.Attempts, res.Repairs, res.Latency, res.Usage)
}

// TestIntegrationTruncated: an answer cut by max_tokens is the structural
// error it is: ErrTruncated, one attempt, no repair, no retry.
func TestIntegrationTruncated(t *testing.T) {
	c, model := realClient(t)
	res := c.Complete(context.Background(), llm.Request{
		EntityKey: "it:truncated", Phase: "it", Params: llm.Params{Model: model, MaxTokens: 3},
		System: "Answer in JSON.", User: "Verdict?", SchemaName: "Verdict", Schema: verdictSchema,
	})
	if !errors.Is(res.Err, llm.ErrTruncated) {
		t.Fatalf("err %v (raw %q), want ErrTruncated", res.Err, res.Raw)
	}
	if res.Attempts != 1 || res.Repairs != 0 {
		t.Errorf("attempts %d repairs %d, want 1 and 0", res.Attempts, res.Repairs)
	}
}

var orderTools = []llm.Tool{
	{Name: "propose_orders", Description: "Validate orders without committing them; returns the errors.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"object","properties":{"from":{"type":"string","enum":["sol","vega"]},"to":{"type":"string","enum":["sol","vega"]},"ships":{"type":"integer"}},"required":["from","to","ships"],"additionalProperties":false}}},"required":["orders"],"additionalProperties":false}`)},
	{Name: "submit_orders", Description: "Commit the orders of this turn.",
		Parameters: json.RawMessage(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"object","properties":{"from":{"type":"string","enum":["sol","vega"]},"to":{"type":"string","enum":["sol","vega"]},"ships":{"type":"integer"}},"required":["from","to","ships"],"additionalProperties":false}}},"required":["orders"],"additionalProperties":false}`)},
}

// TestIntegrationToolRoundTrip: propose_orders, its tool result, then
// submit_orders, as real tool_calls through go-openai.
func TestIntegrationToolRoundTrip(t *testing.T) {
	c, model := realClient(t)
	_, configured := os.LookupEnv("OPENAI_BASE_URL")
	_, keyed := os.LookupEnv("OPENAI_API_KEY")
	force := !configured && !keyed // the local test model needs the call's shape forced
	msgs := []llm.Message{
		{Role: "system", Content: "You command the red fleet. Use the tools: propose your orders, then submit them."},
		{Role: "user", Content: "Turn 1. You hold sol with 10 ships. Vega is empty."},
	}
	req := llm.ToolRequest{EntityKey: "it:red", Phase: "it", Params: llm.Params{Model: model, MaxTokens: 300, Temperature: 0.01},
		Messages: msgs, Tools: orderTools, Choice: "propose_orders", ForceShape: force}
	first := c.CompleteTools(context.Background(), req)
	if first.Err != nil || len(first.Calls) == 0 || first.Calls[0].Name != "propose_orders" || first.Calls[0].Invalid != "" {
		t.Fatalf("propose turn: err %v calls %+v message %+v", first.Err, first.Calls, first.Message)
	}
	req.Messages = append(msgs, first.Message, llm.Message{Role: "tool", ToolCallID: first.Calls[0].ID, Content: `{"valid":true,"errors":[]}`})
	req.Choice = "submit_orders"
	second := c.CompleteTools(context.Background(), req)
	if second.Err != nil || len(second.Calls) == 0 || second.Calls[0].Name != "submit_orders" || second.Calls[0].Invalid != "" {
		t.Fatalf("submit turn: err %v calls %+v", second.Err, second.Calls)
	}
	t.Logf("propose_orders(%s) -> submit_orders(%s)", first.Calls[0].Arguments, second.Calls[0].Arguments)
}

// TestIntegrationPromptTruncated: a prompt longer than the model's context
// is cut by the server, which answers anyway; the client marks the call,
// knowing the context from the server. On the local model (Ollama, num_ctx
// from /api/show) the prompt reports exactly the context; an endpoint that
// does not say its context (OpenAI) refuses such a prompt instead, and the
// test skips.
func TestIntegrationPromptTruncated(t *testing.T) {
	url, key, model := localmodel.ForTest(t)
	model = smallContext(t, url, model)
	cfg := llm.DefaultConfig()
	// A whole context to read on one thread, on a loaded machine.
	cfg.BaseURL, cfg.APIKey, cfg.Timeout, cfg.MaxAttempts = url, key, 10*time.Minute, 1
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := c.ContextWindow(context.Background(), "", model)
	if err != nil || w.Tokens == 0 || w.Tokens > 32768 {
		t.Skipf("the endpoint does not give a small context (%+v, %v)", w, err)
	}
	long := strings.Repeat("The cat sat on the mat and looked at the door. ", w.Tokens/8) // 6 bytes a token would still pass it
	res := c.Complete(context.Background(), llm.Request{
		EntityKey: "it:long", Phase: "it", Params: llm.Params{Model: model, MaxTokens: 40, Temperature: 0.01},
		System: "You are a judge. Answer in JSON.", User: long + "Verdict?",
		SchemaName: "Verdict", Schema: verdictSchema,
	})
	if !res.PromptTruncated || res.ContextTokens != w.Tokens {
		t.Fatalf("a prompt of %d bytes: PromptTruncated %v, ContextTokens %d, usage %+v, err %v; want it marked at %d",
			len(long), res.PromptTruncated, res.ContextTokens, res.Usage, res.Err, w.Tokens)
	}
	t.Logf("a prompt of %d bytes: %d prompt tokens reported, context %d (%s), err %v", len(long), res.Usage.PromptTokens, w.Tokens, w.Source, res.Err)
}

// smallContext returns, on an Ollama endpoint, a model made from model with
// a context of 2,048 tokens, so that a prompt past it is read in seconds
// whatever the local model's own window; elsewhere (the create is refused)
// model itself.
func smallContext(t *testing.T, baseURL, model string) string {
	t.Helper()
	small := model + "-ctx2048"
	body, _ := json.Marshal(map[string]any{"model": small, "from": model, "stream": false,
		"parameters": map[string]any{"num_ctx": 2048}})
	root := strings.TrimSuffix(strings.TrimSuffix(baseURL, "/"), "/v1")
	resp, err := http.Post(root+"/api/create", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Logf("no small-context model (%v): the model's own window is used", err)
		return model
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Logf("no small-context model (create: %s): the model's own window is used", resp.Status)
		return model
	}
	return small
}
