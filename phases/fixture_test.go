package phases

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

func testWorld() *world.Simulation { return worldtest.House() }

// testEnv returns an Env whose model is the in-process server answering with h,
// and the buffer its warnings are logged to.
func testEnv(t *testing.T, h openaitest.Handler) (Env, *openaitest.Server, *bytes.Buffer) {
	t.Helper()
	srv := openaitest.New(t, h)
	client, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "test", MaxAttempts: 1, Timeout: 5 * time.Second, BackoffBase: time.Millisecond, BackoffMax: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sim := testWorld()
	pr, err := prompts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &bytes.Buffer{}
	return Env{
		Sim:     sim,
		Prompts: pr,
		Model:   client,
		Params:  llm.Params{Model: "test-model", MaxTokens: 500},
		Logger:  slog.New(slog.NewTextHandler(logs, nil)),
	}, srv, logs
}

func mustClient(t *testing.T, url string, concurrency int) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{BaseURL: url, APIKey: "test", MaxAttempts: 1, Concurrency: concurrency, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fallbacks marks the entities whose outcome is a fallback.
func fallbacks[T any](outs []Outcome[T]) map[string]bool {
	m := map[string]bool{}
	for _, o := range outs {
		if o.Fallback {
			m[o.ID] = true
		}
	}
	return m
}

// fallbackIDs lists the entities whose outcome is a fallback, in order.
func fallbackIDs[T any](outs []Outcome[T]) []string {
	var ids []string
	for _, o := range outs {
		if o.Fallback {
			ids = append(ids, o.ID)
		}
	}
	return ids
}

// results are the calls of the outcomes, in order.
func results[T any](outs []Outcome[T]) []llm.Result {
	rs := make([]llm.Result, len(outs))
	for i, o := range outs {
		rs[i] = o.Call
	}
	return rs
}
