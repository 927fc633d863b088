//go:build integration

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/store"
)

// TestIntegrationConquestModelSeat: a real model plays p1 of conquest-demo
// for a turn through the tool loop (get_state, propose_orders,
// submit_orders) against the bot. Its orders may be nonsense; the loop, the
// validation and the commit must hold: the turn commits, every call is
// stored with the model's message, and the seat either submitted or its
// pass is recorded.
func TestIntegrationConquestModelSeat(t *testing.T) {
	realModel(t)
	t.Setenv("ARBITER_GAMES_FORCE_TOOL_SHAPE", "true")
	t.Setenv("ARBITER_GAMES_MAX_TOKENS", "300")
	t.Setenv("ARBITER_GAMES_TEMPERATURE", "0.01")
	sim := gameCopy(t, "conquest-demo")
	yaml := filepath.Join(sim, "simulation.yaml")
	b, _ := os.ReadFile(yaml)
	os.WriteFile(yaml, []byte(strings.Replace(string(b), "p1: bot ", "p1: model ", 1)), 0o644)

	start := time.Now()
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "1", "--json")
	if code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	checkNoTruncation(t, sim, errOut)
	db, err := store.Open(context.Background(), filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	calls, err := db.Calls(context.Background(), 1)
	if err != nil || len(calls) == 0 {
		t.Fatalf("calls of turn 1: %d, %v", len(calls), err)
	}
	tools := 0
	for _, c := range calls {
		if c.EntityKey != "conquest:p1" || c.Phase != "orders" || c.Raw == "" {
			t.Errorf("call %+v: want conquest:p1, phase orders, the model's message stored", c)
		}
		if strings.Contains(c.Raw, `"tool_calls"`) {
			tools++
		}
	}
	_, exp, _ := arbiter(t, "export", sim, "--format", "json")
	var st struct {
		Turn   int `json:"turn"`
		Passed []struct {
			Player, Reason string
		} `json:"passed_turns"`
		Errors []struct{ Error string } `json:"order_errors"`
	}
	if err := json.Unmarshal([]byte(exp), &st); err != nil || st.Turn != 1 {
		t.Fatalf("export after turn 1: %v\n%s", err, exp)
	}
	t.Logf("turn 1 on the real model: %d calls (%d with tool calls), %d order errors, passed %v, %s",
		len(calls), tools, len(st.Errors), st.Passed, time.Since(start).Round(time.Millisecond))
	if tools == 0 {
		t.Error("the model made no tool call in any of its turns")
	}
}
