//go:build integration

package phases

import (
	"context"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/localmodel"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }

// realEnv is demo-sim's first tick on the real model: the env of its
// resolution calls (max_tokens maxTokens) and each character's external
// intent as its intention.
func realEnv(t *testing.T, maxTokens int) (Env, *world.State, map[string]string) {
	t.Helper()
	url, key, model := localmodel.ForTest(t)
	sim, err := worldtest.Load("../simulations/demo-sim")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(sim.Dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Timeout = url, key, 3*time.Minute
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	st := sim.InitialState()
	intentions := map[string]string{}
	for id, cs := range st.Characters {
		intentions[id] = cs.ExternalIntent
	}
	return Env{Sim: sim, Prompts: pr, Model: client, Params: llm.Params{Model: model, Temperature: 0.7, MaxTokens: maxTokens}}, st, intentions
}

// realResolution runs phase 2a of demo-sim's first tick on the real model,
// once for the three tests of seed 004 that read it.
func realResolution(t *testing.T) (*world.Simulation, *world.State, []Outcome[MasterOutput]) {
	t.Helper()
	env, st, intentions := realEnv(t, 2048) // phases.resolution.max_tokens' default
	res, err := resolutionPhase(context.Background(), env, st, intentions)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range results(res) {
		t.Logf("%s: attempts %d repairs %d err %v usage %+v latency %s", c.Request.EntityKey, c.Attempts, c.Repairs, c.Err, c.Usage, c.Latency.Round(time.Millisecond))
	}
	return env.Sim, st, res
}

// TestPhase2aRealLLM, TestPhase2aCharacterUpdatesValid and
// TestPhase2aRespectsWorldLogic are seed 004's integration tests, on one run.
func TestPhase2aRealLLM(t *testing.T) {
	sim, st, res := realResolution(t)
	t.Run("no location fell back", func(t *testing.T) {
		for _, o := range res {
			if o.Fallback {
				t.Errorf("%s fell back: %v", o.ID, o.Call.Err)
			}
			for _, e := range o.Skipped {
				t.Errorf("%s: %v", o.ID, e)
			}
		}
	})
	t.Run("all locations get a valid MasterOutput", func(t *testing.T) {
		for _, loc := range sim.Locations {
			out, ok := Values(res)[loc.ID]
			if !ok {
				t.Fatalf("%s: no output", loc.ID)
			}
			if out.LocationID != loc.ID || out.Tick != 1 {
				t.Errorf("%s: output for %q tick %d", loc.ID, out.LocationID, out.Tick)
			}
			if len(out.Characters) != len(st.CharactersAt(loc.ID)) {
				t.Errorf("%s: %d character updates for %d present", loc.ID, len(out.Characters), len(st.CharactersAt(loc.ID)))
			}
		}
	})
	t.Run("character updates valid", func(t *testing.T) {
		for loc, out := range Values(res) {
			for id, u := range out.Characters {
				if u.MemoryEntry == "" {
					t.Errorf("%s/%s: empty memory_entry", loc, id)
				}
			}
		}
	})
	t.Run("respects world logic", func(t *testing.T) {
		next, errs := Apply(sim, st, Values(res))
		if len(errs) != 0 {
			t.Errorf("apply rejected updates: %v", errs)
		}
		for id, cs := range next.Characters {
			if !sim.Reachable(st.Characters[id].Location, cs.Location) {
				t.Errorf("%s moved from %s to unreachable %s", id, st.Characters[id].Location, cs.Location)
			}
		}
	})
}

// TestPhase2aRealLLMCrowdSplit: with max_characters 1, each location of
// demo-sim holding two characters is resolved in two calls on the real
// model; every character gets its update from its own call, the location's
// update comes from call 1, and the tick applies. The budget is what the
// model writes for one character with its whole prompt: it fills every
// string to its maxLength, past 1,000 tokens.
func TestPhase2aRealLLMCrowdSplit(t *testing.T) {
	const budget = 2048
	env, st, intentions := realEnv(t, budget)
	env.MaxCharacters, env.MaxOutputTokens = 1, budget
	sim := env.Sim
	res, err := resolutionPhase(context.Background(), env, st, intentions)
	if err != nil {
		t.Fatal(err)
	}
	split := 0
	for _, o := range res {
		present := st.CharactersAt(o.ID)
		if len(present) > 1 {
			split++
			if len(o.Parts) != len(present) {
				t.Errorf("%s: %d characters resolved in %d calls, want one call each", o.ID, len(present), len(o.Parts))
			}
		}
		parts := o.Parts
		if parts == nil {
			parts = []Outcome[MasterOutput]{o}
		}
		for _, p := range parts {
			c := p.Call
			t.Logf("%s: attempts %d repairs %d err %v usage %+v max_tokens %d latency %s", c.Request.EntityKey, c.Attempts, c.Repairs, c.Err, c.Usage,
				c.Request.Params.MaxTokens, c.Latency.Round(time.Millisecond))
			if c.Request.Params.MaxTokens > budget {
				t.Errorf("%s asks for %d output tokens, more than llm.max_output_tokens %d", c.Request.EntityKey, c.Request.Params.MaxTokens, budget)
			}
			if p.Fallback {
				t.Errorf("%s fell back: %v", c.Request.EntityKey, c.Err)
			}
		}
		for _, e := range o.Skipped {
			t.Errorf("%s: %v", o.ID, e)
		}
		if len(o.Value.Characters) != len(present) {
			t.Errorf("%s: %d updates for %d present", o.ID, len(o.Value.Characters), len(present))
		}
	}
	if split < 1 {
		t.Fatal("no location of demo-sim holds two characters: nothing was split")
	}
	if _, errs := Apply(sim, st, Values(res)); len(errs) != 0 {
		t.Errorf("apply rejected updates: %v", errs)
	}
}
