package llm

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// usageOfPrompt is a server's usage report of a prompt of n tokens.
func usageOfPrompt(n int) openai.Usage {
	return openai.Usage{PromptTokens: n, CompletionTokens: 12, TotalTokens: n + 12}
}

// tinyShow is Ollama's /api/show of the bundled model: created with
// num_ctx 2048.
var tinyShow = map[string]any{
	"parameters": "num_ctx                        2048\nnum_thread                     1",
	"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 2048},
}

// TestPromptTruncatedAtTheConfiguredContext: with llm.context_tokens set,
// an answer whose prompt_tokens reach it is a truncated prompt (the server
// cut the prompt to its context), and so is one whose prompt and answer
// pass it (the server shifted the context, dropping the prompt's beginning,
// to go on writing); a prompt and answer that fill it exactly are not. The
// call itself succeeds either way.
func TestPromptTruncatedAtTheConfiguredContext(t *testing.T) {
	for _, tc := range []struct {
		prompt    int // the answer is 12 tokens
		truncated bool
	}{{2036, false}, {2037, true}, {2048, true}, {2100, true}} {
		srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer).WithUsage(usageOfPrompt(tc.prompt))))
		c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.ContextTokens = 2048 })
		res := c.Complete(context.Background(), testRequest("hello"))
		if res.Err != nil {
			t.Fatalf("prompt %d: %v", tc.prompt, res.Err)
		}
		if res.PromptTruncated != tc.truncated || res.ContextTokens != 2048 {
			t.Errorf("prompt %d: PromptTruncated %v, ContextTokens %d; want %v, 2048", tc.prompt, res.PromptTruncated, res.ContextTokens, tc.truncated)
		}
	}
}

// TestPromptTruncatedOnOllama: with no context configured, an answer from
// Ollama (system_fingerprint fp_ollama) has the client ask /api/show, once
// per model for all its calls, and a prompt of the model's num_ctx is
// truncated; a server that is not Ollama is never asked, and its context
// stays unknown.
func TestPromptTruncatedOnOllama(t *testing.T) {
	reply := openaitest.JSON(validAnswer).WithUsage(usageOfPrompt(2048))
	ollama := openaitest.New(t, openaitest.Always(reply), openaitest.Ollama(tinyShow))
	c, _ := newTestClient(t, ollama.URL, nil)
	results, err := c.CreateEach(context.Background(), 3, func(int) (Request, error) { return testRequest("hello"), nil })
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if res.Err != nil || !res.PromptTruncated || res.ContextTokens != 2048 {
			t.Errorf("call %d: err %v, PromptTruncated %v, ContextTokens %d; want a truncated prompt at 2048", i, res.Err, res.PromptTruncated, res.ContextTokens)
		}
	}
	if got := ollama.Shows(); !slices.Equal(got, []string{"test-model"}) {
		t.Errorf("/api/show asked for %v, want once for test-model", got)
	}

	other := openaitest.New(t, openaitest.Always(reply))
	c, _ = newTestClient(t, other.URL, nil)
	res := c.Complete(context.Background(), testRequest("hello"))
	if res.Err != nil || res.PromptTruncated || res.ContextTokens != 0 {
		t.Errorf("not Ollama: err %v, PromptTruncated %v, ContextTokens %d; want an unknown context", res.Err, res.PromptTruncated, res.ContextTokens)
	}
}

// TestPromptTruncatedWhenTheServerSaysSo: an answer with a top-level
// "truncated": true is a truncated prompt whatever the context; an answer
// that only mentions the word is not.
func TestPromptTruncatedWhenTheServerSaysSo(t *testing.T) {
	body := func(extra string) string {
		return `{"id":"x","object":"chat.completion","model":"test-model",` + extra +
			`"choices":[{"index":0,"message":{"role":"assistant","content":"{\"name\":\"truncated\",\"location\":\"garden\"}"},"finish_reason":"stop"}],` +
			`"usage":{"prompt_tokens":900,"completion_tokens":10,"total_tokens":910}}`
	}
	for _, tc := range []struct {
		body      string
		truncated bool
	}{{body(`"truncated":true,`), true}, {body(`"truncated":false,`), false}, {body(""), false}} {
		srv := openaitest.New(t, openaitest.Always(openaitest.Raw(200, "application/json", tc.body)))
		c, _ := newTestClient(t, srv.URL, nil)
		res := c.Complete(context.Background(), testRequest("hello"))
		if res.Err != nil || res.PromptTruncated != tc.truncated {
			t.Errorf("%s: err %v, PromptTruncated %v, want %v", tc.body, res.Err, res.PromptTruncated, tc.truncated)
		}
	}
}

// TestPromptTruncatedSurvivesARepair: a call whose first answer came from a
// truncated prompt stays marked when its repair's prompt fitted; chat and
// tool calls carry the mark too.
func TestPromptTruncatedSurvivesARepair(t *testing.T) {
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Content("not json").WithUsage(usageOfPrompt(1000)),
		openaitest.JSON(validAnswer).WithUsage(usageOfPrompt(900)),
		openaitest.Content("a reply").WithUsage(usageOfPrompt(1000)),
		openaitest.ToolCalls(openaitest.Tool("c1", "report", map[string]any{"city": "Oslo"})).WithUsage(usageOfPrompt(1000)),
	))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.ContextTokens = 1000 })
	res := c.Complete(context.Background(), testRequest("hello"))
	if res.Err != nil || res.Repairs != 1 || !res.PromptTruncated {
		t.Fatalf("err %v, repairs %d, PromptTruncated %v; want a repaired call marked truncated", res.Err, res.Repairs, res.PromptTruncated)
	}
	chat := c.Chat(context.Background(), ChatRequest{EntityKey: "chronicle:x", Phase: "chat", Params: Params{Model: "test-model"},
		Messages: []Message{{Role: "user", Content: "hi"}}})
	if chat.Err != nil || !chat.PromptTruncated || chat.ContextTokens != 1000 {
		t.Errorf("chat: err %v, PromptTruncated %v, ContextTokens %d", chat.Err, chat.PromptTruncated, chat.ContextTokens)
	}
	tools := c.CompleteTools(context.Background(), ToolRequest{EntityKey: "p1", Phase: "orders", Params: Params{Model: "test-model"},
		Messages: []Message{{Role: "user", Content: "go"}},
		Tools:    []Tool{{Name: "report", Parameters: []byte(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"],"additionalProperties":false}`)}}})
	if tools.Err != nil || !tools.PromptTruncated || tools.ContextTokens != 1000 {
		t.Errorf("tools: err %v, PromptTruncated %v, ContextTokens %d", tools.Err, tools.PromptTruncated, tools.ContextTokens)
	}
}

// TestPromptTruncatedOnReplay: a replayed answer is judged by the
// configured context alone (no endpoint to ask).
func TestPromptTruncatedOnReplay(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tape.jsonl")
	srv := openaitest.New(t, openaitest.Always(openaitest.JSON(validAnswer).WithUsage(usageOfPrompt(2048))), openaitest.Ollama(tinyShow))
	rec, tape := recordClient(t, srv.URL, path)
	if res := rec.Complete(context.Background(), testRequest("hello")); res.Err != nil || !res.PromptTruncated {
		t.Fatalf("recording: err %v, PromptTruncated %v", res.Err, res.PromptTruncated)
	}
	tape.Close()
	for _, tc := range []struct {
		context   int
		truncated bool
	}{{0, false}, {2048, true}} {
		tape, err := ReplayCassette(path, false)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := newTestClient(t, "", func(cfg *Config) { cfg.Cassette, cfg.ContextTokens = tape, tc.context })
		res := c.Complete(context.Background(), testRequest("hello"))
		if res.Err != nil || res.PromptTruncated != tc.truncated || res.ContextTokens != tc.context {
			t.Errorf("replay with context %d: err %v, PromptTruncated %v, ContextTokens %d", tc.context, res.Err, res.PromptTruncated, res.ContextTokens)
		}
	}
}

// TestContextWindow: what doctor and validate are told: the configured
// context without asking, an endpoint's own over the client's, Ollama's
// answer for the model the endpoint serves, and why it is unknown
// elsewhere.
func TestContextWindow(t *testing.T) {
	ctx := context.Background()
	ollama := openaitest.New(t, nil, openaitest.Ollama(tinyShow))
	c, _ := newTestClient(t, ollama.URL, nil)
	gone, cancel := context.WithCancel(ctx)
	cancel()
	if w, err := c.ContextWindow(gone, "", "test-model"); err == nil || w.Tokens != 0 {
		t.Errorf("asked with a context already done: %+v, %v; want an error", w, err)
	}
	w, err := c.ContextWindow(ctx, "", "test-model") // asked again: the first asker gave up
	if err != nil || w.Tokens != 2048 || !strings.Contains(w.Source, "num_ctx") {
		t.Errorf("Ollama: %+v, %v; want 2048 from num_ctx", w, err)
	}

	c, _ = newTestClient(t, ollama.URL, func(cfg *Config) { cfg.ContextTokens = 8192 })
	if w, err := c.ContextWindow(ctx, "", "test-model"); err != nil || w != (Window{8192, "llm.context_tokens"}) {
		t.Errorf("configured: %+v, %v", w, err)
	}
	c, _ = newTestClient(t, "", func(cfg *Config) {
		cfg.ContextTokens = 8192
		cfg.Endpoints = []Endpoint{{Name: "gpu", BaseURL: ollama.URL, ContextTokens: 4096, Model: "served-name"}}
	})
	if w, err := c.ContextWindow(ctx, "", "test-model"); err != nil || w != (Window{4096, "context_tokens of endpoint gpu"}) {
		t.Errorf("endpoint's own: %+v, %v", w, err)
	}
	c, _ = newTestClient(t, "", func(cfg *Config) {
		cfg.Endpoints = []Endpoint{{Name: "gpu", BaseURL: ollama.URL, Model: "served-name"}}
	})
	if w, err := c.ContextWindow(ctx, "", "test-model"); err != nil || w.Tokens != 2048 {
		t.Errorf("endpoint asked: %+v, %v", w, err)
	}
	if got := ollama.Shows(); !slices.Equal(got, []string{"test-model", "served-name"}) {
		t.Errorf("/api/show asked for %v, want test-model then the endpoint's served-name", got)
	}

	other := openaitest.New(t, nil)
	c, _ = newTestClient(t, other.URL, nil)
	if w, err := c.ContextWindow(ctx, "", "test-model"); err == nil || w.Tokens != 0 || !strings.Contains(err.Error(), "404") {
		t.Errorf("not Ollama: %+v, %v; want unknown, saying 404", w, err)
	}
	c, _ = newTestClient(t, "http://127.0.0.1:1/v1", nil)
	if w, err := c.ContextWindow(ctx, "", "test-model"); err == nil || w.Tokens != 0 || !strings.Contains(err.Error(), "/api/show") {
		t.Errorf("unreachable: %+v, %v; want unknown, naming /api/show", w, err)
	}
}

// TestOllamaWindow: /api/show's num_ctx wins; without it Ollama runs a
// model at its default num_ctx, or at the model's trained context when
// that is smaller; a body that is not JSON is an error.
func TestOllamaWindow(t *testing.T) {
	for _, tc := range []struct {
		body   string
		tokens int
		source string
	}{
		{`{"parameters":"stop \"x\"\nnum_ctx 8192","model_info":{"general.architecture":"llama","llama.context_length":131072}}`, 8192, "num_ctx"},
		{`{"model_info":{"general.architecture":"llama","llama.context_length":131072}}`, 2048, "llama.context_length 131072"},
		{`{"model_info":{"general.architecture":"gemma","gemma.context_length":512}}`, 512, "gemma.context_length"},
		{`{"parameters":"num_ctx many","model_info":{}}`, 2048, "default num_ctx"},
		{`{}`, 2048, "default num_ctx"},
		{`not json`, 0, ""},
	} {
		w, err := OllamaWindow([]byte(tc.body))
		if w.Tokens != tc.tokens || !strings.Contains(w.Source, tc.source) || (err != nil) != (tc.tokens == 0) {
			t.Errorf("%s: %+v, %v; want %d from %q", tc.body, w, err, tc.tokens, tc.source)
		}
	}
}

// FuzzOllamaWindow: whatever a server answers to /api/show, the context
// read from it is unknown with an error, or positive with its source.
func FuzzOllamaWindow(f *testing.F) {
	f.Add([]byte(`{"parameters":"num_ctx 2048","model_info":{"general.architecture":"llama","llama.context_length":2048}}`))
	f.Add([]byte(`{"model_info":{"general.architecture":"llama","llama.context_length":1e300}}`))
	f.Add([]byte(`{"parameters":"num_ctx -5\nnum_ctx 99999999999999999999"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		w, err := OllamaWindow(body)
		if (err == nil) != (w.Tokens > 0) || (err == nil && w.Source == "") {
			t.Fatalf("%q: %+v, %v", body, w, err)
		}
	})
}
