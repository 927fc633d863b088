package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// ollamaModel is a stand-in Ollama serving test-model with num_ctx ctx:
// its answers carry Ollama's fingerprint, and /api/show says the context.
func ollamaModel(t *testing.T, h openaitest.Handler, ctx int) *openaitest.Server {
	t.Helper()
	if h == nil {
		h = openaitest.FromSchema(nil)
	}
	srv := openaitest.New(t, h, openaitest.Ollama(map[string]any{
		"parameters": "num_ctx " + itoa(ctx),
		"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 2048},
	}))
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("ARBITER_LLM_MODEL", "test-model")
	return srv
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestValidateChecksTheServersContext: with no llm.context_tokens, validate
// asks the server the model's context and warns, naming phase and entity
// and the estimate, of every first-tick call that would not fit it; it
// still passes (exit 0: an estimate). A context with room, or a server
// that does not say, adds no warning; llm.context_tokens is checked as
// before, without asking.
func TestValidateChecksTheServersContext(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	srv := ollamaModel(t, nil, 2048)
	code, out, errOut := arbiter(t, "validate", sim)
	if code != 0 {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{
		"warning: resolution call of resolution:common at tick 1: its prompt is about",
		"estimated at 3 bytes a token",
		"more than the model's context of 2048 (the model's num_ctx (Ollama /api/show))",
		"warning: resolution call of resolution:wharf",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if len(srv.Shows()) == 0 || len(srv.Calls()) != 0 {
		t.Errorf("/api/show asked %d times, %d chat calls; want it asked, no call", len(srv.Shows()), len(srv.Calls()))
	}
	code, out, _ = arbiter(t, "validate", sim, "--json")
	var rep struct {
		OK       bool     `json:"ok"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || !rep.OK || len(rep.Warnings) < 5 {
		t.Errorf("validate --json: exit %d, %v, %+v; want ok with the calls that do not fit warned", code, err, rep)
	}

	ollamaModel(t, nil, 32768)
	if code, out, _ := arbiter(t, "validate", sim); code != 0 || strings.Contains(out, "warning") {
		t.Errorf("validate with room: exit %d\n%s", code, out)
	}
	fakeModel(t, nil) // not Ollama: /api/show is not found
	if code, out, _ := arbiter(t, "validate", sim); code != 0 || strings.Contains(out, "warning") {
		t.Errorf("validate against a server that does not say: exit %d\n%s", code, out)
	}
	srv = ollamaModel(t, nil, 2048)
	t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", "100000")
	if code, out, _ := arbiter(t, "validate", sim); code != 0 || strings.Contains(out, "warning") || len(srv.Shows()) != 0 {
		t.Errorf("validate with llm.context_tokens set: exit %d, /api/show asked %d times\n%s", code, len(srv.Shows()), out)
	}
}

// TestRunWarnsOfTruncatedPrompts: a run whose calls report prompt_tokens
// equal to the context the server gave (Ollama's /api/show) commits its
// ticks, warns once per phase and tick with the phase, an entity, the tick,
// the prompt tokens and the context, and status counts every such call,
// read from state.db (--json too).
func TestRunWarnsOfTruncatedPrompts(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	full := openai.Usage{PromptTokens: 2048, CompletionTokens: 0, TotalTokens: 2048}
	ollamaModel(t, func(c *openaitest.Call) openaitest.Reply {
		reply := openaitest.FromSchema(nil)(c)
		if c.SchemaName() == "MasterOutput" && strings.Contains(c.LastUserMessage(), "Tick 2 ") {
			return reply.WithUsage(full) // every resolution call of tick 2
		}
		return reply
	}, 2048)
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2")
	if code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	warnings := strings.Count(errOut, "filled the model's context")
	if warnings != 1 || !strings.Contains(errOut, "WARNING") ||
		!strings.Contains(errOut, "tick 2 resolution: the prompt of resolution:") ||
		!strings.Contains(errOut, "the model's context of 2048 (2048 prompt tokens)") ||
		!strings.Contains(errOut, "5 of 5 calls of the phase") {
		t.Errorf("run's warnings (%d):\n%s", warnings, errOut)
	}
	code, out, _ = arbiter(t, "status", sim)
	if code != 0 || !strings.Contains(out, "truncated prompts: 5 (the prompt filled the model's context") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
	code, out, _ = arbiter(t, "status", sim, "--json")
	var st struct {
		Truncated int `json:"truncated_prompts"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || code != 0 || st.Truncated != 5 {
		t.Errorf("status --json: exit %d, %v, truncated_prompts %d; want 5", code, err, st.Truncated)
	}
}

// TestChatWarnsOfTruncatedPrompts: the chronicle's model seat (a plain
// chat call) is checked as a narrative's calls are: its answer from a
// prompt that filled the context is kept, warned about and counted.
func TestChatWarnsOfTruncatedPrompts(t *testing.T) {
	cleanEnv(t)
	full := openai.Usage{PromptTokens: 4096, CompletionTokens: 5, TotalTokens: 4101}
	ollamaModel(t, openaitest.Always(openaitest.Content("Hello, co-author.").WithUsage(full)), 4096)
	sim := chronicleCopy(t)
	code, out, errOut := arbiterIn(t, "Hi\n", "chat", sim)
	if code != 0 || !strings.Contains(out, "Hello, co-author.") {
		t.Fatalf("chat: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "chat: the prompt of chronicle:") || !strings.Contains(errOut, "the model's context of 4096 (4096 prompt tokens)") {
		t.Errorf("chat's warning:\n%s", errOut)
	}
	if code, out, _ := arbiter(t, "status", sim); code != 0 || !strings.Contains(out, "truncated prompts: 1 ") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
}
