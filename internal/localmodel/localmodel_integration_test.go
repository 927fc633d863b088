//go:build integration

package localmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// startLocal starts a server on the local model whatever OPENAI_* say: these
// tests are about the harness itself. It skips when there is no model file or
// no ollama.
func startLocal(t *testing.T) (*Server, time.Duration) {
	t.Helper()
	gguf, err := DefaultGGUF()
	if err != nil {
		t.Skip(err)
	}
	bin, err := FindOrBuild(t.Context())
	if err != nil {
		t.Skipf("no ollama %s: %v", OllamaVersion, err)
	}
	began := time.Now()
	srv, err := Start(t.Context(), Options{GGUF: gguf, Binary: bin})
	took := time.Since(began)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Error(err)
		}
		if t.Failed() {
			t.Logf("ollama log (end):\n%s", srv.Log())
		}
	})
	return srv, took
}

func TestServer(t *testing.T) {
	srv, took := startLocal(t)
	t.Logf("ollama serve + ollama create + listed: %s", took.Round(time.Millisecond))

	t.Run("models lists the model", func(t *testing.T) {
		ids, err := ListModels(t.Context(), srv.BaseURL())
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ids, srv.Model()+":latest") && !slices.Contains(ids, srv.Model()) {
			t.Fatalf("/v1/models = %v, want %s", ids, srv.Model())
		}
	})

	t.Run("plain chat", func(t *testing.T) {
		resp := chat(t, srv, map[string]any{
			"messages":   []map[string]any{{"role": "system", "content": "You tell stories."}, {"role": "user", "content": "Once upon a time"}},
			"max_tokens": 40,
		})
		c := resp.Choices[0]
		if c.Message.Content == "" || !slices.Contains([]string{"stop", "length"}, c.FinishReason) {
			t.Fatalf("content %q, finish_reason %q", c.Message.Content, c.FinishReason)
		}
		if resp.Usage.CompletionTokens <= 0 || resp.Usage.PromptTokens <= 0 {
			t.Fatalf("usage %+v, want the server's token counts", resp.Usage)
		}
	})

	t.Run("json_schema answer matches the schema", func(t *testing.T) {
		schema := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"mood":   map[string]any{"type": "string", "enum": []string{"happy", "sad", "angry"}},
				"reason": map[string]any{"type": "string", "maxLength": 60},
				"count":  map[string]any{"type": "integer", "minimum": 0, "maximum": 9},
			},
			"required":             []string{"mood", "reason", "count"},
			"additionalProperties": false,
		}
		resp := chat(t, srv, map[string]any{
			"messages":   []map[string]any{{"role": "user", "content": "How does the hero feel?"}},
			"max_tokens": 200,
			"response_format": map[string]any{"type": "json_schema", "json_schema": map[string]any{
				"name": "feeling", "strict": true, "schema": schema,
			}},
		})
		c := resp.Choices[0]
		if c.FinishReason != "stop" {
			t.Fatalf("finish_reason %q, want stop; content %q", c.FinishReason, c.Message.Content)
		}
		validate(t, schema, c.Message.Content)
	})

	t.Run("tool call round trip", func(t *testing.T) { toolCallRoundTrip(t, srv) })

	t.Run("throughput", func(t *testing.T) {
		// Measured, not asserted beyond sanity: README quotes the figure.
		var tokens int
		var wall time.Duration
		for range 3 {
			began := time.Now()
			resp := chat(t, srv, map[string]any{
				"messages":    []map[string]any{{"role": "user", "content": "Tell me a long story about a dog and a ball."}},
				"max_tokens":  200,
				"temperature": 0.8,
			})
			wall += time.Since(began)
			tokens += resp.Usage.CompletionTokens
		}
		if tokens <= 0 {
			t.Fatal("no completion tokens")
		}
		t.Logf("%d completion tokens in %s over 3 requests: %.0f tokens/s", tokens, wall.Round(time.Millisecond), float64(tokens)/wall.Seconds())
	})
}

// toolCallRoundTrip checks a tool call, its result sent back, and the next
// tool call, each the one the request forces and with arguments that match
// its schema.
func toolCallRoundTrip(t *testing.T, srv *Server) {
	orders := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"orders": map[string]any{"type": "array", "maxItems": 3,
				"items": map[string]any{"type": "string", "maxLength": 24}},
		},
		"required":             []string{"orders"},
		"additionalProperties": false,
	}
	empty := map[string]any{"type": "object", "properties": map[string]any{}, "additionalProperties": false}
	tools := []map[string]any{
		{"type": "function", "function": map[string]any{"name": "propose_orders", "description": "Check orders before submitting them.", "parameters": orders}},
		{"type": "function", "function": map[string]any{"name": "submit_orders", "description": "Submit the orders last proposed.", "parameters": empty}},
	}
	msgs := []map[string]any{
		{"role": "system", "content": "You command the red army."},
		{"role": "user", "content": "Your turn. Propose orders, then submit them."},
	}

	resp := chat(t, srv, map[string]any{
		"messages": msgs, "tools": tools, "max_tokens": 200,
		"response_format": forceTool("propose_orders", orders),
	})
	c := resp.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 {
		t.Fatalf("finish_reason %q, tool_calls %+v, content %q; want one tool call", c.FinishReason, c.Message.ToolCalls, c.Message.Content)
	}
	tc := c.Message.ToolCalls[0]
	if tc.ID == "" || tc.Type != "function" || tc.Function.Name != "propose_orders" {
		t.Fatalf("tool call %+v, want a function call of propose_orders with an id", tc)
	}
	validate(t, orders, tc.Function.Arguments)
	t.Logf("propose_orders(%s)", tc.Function.Arguments)

	msgs = append(msgs,
		map[string]any{"role": "assistant", "tool_calls": []any{tc}},
		map[string]any{"role": "tool", "tool_call_id": tc.ID, "content": `{"valid": true, "problems": []}`},
	)
	resp = chat(t, srv, map[string]any{
		"messages": msgs, "tools": tools, "max_tokens": 100,
		"response_format": forceTool("submit_orders", empty),
	})
	c = resp.Choices[0]
	if c.FinishReason != "tool_calls" || len(c.Message.ToolCalls) != 1 || c.Message.ToolCalls[0].Function.Name != "submit_orders" {
		t.Fatalf("after the tool result: finish_reason %q, tool_calls %+v, content %q; want submit_orders", c.FinishReason, c.Message.ToolCalls, c.Message.Content)
	}
	validate(t, empty, c.Message.ToolCalls[0].Function.Arguments)
}

// TestStop checks that Stop leaves nothing behind: no process of the group,
// no temporary directory, and that a second Stop is harmless.
func TestStop(t *testing.T) {
	srv, _ := startLocal(t)
	// Load the model so that a runner process exists in the group.
	chat(t, srv, map[string]any{"messages": []map[string]any{{"role": "user", "content": "Hi"}}, "max_tokens": 5})
	pid, dir := srv.PID(), srv.dir

	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("ollama serve (pid %d) still exists after Stop", pid)
	}
	if groupAlive(pid) {
		t.Errorf("process group %d still has processes after Stop", pid)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary directory %s: %v, want it removed", dir, err)
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

// TestForTestLocal checks that ForTest without TestMain and without
// OPENAI_* gives a working local endpoint of its own.
func TestForTestLocal(t *testing.T) {
	t.Setenv(EnvBaseURL, "")
	t.Setenv(EnvAPIKey, "")
	baseURL, key, model := ForTest(t)
	if key == "" || model == "" || !strings.HasPrefix(baseURL, "http://127.0.0.1:") {
		t.Fatalf("ForTest = %q, %q, %q", baseURL, key, model)
	}
	ids, err := ListModels(t.Context(), baseURL)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(ids, model+":latest") {
		t.Fatalf("%s/models = %v, want %s", baseURL, ids, model)
	}
}

func forceTool(name string, params map[string]any) map[string]any {
	return map[string]any{"type": "json_schema", "json_schema": map[string]any{
		"name": "tool_call", "strict": true,
		"schema": map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":      map[string]any{"type": "string", "enum": []string{name}},
				"arguments": params,
			},
			"required":             []string{"name", "arguments"},
			"additionalProperties": false,
		},
	}}
}

type chatResponse struct {
	Choices []struct {
		Message struct {
			Content   string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// chat posts a chat completion (temperature 0, fixed seed unless req says
// otherwise) and decodes the answer.
func chat(t *testing.T, srv *Server, req map[string]any) chatResponse {
	t.Helper()
	body := map[string]any{"model": srv.Model(), "temperature": 0, "seed": 7}
	for k, v := range req {
		body[k] = v
	}
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL()+"/chat/completions", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Authorization", "Bearer "+LocalAPIKey)
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /chat/completions: %s: %s", resp.Status, raw)
	}
	var out chatResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	if len(out.Choices) != 1 {
		t.Fatalf("%d choices: %s", len(out.Choices), raw)
	}
	return out
}

func validate(t *testing.T, schema map[string]any, doc string) {
	t.Helper()
	// The compiler wants the schema as encoding/json would decode it.
	raw, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("schema.json", decoded); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("schema.json")
	if err != nil {
		t.Fatal(err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatalf("not JSON: %v: %q", err, doc)
	}
	if err := s.Validate(v); err != nil {
		t.Fatalf("%q does not match the schema: %v", doc, err)
	}
}
