package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// counter is a kind whose state is a number: a move adds to it, a negative
// move is refused, a move of 13 fails, and a move of 7 makes one model call.
type counter struct {
	kind   string
	client *llm.Client
}

func (c *counter) Kind() string { return c.kind }

func (c *counter) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return 0, nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var n int
	return n, json.Unmarshal(raw, &n)
}

func (c *counter) Step(ctx context.Context, t *Tick, s, in any) (any, error) {
	move, _ := in.(int)
	switch {
	case move < 0:
		return nil, fmt.Errorf("move %d: moves are positive: %w", move, ErrRefused)
	case move == 13:
		return nil, errors.New("unlucky")
	case move == 11:
		_, err := t.Phase(ctx, Phase{Name: "ask", Calls: 1, Strategy: "none", Final: true}, func(ctx context.Context) ([]Call, error) {
			return nil, fmt.Errorf("schema of ask:1: %w", ErrSchemaInvalid)
		})
		if err != nil {
			return nil, err
		}
	case move == 7:
		_, err := t.Phase(ctx, Phase{Name: "ask", Calls: 1, Strategy: "none", Final: true}, func(ctx context.Context) ([]Call, error) {
			res := c.client.Complete(ctx, llm.Request{EntityKey: "ask:1", Phase: "ask", Params: llm.Params{Model: "m"},
				User: "hi", SchemaName: "S", Schema: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`)})
			return []Call{{Result: &res}}, nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s.(int) + move, nil
}

func (c *counter) Encode(rec *store.TickRecord, _, s any) error {
	b, err := json.Marshal(s)
	rec.State = b
	return err
}

func openCounter(t *testing.T, kind string, path string, h openaitest.Handler) (*Runner, *[]Event) {
	t.Helper()
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.MaxAttempts = openaitest.New(t, h).URL, "k", 1
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var events []Event
	return &Runner{Stepper: &counter{kind: kind, client: client}, Store: st, Client: client,
		OnEvent: func(e Event) { events = append(events, e) }}, &events
}

// TestTurns: moves commit one turn each; a refused move changes nothing and
// records no stop; a failing step is the DEFAULT handler's; a turn whose only
// call fails is dropped (quorum_failure) and the game goes on.
func TestTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	r, events := openCounter(t, "counter", path, openaitest.Always(openaitest.Status(500, "server_error", "", "down")))
	ctx := context.Background()
	for _, move := range []int{2, 3} {
		if _, err := r.Turn(ctx, move); err != nil {
			t.Fatal(err)
		}
	}
	if r.LastTick() != 2 || r.State() != 5 {
		t.Fatalf("after two moves: tick %d, state %v; want 2, 5", r.LastTick(), r.State())
	}
	if _, err := r.Turn(ctx, -1); !errors.Is(err, ErrRefused) {
		t.Errorf("refused move: err %v, want ErrRefused", err)
	}
	sum, _ := r.Store.Summary(ctx)
	if sum.LastStop != nil || r.LastTick() != 2 {
		t.Errorf("a refused move recorded a stop %+v or moved to tick %d", sum.LastStop, r.LastTick())
	}
	if _, err := r.Turn(ctx, 13); err == nil || !strings.Contains(err.Error(), "unlucky") {
		t.Errorf("failing step: err %v", err)
	}
	sum, _ = r.Store.Summary(ctx)
	if sum.LastStop == nil || sum.LastStop.Reason != StopError || sum.LastStop.Tick != 3 {
		t.Errorf("failing step recorded %+v, want an error stop at turn 3", sum.LastStop)
	}
	var qe *QuorumError
	if _, err := r.Turn(ctx, 7); !errors.As(err, &qe) {
		t.Errorf("turn whose call failed: err %v, want a QuorumError", err)
	}
	if _, err := r.Turn(ctx, 1); err != nil || r.LastTick() != 3 || r.State() != 6 {
		t.Errorf("the game goes on: err %v, tick %d, state %v; want nil, 3, 6", err, r.LastTick(), r.State())
	}
	var lines []string
	for _, e := range *events {
		lines = append(lines, e.String())
	}
	if got := strings.Join(lines, "\n"); !strings.Contains(got, "error_type=step_failed") || !strings.Contains(got, "error_type=quorum_failure") {
		t.Errorf("events:\n%s", got)
	}

	// Another process resumes where the game stands.
	r2, _ := openCounter(t, "counter", path, openaitest.FromSchema(nil))
	if err := r2.Open(ctx); err != nil || r2.LastTick() != 3 || r2.State() != 6 {
		t.Errorf("resumed: err %v, tick %d, state %v; want 3, 6", err, r2.LastTick(), r2.State())
	}
}

// TestOtherKindRefused: a run state written by one kind is not read as
// another's.
func TestOtherKindRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	r, _ := openCounter(t, "counter", path, openaitest.FromSchema(nil))
	if _, err := r.Turn(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	r2, _ := openCounter(t, "abacus", path, openaitest.FromSchema(nil))
	if err := r2.Open(context.Background()); !errors.Is(err, ErrStateMismatch) || !strings.Contains(err.Error(), "counter") {
		t.Errorf("Open by another kind = %v, want ErrStateMismatch naming counter", err)
	}
}

// Seed 002's schema_invalid: a schema that cannot be built, or that the
// server refuses, stops the run before (or instead of) paying for calls.
func TestSchemaInvalidStopsTheRun(t *testing.T) {
	refused := openaitest.Raw(400, "application/json",
		`{"error":{"message":"Invalid schema for response_format 'S'","type":"invalid_request_error","param":"response_format","code":null}}`)
	for _, tc := range []struct {
		name string
		move int
	}{{"cannot be built", 11}, {"refused by the server", 7}} {
		t.Run(tc.name, func(t *testing.T) {
			r, events := openCounter(t, "counter", filepath.Join(t.TempDir(), "state.db"), openaitest.Always(refused))
			_, err := r.Turn(context.Background(), tc.move)
			var se *SchemaError
			if !errors.As(err, &se) || !errors.Is(err, ErrSchemaInvalid) {
				t.Fatalf("err = %v, want a SchemaError", err)
			}
			var lines []string
			for _, e := range *events {
				lines = append(lines, e.String())
			}
			got := strings.Join(lines, "\n")
			if !strings.Contains(got, "EMIT: STATE_ENTRY state=ERROR error_type=schema_invalid\nEMIT: \"Invalid schema, cannot proceed\"") {
				t.Errorf("events:\n%s", got)
			}
			if r.LastTick() != 0 {
				t.Error("a tick committed")
			}
		})
	}
}

func TestRefusal(t *testing.T) {
	err := fmt.Errorf("message 3: %w", Refusal("no such message"))
	if !errors.Is(err, ErrRefused) || err.Error() != "message 3: no such message" {
		t.Errorf("Refusal: %v, is ErrRefused %v", err, errors.Is(err, ErrRefused))
	}
	if errors.Is(errors.New("no such message"), ErrRefused) {
		t.Error("a plain error is a refusal")
	}
}

// Seed 002's "Emit before recovery": a call that fails emits TOOL_FAILURE
// as it fails, before its retry is sent (the server sees the retry after
// OnEvent saw the failure), and RECOVERY_ATTEMPT once the retry has ended,
// not when the phase's calls have all returned; each once.
func TestEmitBeforeRecovery(t *testing.T) {
	var (
		mu      sync.Mutex
		events  []string
		atRetry string // the events OnEvent had seen when the retry reached the server
	)
	srv := openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
		if c.N == 1 {
			return openaitest.Status(500, "server_error", "", "the GPU caught fire")
		}
		mu.Lock()
		atRetry = strings.Join(events, "\n")
		mu.Unlock()
		return openaitest.FromSchema(nil)(c)
	})
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffMax = srv.URL, "k", 2, time.Millisecond, time.Millisecond
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := &Runner{Stepper: &counter{kind: "counter", client: client}, Store: st, Client: client,
		OnEvent: func(e Event) { mu.Lock(); events = append(events, e.String()); mu.Unlock() }}
	if _, err := r.Turn(context.Background(), 7); err != nil {
		t.Fatal(err)
	}
	failure := regexp.MustCompile(`^EMIT: TOOL_FAILURE tool=ask:1 error="[^"]*the GPU caught fire" kind=server$`)
	if lines := strings.Split(atRetry, "\n"); len(lines) != 2 || lines[0] != "EMIT: STATE_ENTRY state=ASK" || !failure.MatchString(lines[1]) {
		t.Errorf("events emitted when the retry reached the server:\n%s\nwant the state entry, then the failure", atRetry)
	}
	stored, err := st.Events(context.Background(), 1, 1)
	if err != nil || len(stored) != 4 {
		t.Fatalf("event log %+v (%v)", stored, err)
	}
	for i, want := range []string{"EMIT: STATE_ENTRY state=ASK", "", "EMIT: RECOVERY_ATTEMPT strategy=retry success=true", "EMIT: STATE_ENTRY state=COMMIT"} {
		if got := stored[i].Line; got != events[i] || (i == 1 && !failure.MatchString(got)) || (i != 1 && got != want) {
			t.Errorf("event %d: stored %q, shown %q, want %q (the failure once, then its retry)", i+1, got, events[i], want)
		}
	}
}
