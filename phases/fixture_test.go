package phases

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// testWorld: hall <-> garden -> cellar (empty at the start). Ada and Bo are in
// the hall, Cy in the garden.
func testWorld() *world.Simulation {
	return &world.Simulation{
		ID: "test", Kind: "narrative", Title: "Test", Premise: "A small house.",
		Characters: []*world.Character{
			{ID: "ada", Name: "Ada", Description: "a cook", Start: world.CharacterState{Location: "hall", InternalState: "calm", ExternalIntent: "cook"}},
			{ID: "bo", Name: "Bo", Description: "a thief", Start: world.CharacterState{Location: "hall", InternalState: "greedy", ExternalIntent: "steal"}},
			{ID: "cy", Name: "Cy", Description: "a gardener", Start: world.CharacterState{Location: "garden", InternalState: "tired", ExternalIntent: "dig"}},
		},
		Locations: []*world.Location{
			{ID: "cellar", Name: "Cellar", Description: "dark", Start: world.LocationState{Moment: "silent", Description: "barrels"}, Connections: []string{"garden"}},
			{ID: "garden", Name: "Garden", Description: "green", Start: world.LocationState{Moment: "dawn", Description: "roses"}, Connections: []string{"hall", "cellar"}},
			{ID: "hall", Name: "Hall", Description: "wide", Start: world.LocationState{Moment: "noon", Description: "a long table"}, Connections: []string{"garden"}},
		},
	}
}

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
