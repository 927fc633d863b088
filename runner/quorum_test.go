package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// unauthorized is a 401 as OpenAI sends it for a wrong key.
var unauthorized = openaitest.Status(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")

// TestLostLastPhaseIsQuorumFailure: a narrative tick whose intentions were
// answered but whose every resolution call found the endpoint unusable
// (401) is dropped as quorum_failure, not committed with every location
// fallen back.
func TestLostLastPhaseIsQuorumFailure(t *testing.T) {
	h := newHarness(t, openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If:   func(c *openaitest.Call) bool { return c.SchemaName() == "MasterOutput" },
		Then: func(*openaitest.Call) openaitest.Reply { return unauthorized },
	}))
	r, st := h.runner(Config{})
	rep, err := r.Run(context.Background(), 2)
	var qe *QuorumError
	if !errors.As(err, &qe) || !errors.Is(err, llm.ErrAuth) {
		t.Fatalf("err = %v, want a QuorumError caused by the 401", err)
	}
	if qe.Tick != 1 || !strings.Contains(err.Error(), "every resolution call failed and the endpoint is unusable") {
		t.Errorf("error %q: want tick 1 and the phase named", err)
	}
	if rep.Stop != StopQuorum || lastTick(t, st) != 0 {
		t.Errorf("stop %q, last tick %d; want quorum_failure and nothing committed", rep.Stop, lastTick(t, st))
	}
	ev := h.eventLines()
	if !strings.Contains(ev, "error_type=quorum_failure") || strings.Contains(ev, "success=true") {
		t.Errorf("events: want quorum_failure and no recovery said to hold:\n%s", ev)
	}
}

// phased is a test-only kind whose tick is two phases of two model calls
// each, "first" then "last" (Final), so that the quorum rule is proved on the
// runner's seam whatever a kind's phases are. Its state is counter's.
type phased struct{ counter }

func (p *phased) Step(ctx context.Context, t *Tick, s, _ any) (any, error) {
	for _, name := range []string{"first", "last"} {
		ph := Phase{Name: name, Calls: 2, Strategy: "keep", Final: name == "last"}
		_, err := t.Phase(ctx, ph, func(ctx context.Context) ([]Call, error) {
			calls := make([]Call, 2)
			for i := range calls {
				res := p.client.Complete(ctx, llm.Request{EntityKey: fmt.Sprintf("%s:%d", name, i), Phase: name,
					Params: llm.Params{Model: "m"}, User: name, SchemaName: "S",
					Schema: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`)})
				calls[i] = Call{Result: &res, Fallback: res.Err != nil}
			}
			return calls, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s.(int) + 1, nil
}

// TestQuorumRuleEveryPhase: whichever phase finds the endpoint unusable on
// every call (401, quota, unreachable), the tick is dropped; a phase whose
// calls all fail for another reason (a 500) falls back and the tick
// commits, as long as some call of the tick succeeded.
func TestQuorumRuleEveryPhase(t *testing.T) {
	quota := openaitest.Status(429, "insufficient_quota", "insufficient_quota", "You exceeded your current quota")
	for _, tc := range []struct {
		name    string
		phase   string // the phase whose calls fail
		reply   openaitest.Reply
		quorum  bool
		errKind error
	}{
		{"first phase 401", "first", unauthorized, true, llm.ErrAuth},
		{"last phase 401", "last", unauthorized, true, llm.ErrAuth},
		{"last phase out of quota", "last", quota, true, llm.ErrQuota},
		{"last phase cut off", "last", openaitest.Disconnect(), true, llm.ErrConnection},
		{"last phase 500", "last", openaitest.Status(500, "server_error", "", "boom"), false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
				If:   openaitest.UserContains(tc.phase),
				Then: func(*openaitest.Call) openaitest.Reply { return tc.reply },
			}))
			st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			cfg := llm.DefaultConfig()
			cfg.BaseURL, cfg.APIKey, cfg.MaxAttempts = srv.URL, "k", 1
			client, err := llm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			r := &Runner{Stepper: &phased{counter{kind: "phased", client: client}}, Store: st, Client: client}
			_, err = r.Run(context.Background(), 1)
			var qe *QuorumError
			if got := errors.As(err, &qe); got != tc.quorum || tc.quorum && !errors.Is(err, tc.errKind) {
				t.Fatalf("err = %v; want quorum_failure %v caused by %v", err, tc.quorum, tc.errKind)
			}
			if want := map[bool]int{true: 0, false: 1}[tc.quorum]; r.LastTick() != want {
				t.Errorf("last tick %d, want %d", r.LastTick(), want)
			}
		})
	}
}
