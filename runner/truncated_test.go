package runner_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
	. "github.com/arbiter-sim/arbiter/runner"
	openai "github.com/sashabaranov/go-openai"
)

// TestTruncatedPromptsWarnedAndCounted: on a server that says (as Ollama
// does, through /api/show) that the model's context is 2048 tokens, the
// calls whose usage reports 2048 prompt tokens are truncated prompts: a
// run goes on, warns once for the phase of the tick they were in, naming
// the phase, the tick, an entity, its prompt tokens and the context, and
// stores them, counted in the summary status reads.
func TestTruncatedPromptsWarnedAndCounted(t *testing.T) {
	full := openai.Usage{PromptTokens: 2048, CompletionTokens: 0, TotalTokens: 2048}
	h := &harness{t: t, dbPath: t.TempDir() + "/state.db"}
	h.srv = openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
		reply := openaitest.FromSchema(nil)(c)
		if c.SchemaName() == "MasterOutput" && promptTick(c) == 2 && c.SchemaConst("location_id") != "cellar" {
			return reply.WithUsage(full) // garden and hall
		}
		return reply
	}, openaitest.Ollama(map[string]any{"parameters": "num_ctx 2048"}))
	r, st := h.runner(Config{})
	var logs texttest.Buffer
	r.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if _, err := r.Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("warnings:\n%s\nwant one, for tick 2's resolution phase", logs.String())
	}
	for _, want := range []string{"tick 2 resolution: the prompt of resolution:garden", "the model's context of 2048", "2048 prompt tokens", "2 of 3 calls of the phase", "level=WARN"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("warning %q lacks %q", lines[0], want)
		}
	}
	sum, err := st.Summary(context.Background())
	if err != nil || sum.TruncatedPrompts != 2 || sum.LastTick != 2 {
		t.Fatalf("summary: %d truncated prompts, last tick %d, %v; want 2 at tick 2", sum.TruncatedPrompts, sum.LastTick, err)
	}
	calls, err := st.Calls(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	var truncated []string
	for _, c := range calls {
		if c.PromptTruncated {
			truncated = append(truncated, c.EntityKey)
		}
	}
	if strings.Join(truncated, " ") != "resolution:garden resolution:hall" {
		t.Errorf("calls stored as truncated: %v; want garden's and hall's resolutions", truncated)
	}
	if shows := h.srv.Shows(); len(shows) != 1 {
		t.Errorf("/api/show asked %d times, want once for the model", len(shows))
	}
}
