//go:build integration

package duel

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/localmodel"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
)

func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }

// TestIntegrationModelSeatPlaysATurn: a real model makes p1's choices for a
// turn (a build, and a charge declaration with the Guardian it is given).
// The local model writes nonsense: the test checks that the calls were made,
// recorded and either played or refused with the bot's fallback, and that
// the turn committed.
func TestIntegrationModelSeatPlaysATurn(t *testing.T) {
	url, key, modelName := localmodel.ForTest(t)
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Timeout = url, key, 2*time.Minute
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := newGame(t, map[string]any{"seed": 7, "seats": people("model", "bot")})
	st := g.Initial()
	give(st, P1, "Guardian", 5, 3)
	tb := openTable(t, t.TempDir(), g, client)
	g.Params = llm.Params{Model: modelName, MaxTokens: 200, Temperature: 0.01}
	r := &runner.Runner{Stepper: fixedStart{g, st}, Store: tb.st, Client: client}
	rep, err := r.Run(context.Background(), 1)
	if err != nil {
		t.Fatalf("turn: %v", err)
	}
	if rep.LastTick != 1 {
		t.Fatalf("last tick %d, want 1", rep.LastTick)
	}
	calls, err := tb.st.Calls(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	phases := map[string]int{}
	for _, c := range calls {
		phases[c.Phase]++
		t.Logf("%s %s: output %q raw %q error %q fallback %v", c.Phase, c.EntityKey, c.Output, c.Raw, c.Error, c.Fallback)
	}
	// One charges call per phase the seat can fire in: SIMULTANEOUS for the
	// Guardian, and FIRST_STRIKE too if it built an Interceptor.
	if phases[PhaseBuild] != 1 || phases[PhaseCharges] < 1 {
		t.Errorf("calls by phase %v, want one build call and a charges call", phases)
	}
	l := tb.log(t, 1)
	t.Logf("choices %q, rejected %q", l.Choices, l.Rejected)
	if len(l.Choices) == 0 {
		t.Errorf("no choice recorded")
	}
}
