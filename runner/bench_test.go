package runner_test

import (
	"context"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"path/filepath"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/prompts"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// BenchmarkTick runs demo-sim ticks against the in-process server.
//
//   - instant: the server answers at once, so the time is arbiter's own per
//     tick (prompts, schemas, validation, the SQLite commit): the engine's
//     overhead on top of the model.
//   - instant/concurrency=10000: the same at llm.concurrency's bound: what a
//     tick allocates follows its calls, not the limit (the allocations per
//     tick equal instant's).
//   - instant/lockstep: instant with every location waiting for the whole
//     world (run --lockstep).
//   - model=50ms: every call takes 50 ms, as a fast model server would; with
//     concurrency 1 a tick costs 11 calls x 50 ms, with 4 the calls of a phase
//     overlap. The ratio of the two is what parallel phases buy.
//
// go test -run XXX -bench Tick -benchtime 20x ./runner
func BenchmarkTick(b *testing.B) {
	for _, bc := range []struct {
		name        string
		delay       time.Duration
		concurrency int
		lockstep    bool
	}{
		{"instant", 0, 4, false},
		{"instant/concurrency=10000", 0, llm.MaxConcurrency, false},
		{"instant/lockstep", 0, 4, true},
		{"model=50ms/concurrency=1", 50 * time.Millisecond, 1, false},
		{"model=50ms/concurrency=4", 50 * time.Millisecond, 4, false},
		{"model=50ms/concurrency=8", 50 * time.Millisecond, 8, false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			h := openaitest.FromSchema(nil)
			if bc.delay > 0 {
				h = func(c *openaitest.Call) openaitest.Reply { return openaitest.FromSchema(nil)(c).WithDelay(bc.delay) }
			}
			r := benchRunner(b, openaitest.New(b, h), bc.concurrency)
			r.Stepper.(*phases.Narrative).Lockstep = bc.lockstep
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := r.Run(context.Background(), 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/tick")
		})
	}
}

func benchRunner(b *testing.B, srv *openaitest.Server, concurrency int) *Runner {
	b.Helper()
	sim, err := worldtest.Load("../simulations/demo-sim")
	if err != nil {
		b.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Concurrency = srv.URL, "bench", concurrency
	client, err := llm.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	pr, err := prompts.New(sim.Dir)
	if err != nil {
		b.Fatal(err)
	}
	params := llm.Params{Model: "bench", MaxTokens: 2048}
	game := &phases.Narrative{Sim: sim, Prompts: pr, Model: client, Intention: params, Resolution: params}
	return &Runner{Stepper: game, Store: st, Client: client}
}
