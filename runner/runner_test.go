package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/prompts"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

func testWorld() *world.Simulation { return worldtest.House() }

type harness struct {
	t      *testing.T
	srv    *openaitest.Server
	dbPath string
	// attempts is the client's llm.max_attempts; 0 means 1 (no retry).
	attempts int
	events   []Event
	mu       sync.Mutex
}

func newHarness(t *testing.T, h openaitest.Handler) *harness {
	return &harness{t: t, srv: openaitest.New(t, h), dbPath: filepath.Join(t.TempDir(), "state.db")}
}

// runner builds a fresh runner over a freshly opened store, as a new process would.
func (h *harness) runner(cfg Config) (*Runner, *store.Store) {
	h.t.Helper()
	st, err := store.Open(context.Background(), h.dbPath)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { st.Close() })
	ccfg := llm.DefaultConfig()
	ccfg.BaseURL, ccfg.APIKey = h.srv.URL, "test"
	ccfg.MaxAttempts, ccfg.BackoffBase, ccfg.BackoffMax, ccfg.Timeout = max(h.attempts, 1), time.Millisecond, time.Millisecond, 5*time.Second
	client, err := llm.New(ccfg)
	if err != nil {
		h.t.Fatal(err)
	}
	pr, err := prompts.New(h.t.TempDir())
	if err != nil {
		h.t.Fatal(err)
	}
	game := &phases.Narrative{Sim: testWorld(), Prompts: pr, Model: client,
		Intention:  llm.Params{Model: "test-model", MaxTokens: 400},
		Resolution: llm.Params{Model: "test-model", MaxTokens: 1500}}
	r := &Runner{Stepper: game, Store: st, Client: client, Config: cfg,
		OnEvent: func(ev Event) { h.mu.Lock(); h.events = append(h.events, ev); h.mu.Unlock() }}
	return r, st
}

// setClient makes r call through c.
func setClient(r *Runner, c *llm.Client) {
	r.Client = c
	r.Stepper.(*phases.Narrative).Model = c
}

// stateAt reads the narrative state committed at tick.
func stateAt(t *testing.T, r *Runner, st *store.Store, tick int) *world.State {
	t.Helper()
	s, err := r.Stepper.Load(context.Background(), st, tick)
	if err != nil {
		t.Fatal(err)
	}
	return s.(*world.State)
}

func (h *harness) eventLines() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var b strings.Builder
	for _, e := range h.events {
		b.WriteString(e.String() + "\n")
	}
	return b.String()
}

func lastTick(t *testing.T, st *store.Store) int {
	t.Helper()
	n, err := st.LastTick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunCommitsEveryTick(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{})
	var told []int
	r.OnTick = func(tr TickReport) {
		if last, _ := st.LastTick(context.Background()); last != tr.Tick {
			t.Errorf("OnTick(%d) before the tick committed (last committed %d)", tr.Tick, last)
		}
		told = append(told, tr.Tick)
	}
	rep, err := r.Run(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(told) != 2 || told[0] != 1 || told[1] != 2 {
		t.Errorf("OnTick told of ticks %v, want [1 2]", told)
	}
	if rep.FirstTick != 1 || rep.LastTick != 2 || len(rep.Ticks) != 2 || rep.Stop != StopCompleted {
		t.Fatalf("report %+v", rep)
	}
	if got := lastTick(t, st); got != 2 {
		t.Fatalf("last committed tick %d, want 2", got)
	}
	for _, tr := range rep.Ticks {
		if tr.Calls != 6 || tr.Failed != 0 || tr.Fallbacks != 0 {
			t.Errorf("tick %d: %+v, want 6 calls, none failed", tr.Tick, tr)
		}
		if want := 6 * openaitest.DefaultUsage.PromptTokens; tr.Usage.PromptTokens != want {
			t.Errorf("tick %d prompt tokens %d, want the server's %d", tr.Tick, tr.Usage.PromptTokens, want)
		}
		if tr.Commit <= 0 || tr.Commit > tr.Duration {
			t.Errorf("tick %d commit time %s, want more than 0 and within the tick's %s", tr.Tick, tr.Commit, tr.Duration)
		}
	}
	calls, err := st.Calls(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 6 {
		t.Errorf("tick 2 has %d call records, want 6", len(calls))
	}
	checkStoredRequests(t, h, calls)
	state := stateAt(t, r, st, 2)
	if m := state.Characters["ada"].Memory; len(m) != 2 || m[0].Tick != 1 || m[1].Tick != 2 {
		t.Errorf("ada's memory %+v, want entries of ticks 1 and 2", m)
	}
	events, err := st.Events(context.Background(), 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range events {
		if e.Tick == 1 {
			lines = append(lines, e.Line)
		}
	}
	want := []string{"EMIT: STATE_ENTRY state=INTENTION", "EMIT: STATE_ENTRY state=RESOLUTION", "EMIT: STATE_ENTRY state=APPLY", "EMIT: STATE_ENTRY state=COMMIT"}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("tick 1 events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// checkStoredRequests checks that each call's request, put in its stored
// form as soon as the call was over, reads back as the messages the server
// got.
func checkStoredRequests(t *testing.T, h *harness, calls []store.CallRecord) {
	t.Helper()
	sent := map[string]bool{}
	for _, c := range h.srv.Calls() {
		var msgs []store.Message
		for _, m := range c.Messages() {
			msgs = append(msgs, store.Message{Role: m.Role, Content: m.Content})
		}
		b, _ := json.Marshal(msgs)
		sent[string(b)] = true
	}
	for _, c := range calls {
		var msgs []store.Message
		if err := json.Unmarshal([]byte(c.Request), &msgs); err != nil || len(msgs) < 2 {
			t.Fatalf("stored request of %s: %q, %v", c.EntityKey, c.Request, err)
		}
		b, _ := json.Marshal(msgs)
		if !sent[string(b)] {
			t.Errorf("stored request of %s was not sent: %s", c.EntityKey, b)
		}
	}
}

// TestResumeNoTickLostOrDoubled runs 2 ticks, stops (a new process), runs 2
// more: ticks 1..4, each once, and the history of the first run is sent back
// in the second.
func TestResumeNoTickLostOrDoubled(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{})
	setClient(r, mustClientWithDepth(t, h.srv.URL, 2))
	if _, err := r.Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	st.Close()

	r2, st2 := h.runner(Config{})
	setClient(r2, mustClientWithDepth(t, h.srv.URL, 2))
	before := h.srv.CallCount()
	rep, err := r2.Run(context.Background(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if rep.FirstTick != 3 || rep.LastTick != 4 {
		t.Fatalf("second run ticks %d..%d, want 3..4", rep.FirstTick, rep.LastTick)
	}
	for tick := 1; tick <= 4; tick++ {
		calls, err := st2.Calls(context.Background(), tick)
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) != 6 {
			t.Errorf("tick %d has %d calls, want 6 (no tick doubled or lost)", tick, len(calls))
		}
	}
	// The first call of the resumed run carries the history of ticks 1 and 2.
	first := h.srv.Calls()[before]
	if n := len(first.Messages()); n != 2+2*2 {
		t.Errorf("resumed call sent %d messages, want system + 2 past exchanges + user = 6", n)
	}
	state := stateAt(t, r2, st2, 4)
	if len(state.Characters["cy"].Memory) != 4 {
		t.Errorf("cy has %d memories after 4 ticks, want 4", len(state.Characters["cy"].Memory))
	}
}

func mustClientWithDepth(t *testing.T, url string, depth int) *llm.Client {
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Depth, cfg.MaxAttempts = url, "test", depth, 1
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestQuorumFailureKeepsLastTick(t *testing.T) {
	h := newHarness(t, openaitest.Always(openaitest.Status(500, "server_error", "", "the GPU caught fire")))
	r, st := h.runner(Config{})
	rep, err := r.Run(context.Background(), 3)
	var qe *QuorumError
	if !errors.As(err, &qe) {
		t.Fatalf("err = %v, want a QuorumError", err)
	}
	if qe.Tick != 1 || !strings.Contains(err.Error(), "the GPU caught fire") {
		t.Errorf("error %q: want tick 1 and the server's message", err)
	}
	if rep.Stop != StopQuorum || lastTick(t, st) != 0 {
		t.Errorf("stop %q, last tick %d; want quorum_failure and nothing committed", rep.Stop, lastTick(t, st))
	}
	ev := h.eventLines()
	for _, want := range []string{
		`EMIT: TOOL_FAILURE tool=intention:ada error=`,
		`EMIT: RECOVERY_ATTEMPT strategy=fallback success=false`,
		`EMIT: STATE_ENTRY state=ERROR error_type=quorum_failure`,
		`EMIT: "Insufficient model data"`,
	} {
		if !strings.Contains(ev, want) {
			t.Errorf("events lack %q:\n%s", want, ev)
		}
	}
	if strings.Contains(ev, "strategy=fallback success=true") || strings.Contains(ev, "error_type=server") {
		t.Errorf("a resolution fallback is reported as a recovery although the tick was dropped:\n%s", ev)
	}
	// Why the run stopped is kept for status, with the tick's events.
	sum, err := st.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := sum.LastStop; s == nil || s.Tick != 1 || s.Reason != StopQuorum || !strings.Contains(s.Error, "the GPU caught fire") ||
		len(s.Events) == 0 || s.Events[len(s.Events)-1] != `EMIT: "Insufficient model data"` {
		t.Errorf("recorded stop %+v", sum.LastStop)
	}
}

func TestQuorumFailureUnreachableEndpointFailsFast(t *testing.T) {
	h := newHarness(t, nil)
	r, st := h.runner(Config{})
	ccfg := llm.DefaultConfig()
	ccfg.BaseURL, ccfg.MaxAttempts, ccfg.BackoffBase = "http://127.0.0.1:9/v1", 1, time.Millisecond
	c, _ := llm.New(ccfg)
	setClient(r, c)
	_, err := r.Run(context.Background(), 1)
	var qe *QuorumError
	if !errors.As(err, &qe) || !errors.Is(err, llm.ErrConnection) {
		t.Fatalf("err = %v, want a QuorumError caused by a connection error", err)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:9") {
		t.Errorf("error %q does not name the URL", err)
	}
	if strings.Contains(h.eventLines(), "state=RESOLUTION") {
		t.Error("resolution ran although every intention call found the endpoint unreachable")
	}
	if !strings.Contains(h.eventLines(), "strategy=fallback success=false") || strings.Contains(h.eventLines(), "success=true") {
		t.Errorf("recoveries of a dropped tick must say success=false:\n%s", h.eventLines())
	}
	if lastTick(t, st) != 0 {
		t.Error("a tick committed")
	}
}

func TestInterruptRollsBackTickInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	tick1 := make(chan struct{}) // closed once tick 1 is stored
	h := newHarness(t, openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If: func(c *openaitest.Call) bool { return c.SchemaName() == "MasterOutput" && promptTick(c) == 2 },
		Then: func(*openaitest.Call) openaitest.Reply {
			// Out of order, a location may ask its tick-2 resolution
			// before another has resolved tick 1: interrupt only once
			// tick 1 is committed, so the tick in flight is tick 2.
			<-tick1
			cancel()
			return openaitest.Hang()
		},
	}))
	r, st := h.runner(Config{})
	r.OnTick = func(tr TickReport) {
		if tr.Tick == 1 {
			close(tick1)
		}
	}
	rep, err := r.Run(ctx, 3)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v, want ErrInterrupted", err)
	}
	if rep.Stop != StopInterrupted || rep.LastTick != 1 || lastTick(t, st) != 1 {
		t.Errorf("stop %q, report last %d, store last %d; want interrupted with tick 1 kept", rep.Stop, rep.LastTick, lastTick(t, st))
	}
	if !strings.Contains(h.eventLines(), "tick 2 rolled back") {
		t.Errorf("no rollback event:\n%s", h.eventLines())
	}
	calls, _ := st.Calls(context.Background(), 2)
	if len(calls) != 0 {
		t.Errorf("tick 2 left %d call records", len(calls))
	}
	if sum, _ := st.Summary(context.Background()); sum.LastStop == nil || sum.LastStop.Reason != StopInterrupted || sum.LastStop.Tick != 2 {
		t.Errorf("recorded stop %+v, want interrupted at tick 2", sum.LastStop)
	}
}

// promptTick is the tick a narrative call's user prompt names: out of
// order, a location's first call of tick 2 may come before another
// location's last of tick 1, so arrival order does not tell the tick.
func promptTick(c *openaitest.Call) int {
	m := promptTickLine.FindStringSubmatch(c.LastUserMessage())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

var promptTickLine = regexp.MustCompile(`(?m)^(?:Tick|Resolve tick) (\d+)`)

func TestInterruptBeforeTickStopsCleanly(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r, st := h.runner(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := r.Run(ctx, 2)
	if !errors.Is(err, ErrInterrupted) || rep.LastTick != 0 || h.srv.CallCount() != 0 || lastTick(t, st) != 0 {
		t.Errorf("err %v, last %d, calls %d: want a clean stop before any call", err, rep.LastTick, h.srv.CallCount())
	}
}

func TestPhaseDeadlineUsesPartialResults(t *testing.T) {
	h := newHarness(t, openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If:   func(c *openaitest.Call) bool { return c.SchemaConst("location_id") == "cellar" },
		Then: openaitest.Always(openaitest.Hang()),
	}))
	r, st := h.runner(Config{PhaseTimeout: 500 * time.Millisecond})
	rep, err := r.Run(context.Background(), 1)
	if err != nil {
		t.Fatalf("a phase deadline must not stop the run: %v", err)
	}
	if lastTick(t, st) != 1 || rep.Ticks[0].Fallbacks != 1 {
		t.Errorf("last tick %d, fallbacks %d; want 1 and 1 (the cellar)", lastTick(t, st), rep.Ticks[0].Fallbacks)
	}
	ev := h.eventLines()
	// Seed 002's order, each once: the failure, the timeout handler, the
	// recovery.
	inOrder(t, ev,
		"EMIT: TOOL_FAILURE tool=resolution:cellar",
		"EMIT: STATE_ENTRY state=ERROR error_type=timeout",
		`EMIT: "Phase deadline reached, using partial results (2 of 3 calls answered)"`,
		"EMIT: RECOVERY_ATTEMPT strategy=fallback success=true")
	if n := strings.Count(ev, "error_type=timeout"); n != 1 {
		t.Errorf("the timeout handler ran %d times, want once:\n%s", n, ev)
	}
}

func TestBudgetExhaustedStopsCleanly(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	perTick := 6 * (openaitest.DefaultUsage.PromptTokens + openaitest.DefaultUsage.CompletionTokens)
	r, st := h.runner(Config{TokenBudget: perTick + 1})
	rep, err := r.Run(context.Background(), 5)
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a BudgetError", err)
	}
	// Seed 002 checks the budget before each phase with the phase's
	// expected cost: tick 2 would pass the budget, so it does not start.
	if rep.Stop != StopBudget || lastTick(t, st) != 1 || be.Used != perTick || be.Tick != 1 {
		t.Errorf("stop %q, last tick %d, used %d, tick %d; want budget_exhausted after tick 1 with %d used", rep.Stop, lastTick(t, st), be.Used, be.Tick, perTick)
	}
	if h.srv.CallCount() != 6 {
		t.Errorf("%d calls, want the 6 of tick 1 only", h.srv.CallCount())
	}
	if !strings.Contains(h.eventLines(), "error_type=budget_exhausted") {
		t.Errorf("no budget event:\n%s", h.eventLines())
	}
	// A new run on the spent budget stops before calling the model.
	r2, _ := h.runner(Config{TokenBudget: perTick + 1})
	before := h.srv.CallCount()
	if _, err := r2.Run(context.Background(), 1); !errors.As(err, &be) || h.srv.CallCount() != before {
		t.Errorf("resumed run: err %v, %d new calls; want BudgetError and none", err, h.srv.CallCount()-before)
	}
}

func TestFailedCallsAreEmittedAndStored(t *testing.T) {
	h := newHarness(t, openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
		If:   func(c *openaitest.Call) bool { return c.SchemaConst("location_id") == "cellar" },
		Then: openaitest.Always(openaitest.Refusal("I won't narrate cellars")),
	}))
	r, st := h.runner(Config{})
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	events, _ := st.Events(context.Background(), 1, 1)
	var all []string
	for _, e := range events {
		all = append(all, e.Line)
	}
	joined := strings.Join(all, "\n")
	want := "EMIT: TOOL_FAILURE tool=resolution:cellar error=\"model refused: I won't narrate cellars\" kind=refusal"
	i := strings.Index(joined, want)
	k := strings.Index(joined, "EMIT: RECOVERY_ATTEMPT strategy=fallback success=true")
	if i < 0 || k < i || strings.Contains(joined, "error_type=refusal") {
		t.Errorf("stored events lack failure then recovery, or make refusal an error type:\n%s", joined)
	}
	calls, _ := st.Calls(context.Background(), 1)
	var found bool
	for _, c := range calls {
		if c.EntityKey == "resolution:cellar" {
			found = true
			if !c.Fallback || c.ErrorKind != "refusal" || c.Raw != "" {
				t.Errorf("cellar call record %+v", c)
			}
		}
	}
	if !found {
		t.Error("no call record for the cellar")
	}
}

// inOrder fails unless every want is in text, each after the one before.
func inOrder(t *testing.T, text string, want ...string) {
	t.Helper()
	at := 0
	for _, w := range want {
		i := strings.Index(text[at:], w)
		if i < 0 {
			t.Errorf("no %q after byte %d of:\n%s", w, at, text)
			return
		}
		at += i + len(w)
	}
}

// Seed 002: log before recovering, always. A retry and a repair each emit
// TOOL_FAILURE and then RECOVERY_ATTEMPT; the model error's kind is detail
// on the TOOL_FAILURE line, never an error type.
func TestRetriesAndRepairsAreEmitted(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	h := newHarness(t, func(c *openaitest.Call) openaitest.Reply {
		loc := c.SchemaConst("location_id")
		mu.Lock()
		seen[loc]++
		n := seen[loc]
		mu.Unlock()
		switch {
		case loc == "cellar":
			return openaitest.Status(500, "server_error", "", "the GPU caught fire")
		case loc == "garden" && n == 1:
			return openaitest.Content("not JSON")
		}
		return openaitest.FromSchema(nil)(c)
	})
	h.attempts = 2
	r, _ := h.runner(Config{})
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ev := h.eventLines()
	inOrder(t, ev,
		"EMIT: TOOL_FAILURE tool=resolution:cellar", "kind=server",
		"EMIT: RECOVERY_ATTEMPT strategy=retry success=false",
		"EMIT: TOOL_FAILURE tool=resolution:cellar", "kind=server")
	inOrder(t, ev,
		"EMIT: TOOL_FAILURE tool=resolution:garden", "kind=invalid_json",
		"EMIT: RECOVERY_ATTEMPT strategy=repair success=true")
	inOrder(t, ev, "kind=server\n", "EMIT: RECOVERY_ATTEMPT strategy=fallback success=true")
	for _, bad := range []string{"error_type=server", "error_type=invalid_json"} {
		if strings.Contains(ev, bad) {
			t.Errorf("a model error kind is an error type (%s):\n%s", bad, ev)
		}
	}
}

// The budget is checked before each phase: a tick whose resolution would
// pass it stops after its intentions, not after paying for the resolution.
func TestBudgetCheckedBeforeEachPhase(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	perCall := openaitest.DefaultUsage.PromptTokens + openaitest.DefaultUsage.CompletionTokens
	r, st := h.runner(Config{TokenBudget: 6*perCall + 4*perCall})
	_, err := r.Run(context.Background(), 3)
	var be *BudgetError
	if !errors.As(err, &be) {
		t.Fatalf("err = %v, want a BudgetError", err)
	}
	// Tick 2: its intentions (3 calls) fit, its resolution (3 more) would not.
	if lastTick(t, st) != 1 || h.srv.CallCount() != 9 {
		t.Errorf("last tick %d, %d calls; want 1 and 9 (tick 2 stopped before its resolution)", lastTick(t, st), h.srv.CallCount())
	}
	inOrder(t, h.eventLines(), "EMIT: STATE_ENTRY state=INTENTION", "EMIT: STATE_ENTRY state=ERROR error_type=budget_exhausted", `EMIT: "Token budget exhausted"`)
}

// TestRunnersSharingAClient: one model client may serve several runs at
// once, as in an arena (with no history, depth 0, which entity keys alone
// would mix between runs); each run's requests are put in the stored form
// of its own state.db, and each reads back whole.
func TestRunnersSharingAClient(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	r1, st1 := h.runner(Config{})
	h2 := &harness{t: t, srv: h.srv, dbPath: filepath.Join(t.TempDir(), "state.db")}
	r2, st2 := h2.runner(Config{})
	shared := mustClientWithDepth(t, h.srv.URL, 0)
	for _, r := range []*Runner{r1, r2} {
		r.Client = shared
		r.Stepper.(*phases.Narrative).Model = shared
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, r := range []*Runner{r1, r2} {
		wg.Go(func() { _, errs[i] = r.Run(context.Background(), 3) })
	}
	wg.Wait()
	for i, st := range []*store.Store{st1, st2} {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i+1, errs[i])
		}
		for tick := 1; tick <= 3; tick++ {
			calls, err := st.Calls(context.Background(), tick)
			if err != nil || len(calls) != 6 {
				t.Fatalf("run %d, tick %d: %d calls, %v", i+1, tick, len(calls), err)
			}
			for _, c := range calls {
				var msgs []store.Message
				if err := json.Unmarshal([]byte(c.Request), &msgs); err != nil || len(msgs) < 2 {
					t.Errorf("run %d, tick %d, %s: request %q, %v", i+1, tick, c.EntityKey, c.Request, err)
				}
			}
		}
	}
}
