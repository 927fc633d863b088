package phases

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	openai "github.com/sashabaranov/go-openai"
)

// The order in which a tick's calls are made is the scheduler's (round.go),
// not the model's: these tests run the runner and the narrative in a
// synctest bubble against scripted, a Client that answers in-process, so
// that a call made to wait (on a channel, or on the bubble's clock, which
// moves only once every other goroutine is blocked) decides the order, and
// no sleep has to guess how long a loaded machine takes. What the calls send
// over HTTP is the llm package's to test, with the in-process server.

// scripted is a Client answering in-process: answer, when set, makes the
// answer of each call, nil for a valid one made from the request's schema
// (as openaitest.FromSchema makes it); it may block.
type scripted struct {
	answer func(ctx context.Context, req llm.Request) *llm.Result

	mu  sync.Mutex
	log []step // what the calls did, in order
}

// step is a call made (answered false) or answered.
type step struct {
	req      llm.Request
	answered bool
}

func (s *scripted) Complete(ctx context.Context, req llm.Request) llm.Result {
	s.note(step{req: req})
	defer s.note(step{req: req, answered: true})
	if s.answer != nil {
		if res := s.answer(ctx, req); res != nil {
			res.Request = req
			return *res
		}
	}
	return validAnswer(req)
}

func (s *scripted) note(st step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = append(s.log, st)
}

func (s *scripted) CreateEachThen(ctx context.Context, n int, build func(int) (llm.Request, error), done func(int, llm.Result)) ([]llm.Result, error) {
	return nil, errors.New("scripted makes calls one at a time")
}

func (s *scripted) CompleteBatch(context.Context, string, []llm.Request, llm.BatchJob) ([]llm.Result, error) {
	return nil, errors.New("scripted makes no Batch API job")
}

func (s *scripted) Workers() int { return 8 }

// steps is what the calls did so far, in order.
func (s *scripted) steps() []step {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]step(nil), s.log...)
}

// validAnswer is the answer openaitest.FromSchema would give req.
func validAnswer(req llm.Request) llm.Result {
	c := &openaitest.Call{Request: openai.ChatCompletionRequest{ResponseFormat: &openai.ChatCompletionResponseFormat{
		Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
		JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
			Name: req.SchemaName, Schema: json.RawMessage(req.Schema), Strict: true}}}}
	v, err := openaitest.Instance(c, nil)
	if err != nil {
		return llm.Result{Request: req, Err: &llm.Error{Kind: llm.KindBadRequest, Message: err.Error(), Err: err}}
	}
	return answerOf(req, v)
}

// answerOf is a call of req answered v.
func answerOf(req llm.Request, v any) llm.Result {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return llm.Result{Request: req, Raw: string(b), Output: b, Attempts: 1}
}

// scriptedTick plays one tick of the test world with model, in a runner
// with cfg, a state.db of its own and logger (nil: none); onEvent, when
// set, sees every event. Call it inside a synctest bubble.
func scriptedTick(t *testing.T, model *scripted, cfg runner.Config, logger *slog.Logger, onEvent func(runner.Event)) *runner.Report {
	t.Helper()
	pr, err := prompts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	n := &Narrative{Sim: testWorld(), Prompts: pr, Model: model, Logger: logger,
		Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
	r := &runner.Runner{Stepper: n, Store: st, Config: cfg, OnEvent: onEvent}
	rep, err := r.Run(t.Context(), 1)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func isIntentionOf(req llm.Request, id string) bool { return req.EntityKey == IntentionKey(id) }

func isGameMasterOf(req llm.Request, loc string) bool { return req.EntityKey == ResolutionKey(loc) }

// TestGameMasterStartsWithItsCharacters: the hall's game master is asked
// while the garden's character is still deciding: a location's resolution
// waits for its own characters' intentions only, and each sees all of them.
func TestGameMasterStartsWithItsCharacters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		hallAsked := make(chan struct{})
		var waitedOut bool
		var hallPrompt string
		model := &scripted{}
		model.answer = func(ctx context.Context, req llm.Request) *llm.Result {
			switch {
			case isGameMasterOf(req, "hall"):
				hallPrompt = req.User
				close(hallAsked)
			case isIntentionOf(req, "cy"):
				select { // Cy (in the garden) decides only once the hall's game master is asked
				case <-hallAsked:
				case <-time.After(time.Hour): // only once nothing else can happen
					waitedOut = true
				}
				return answered(answerOf(req, map[string]any{"intention": "I dig by the roses."}))
			case req.Phase == PhaseIntention:
				return answered(answerOf(req, map[string]any{"intention": "I look for the spoon."}))
			}
			return nil
		}
		rep := scriptedTick(t, model, runner.Config{}, nil, nil)
		if waitedOut {
			t.Error("the hall's game master was not asked before Cy's intention came in: the phases did not overlap")
		}
		if strings.Count(hallPrompt, "I look for the spoon.") != 2 {
			t.Errorf("the hall's game master did not see both of its characters' intentions:\n%s", hallPrompt)
		}
		if len(rep.Ticks) != 1 || rep.Ticks[0].Calls != 6 || rep.Ticks[0].Failed != 0 {
			t.Errorf("tick %+v, want 6 calls, none failed", rep.Ticks)
		}
	})
}

func answered(r llm.Result) *llm.Result { return &r }

// gameMastersBeforeIntentions lists the game master calls made before the
// last intention call was answered.
func gameMastersBeforeIntentions(steps []step) []string {
	last := -1
	for i, s := range steps {
		if s.req.Phase == PhaseIntention && s.answered {
			last = i
		}
	}
	var early []string
	for _, s := range steps[:last+1] {
		if s.req.Phase == PhaseResolution && !s.answered {
			early = append(early, s.req.EntityKey)
		}
	}
	return early
}

// TestNoEarlyGameMasterUnderABudget: with a token budget or run.max_cost
// checked before each phase, no game master is asked before the intention
// phase has ended, though Cy's intention comes in last, long after the
// others.
func TestNoEarlyGameMasterUnderABudget(t *testing.T) {
	for name, cfg := range map[string]runner.Config{
		"token budget": {TokenBudget: 1_000_000},
		"max cost":     {MaxCost: 100, Prices: map[string]runner.Price{"m": {Prompt: 1, Completion: 1}}},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				model := &scripted{}
				model.answer = func(ctx context.Context, req llm.Request) *llm.Result {
					if isIntentionOf(req, "cy") {
						time.Sleep(time.Minute) // every other call that may start meanwhile has
					}
					return nil
				}
				scriptedTick(t, model, cfg, nil, nil)
				if early := gameMastersBeforeIntentions(model.steps()); len(early) > 0 {
					t.Errorf("asked before every intention was in, under a budget: %v", early)
				}
			})
		})
	}
}

// TestNoEarlyGameMasterAfterAFallback: a location one of whose characters
// fell back waits for the resolution phase, though Cy's intention comes in
// long after; and none starts before an intention call has succeeded.
func TestNoEarlyGameMasterAfterAFallback(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := &scripted{}
		model.answer = func(ctx context.Context, req llm.Request) *llm.Result {
			switch {
			case isIntentionOf(req, "bo"):
				return &llm.Result{Err: &llm.Error{Kind: llm.KindServer, Message: "down"}, Attempts: 1}
			case isIntentionOf(req, "cy"):
				time.Sleep(time.Minute) // every call that may start meanwhile has
			}
			return nil
		}
		rep := scriptedTick(t, model, runner.Config{}, nil, nil)
		early := gameMastersBeforeIntentions(model.steps())
		if slices.Contains(early, ResolutionKey("hall")) {
			t.Errorf("the hall (Bo fell back) was resolved before the intention phase ended: %v", early)
		}
		if !slices.Contains(early, ResolutionKey("cellar")) {
			t.Errorf("early game masters %v; want the cellar's (empty, and an intention call has succeeded)", early)
		}
		if rep.Ticks[0].Fallbacks != 1 {
			t.Errorf("tick %+v, want Bo's one fallback", rep.Ticks[0])
		}
	})
	synctest.Test(t, func(t *testing.T) {
		model := &scripted{}
		model.answer = func(ctx context.Context, req llm.Request) *llm.Result {
			if req.Phase == PhaseIntention && !isIntentionOf(req, "cy") {
				return &llm.Result{Err: &llm.Error{Kind: llm.KindServer, Message: "down"}, Attempts: 1}
			}
			if isIntentionOf(req, "cy") {
				time.Sleep(time.Minute) // every call that may start meanwhile has
			}
			return nil
		}
		scriptedTick(t, model, runner.Config{}, nil, nil)
		if early := gameMastersBeforeIntentions(model.steps()); len(early) > 0 {
			t.Errorf("asked before any intention call succeeded: %v", early)
		}
	})
}

// TestLateContext: a deadline set after the fact is reported, and a context
// made from it sees it without ending before it is cancelled; cancelled as
// a deadline it says so; the parent's cancellation ends it as a
// cancellation.
func TestLateContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		synctest.Wait()
		if c.Err() != nil || child.Err() != nil {
			t.Error("the context ended at its deadline before it was cancelled")
		}
		c.cancel(context.DeadlineExceeded)
		synctest.Wait()
		if child.Err() == nil {
			t.Fatal("cancelling did not end the child")
		}
		if c.Err() != context.DeadlineExceeded || interrupted(c) {
			t.Errorf("Err = %v, want DeadlineExceeded (not an interruption)", c.Err())
		}

		parent, cancel := context.WithCancel(t.Context())
		c2 := newLateContext(parent)
		defer c2.release()
		cancel()
		synctest.Wait()
		if c2.Err() != context.Canceled || !interrupted(c2) {
			t.Errorf("Err = %v, want Canceled (an interruption)", c2.Err())
		}
	})
}

// TestEarlyGameMasterLogsWithItsPhase: what a location's early game master
// call logs (here the hall's answer leaving Bo out, a fallback warning) is
// written when the resolution phase collects it, after the phase began,
// not while the intention phase is still running.
func TestEarlyGameMasterLogsWithItsPhase(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var lines []string
		note := func(s string) { mu.Lock(); lines = append(lines, s); mu.Unlock() }
		hallAnswered := make(chan struct{})
		model := &scripted{}
		model.answer = func(ctx context.Context, req llm.Request) *llm.Result {
			switch {
			case isGameMasterOf(req, "hall"):
				defer close(hallAnswered)
				return answered(answerOf(req, map[string]any{"tick": 1, "location_id": "hall",
					"characters": map[string]any{"ada": map[string]any{"memory_entry": "I cooked.", "location": "hall", "internal_state": "", "external_intent": ""}},
					"location":   map[string]any{"moment": nil, "description": nil}}))
			case isIntentionOf(req, "cy"):
				<-hallAnswered          // Cy decides once the hall's answer is in
				time.Sleep(time.Minute) // and has been read, logged and applied
			}
			return nil
		}
		logger := slog.New(slog.NewTextHandler(writerFunc(func(p []byte) (int, error) { note("LOG " + string(p)); return len(p), nil }), nil))
		scriptedTick(t, model, runner.Config{}, logger, func(ev runner.Event) { note(ev.String()) })
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
	})
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
		t.Errorf("the resolution phase with garden's prompt broken = %d outcomes, %v; want the template error and none", len(out), err)
	}
}

// TestGameMastersWaitForTheTickBeforeToBeStored: while tick 1 commits
// (its report held in OnTick for an hour of the bubble's clock, which
// passes only once nothing else can happen), tick 2 asks its intentions
// but none of its game masters: those are asked once tick 1 is stored, so a
// tick played ahead of a slow commit holds its intentions only.
func TestGameMastersWaitForTheTickBeforeToBeStored(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := &scripted{}
		pr, err := prompts.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		n := &Narrative{Sim: testWorld(), Prompts: pr, Model: model,
			Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
		const stored = "tick 1 stored"
		r := &runner.Runner{Stepper: n, Store: st, OnTick: func(tr runner.TickReport) {
			if tr.Tick == 1 {
				<-time.After(time.Hour)
				model.note(step{req: llm.Request{EntityKey: stored}})
			}
		}}
		rep, err := r.Run(t.Context(), 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Ticks) != 2 {
			t.Fatalf("%d ticks committed, want 2", len(rep.Ticks))
		}
		steps := model.steps()
		at := slices.IndexFunc(steps, func(s step) bool { return s.req.EntityKey == stored })
		var intentions, early []string
		for _, s := range steps[:max(at, 0)] {
			switch {
			case s.answered || s.req.Tick != 2:
			case s.req.Phase == PhaseIntention:
				intentions = append(intentions, s.req.EntityKey)
			case s.req.Phase == PhaseResolution:
				early = append(early, s.req.EntityKey)
			}
		}
		if at < 0 || len(intentions) != len(testWorld().Characters) {
			t.Errorf("tick 2's intentions asked while tick 1 committed: %v (stored at step %d); want every character's: the ticks no longer overlap", intentions, at)
		}
		if len(early) > 0 {
			t.Errorf("tick 2's game masters asked before tick 1 was stored: %v", early)
		}
	})
}
