package phases

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
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

// intentionPhase is phase 1 of the whole world at once, as a round makes
// its calls: one per character, each prompt rendered by the worker that
// sends it, one outcome per character in the simulation's order, what
// each call logs written in that order. Only a prompt that cannot be
// rendered is an error.
func intentionPhase(ctx context.Context, env Env, st *world.State) ([]Outcome[string], error) {
	w := prompts.NewSnapshot(env.Sim, st)
	out := make([]Outcome[string], len(env.Sim.Characters))
	logs := make([][]heldRecord, len(out))
	_, err := env.Model.CreateEachThen(ctx, len(out), func(i int) (llm.Request, error) {
		return IntentionRequest(held(env, &logs[i]), w, env.Sim.Characters[i].ID)
	}, func(i int, res llm.Result) {
		out[i] = intentionOutcome(ctx, held(env, &logs[i]), st, env.Sim.Characters[i].ID, res)
	})
	flush(ctx, logs...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// resolutionPhase is phase 2a of the whole world at once, given the
// intentions: one game master call per location (one per group of a
// crowd), empty locations included, one outcome per location in the
// simulation's order, what each call logs written in that order. Only a
// prompt or schema that cannot be built is an error.
func resolutionPhase(ctx context.Context, env Env, st *world.State, intentions map[string]string) ([]Outcome[MasterOutput], error) {
	w := prompts.NewSnapshot(env.Sim, st)
	type call struct {
		loc *world.Location
		g   Group
	}
	var cs []call
	first := make([]int, len(env.Sim.Locations)+1)
	for i, l := range env.Sim.Locations {
		for _, g := range Groups(w.Present(l.ID), env.perCall()) {
			cs = append(cs, call{l, g})
		}
		first[i+1] = len(cs)
	}
	parts := make([]Outcome[MasterOutput], len(cs))
	logs := make([][]heldRecord, len(cs))
	_, err := env.Model.CreateEachThen(ctx, len(cs), func(i int) (llm.Request, error) {
		return partRequest(held(env, &logs[i]), w, cs[i].loc, IntentionsAt(intentions, w.Present(cs[i].loc.ID)), cs[i].g)
	}, func(i int, res llm.Result) {
		parts[i] = resolutionOutcome(ctx, held(env, &logs[i]), st, cs[i].loc, cs[i].g, res)
	})
	flush(ctx, logs...)
	if err != nil {
		return nil, err
	}
	outs := make([]Outcome[MasterOutput], len(env.Sim.Locations))
	for i, l := range env.Sim.Locations {
		outs[i] = mergeParts(st, l.ID, parts[first[i]:first[i+1]:first[i+1]])
	}
	return outs, nil
}

// held is env logging into *logs instead of its logger.
func held(env Env, logs *[]heldRecord) Env {
	env.Logger = slog.New(holdLog{next: env.logger().Handler(), held: logs})
	return env
}

// narrativeRunner is a runner of the test world's narrative against the
// server at url, with the default prompts, a state.db of its own and
// logger (nil: none).
func narrativeRunner(t *testing.T, url string, logger *slog.Logger) *runner.Runner {
	t.Helper()
	client := mustClient(t, url, 4)
	pr, err := prompts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := &Narrative{Sim: testWorld(), Prompts: pr, Model: client, Logger: logger,
		Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
	return &runner.Runner{Stepper: n, Store: st, Client: client}
}

// intentionSchema is the intention schema with the default bounds.
func intentionSchema() json.RawMessage { return slices.Clone(defaultSchemas().intention) }

// defaultResolutionSchema is the schema of a location's first game master
// call with the default bounds (answerSchemas.resolutionSchema).
func defaultResolutionSchema(tick int, locationID string, present, reachable []string) (json.RawMessage, error) {
	return defaultSchemas().resolutionSchema(tick, locationID, present, reachable, true)
}

// resolutionEnvelope is the envelope with the default bounds, a copy.
func resolutionEnvelope() (json.RawMessage, error) {
	return slices.Clone(defaultSchemas().envelope), nil
}

// resolutionTokens is the most tokens a game master's answer for n
// characters can take within the default bounds.
func resolutionTokens(n int) int { return DefaultAnswer().resolutionTokens(n) }

// perCallOf is perCall with the default bounds.
func perCallOf(maxCharacters, maxOutputTokens int) (int, error) {
	return perCall(DefaultAnswer(), maxCharacters, maxOutputTokens)
}
