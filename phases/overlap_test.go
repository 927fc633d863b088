package phases

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// tickOf runs one narrative tick of the test world through a runner against
// h, with cfg; it returns the runner's report and what the store holds.
func tickOf(t *testing.T, h openaitest.Handler, cfg runner.Config) (*runner.Report, *store.Store, error) {
	t.Helper()
	srv := openaitest.New(t, h)
	r := narrativeRunner(t, srv.URL, nil)
	r.Config = cfg
	rep, err := r.Run(t.Context(), 1)
	return rep, r.Store, err
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

// TestGameMasterStartsWithItsCharacters: the hall's game master is asked while the
// garden's character is still deciding: a location's resolution waits for
// its own characters' intentions only, and each sees all of them.
func TestGameMasterStartsWithItsCharacters(t *testing.T) {
	hallAsked := make(chan struct{})
	var once sync.Once
	var waitedOut atomic.Bool
	var hallPrompt atomic.Value
	rep, _, err := tickOf(t, func(c *openaitest.Call) openaitest.Reply {
		switch {
		case c.SchemaName() == "MasterOutput" && c.SchemaConst("location_id") == "hall":
			hallPrompt.Store(c.LastUserMessage())
			once.Do(func() { close(hallAsked) })
		case c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "You are Cy."):
			select { // Cy (in the garden) decides only once the hall's game master is asked
			case <-hallAsked:
			case <-time.After(3 * time.Second):
				waitedOut.Store(true)
			}
			return openaitest.JSON(map[string]any{"intention": "I dig by the roses."})
		case c.SchemaName() == "IntentionResponse":
			return openaitest.JSON(map[string]any{"intention": "I look for the spoon."})
		}
		return openaitest.FromSchema(nil)(c)
	}, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if waitedOut.Load() {
		t.Error("the hall's game master was not asked before Cy's intention came in: the phases did not overlap")
	}
	if p, _ := hallPrompt.Load().(string); strings.Count(p, "I look for the spoon.") != 2 {
		t.Errorf("the hall's game master did not see both of its characters' intentions:\n%s", p)
	}
	if len(rep.Ticks) != 1 || rep.Ticks[0].Calls != 6 || rep.Ticks[0].Failed != 0 {
		t.Errorf("tick %+v, want 6 calls, none failed", rep.Ticks)
	}
}

// TestNoEarlyGameMasterUnderABudget: with a token budget or run.max_cost
// checked before each phase, no game master is asked before the intention phase
// has ended.
func TestNoEarlyGameMasterUnderABudget(t *testing.T) {
	for name, cfg := range map[string]runner.Config{
		"token budget": {TokenBudget: 1_000_000},
		"max cost":     {MaxCost: 100, Prices: map[string]runner.Price{"m": {Prompt: 1, Completion: 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			var intentionsLeft atomic.Int32
			intentionsLeft.Store(3)
			var early atomic.Bool
			_, _, err := tickOf(t, func(c *openaitest.Call) openaitest.Reply {
				if c.SchemaName() == "IntentionResponse" {
					if strings.Contains(c.SystemMessage(), "You are Cy.") {
						time.Sleep(100 * time.Millisecond) // the others' game masters would start meanwhile
					}
					defer intentionsLeft.Add(-1)
					return openaitest.JSON(map[string]any{"intention": "I wait."})
				}
				if intentionsLeft.Load() > 0 {
					early.Store(true)
				}
				return openaitest.FromSchema(nil)(c)
			}, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if early.Load() {
				t.Error("a game master was asked before every intention was in, under a budget")
			}
		})
	}
}

// TestNoEarlyGameMasterAfterAFallback: a location one of whose characters fell
// back waits for the resolution phase, and none starts before an intention
// call has succeeded.
func TestNoEarlyGameMasterAfterAFallback(t *testing.T) {
	var intentionsLeft atomic.Int32
	intentionsLeft.Store(3)
	var hallEarly atomic.Bool
	rep, _, err := tickOf(t, func(c *openaitest.Call) openaitest.Reply {
		if c.SchemaName() == "IntentionResponse" {
			defer intentionsLeft.Add(-1)
			switch {
			case strings.Contains(c.SystemMessage(), "You are Bo."):
				return openaitest.Status(500, "server_error", "", "down")
			case strings.Contains(c.SystemMessage(), "You are Cy."):
				time.Sleep(100 * time.Millisecond)
			}
			return openaitest.JSON(map[string]any{"intention": "I wait."})
		}
		if c.SchemaConst("location_id") == "hall" && intentionsLeft.Load() > 0 {
			hallEarly.Store(true)
		}
		return openaitest.FromSchema(nil)(c)
	}, runner.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if hallEarly.Load() {
		t.Error("the hall (Bo fell back) was resolved before the intention phase ended")
	}
	if rep.Ticks[0].Fallbacks != 1 {
		t.Errorf("tick %+v, want Bo's one fallback", rep.Ticks[0])
	}
}

// TestLateContext: a deadline set after the fact is reported, and a context
// made from it sees it without ending before it is cancelled; cancelled as
// a deadline it says so; the parent's cancellation ends it as a
// cancellation.
func TestLateContext(t *testing.T) {
	t.Parallel()
	c := newLateContext(t.Context())
	defer c.release()
	if _, ok := c.Deadline(); ok || c.Err() != nil {
		t.Fatal("a new late context has a deadline or has ended")
	}
	d := time.Now().Add(20 * time.Millisecond)
	c.setDeadline(d)
	child, cancelChild := context.WithTimeout(c, time.Minute)
	defer cancelChild()
	if got, ok := child.Deadline(); !ok || !got.Equal(d) {
		t.Errorf("a child's deadline = %v, %v; want the late one %v", got, ok, d)
	}
	time.Sleep(50 * time.Millisecond)
	if c.Err() != nil || child.Err() != nil {
		t.Error("the context ended at its deadline before it was cancelled")
	}
	c.cancel(context.DeadlineExceeded)
	select {
	case <-child.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the child")
	}
	if c.Err() != context.DeadlineExceeded || interrupted(c) {
		t.Errorf("Err = %v, want DeadlineExceeded (not an interruption)", c.Err())
	}

	parent, cancel := context.WithCancel(t.Context())
	c2 := newLateContext(parent)
	defer c2.release()
	cancel()
	select {
	case <-c2.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the parent's cancellation did not end the context")
	}
	if c2.Err() != context.Canceled || !interrupted(c2) {
		t.Errorf("Err = %v, want Canceled (an interruption)", c2.Err())
	}
}

// TestEarlyGameMasterLogsWithItsPhase: what a location's early game master call
// logs (here the hall's answer leaving Bo out, a fallback warning) is
// written when the resolution phase collects it, after the phase began,
// not while the intention phase is still running.
func TestEarlyGameMasterLogsWithItsPhase(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	note := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
	hallAnswered := make(chan struct{})
	var once sync.Once
	srv := openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
		switch {
		case c.SchemaName() == "MasterOutput" && c.SchemaConst("location_id") == "hall":
			defer once.Do(func() { close(hallAnswered) })
			return openaitest.JSON(map[string]any{"tick": 1, "location_id": "hall",
				"characters": map[string]any{"ada": map[string]any{"memory_entry": "I cooked.", "location": "hall", "internal_state": "", "external_intent": ""}},
				"location":   map[string]any{"moment": nil, "description": nil}})
		case c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "You are Cy."):
			select { // Cy decides once the hall's answer has been read
			case <-hallAnswered:
				time.Sleep(200 * time.Millisecond)
			case <-time.After(3 * time.Second):
			}
		}
		return openaitest.FromSchema(nil)(c)
	})
	logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { note("LOG " + string(p)); return len(p), nil }), nil))
	r := narrativeRunner(t, srv.URL, logger)
	r.OnEvent = func(ev runner.Event) { note(ev.String()) }
	if _, err := r.Run(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	resolution, warning := -1, -1
	for i, l := range lines {
		switch {
		case strings.Contains(l, "STATE_ENTRY state=RESOLUTION"):
			resolution = i
		case strings.Contains(l, "no update for bo"):
			warning = i
		}
	}
	if resolution < 0 || warning < resolution {
		t.Errorf("the hall's fallback warning at line %d, the resolution phase entered at line %d; want it after:\n%s",
			warning, resolution, strings.Join(lines, "\n"))
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// TestResolutionRequestThatCannotBeBuilt: one location whose prompt cannot
// be rendered fails the phase with the template's error (seed 004: a
// prompt render error propagates to the runner), and no outcomes come back.
func TestResolutionRequestThatCannotBeBuilt(t *testing.T) {
	t.Parallel()
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmpl := `{{if eq .Location.ID "garden"}}{{.Nope}}{{end}}Tick {{.Simulation.Tick}} in {{.Location.Name}}.`
	if err := os.WriteFile(filepath.Join(dir, "prompts", ResolutionUserTemplate), []byte(tmpl), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	env.Prompts = pr
	out, err := resolutionPhase(t.Context(), env, env.Sim.InitialState(), map[string]string{"ada": "I cook.", "bo": "I steal.", "cy": "I dig."})
	var te *prompts.TemplateError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "Nope") || out != nil {
		t.Errorf("Resolution with garden's prompt broken = %d outcomes, %v; want the template error and none", len(out), err)
	}
}
