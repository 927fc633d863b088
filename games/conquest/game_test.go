package conquest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
	openai "github.com/sashabaranov/go-openai"
)

// simulation is a conquest simulation.yaml's content in memory.
func simulation(settings map[string]any) *world.Simulation {
	return &world.Simulation{Dir: "sims/c", ID: "c", Kind: KindName, Title: "C", Settings: settings}
}

// newGame reads settings as Open does, without prompts (model seats then
// get an empty system prompt).
func newGame(t *testing.T, settings map[string]any) *Game {
	t.Helper()
	set, err := ReadSetup(simulation(settings))
	if err != nil {
		t.Fatal(err)
	}
	return &Game{ID: "c", Dir: "sims/c", Setup: set, prompts: map[string]string{}}
}

func botSettings(seed int) map[string]any {
	return map[string]any{"seed": seed, "max_turns": 50, "seats": map[string]any{"p1": SeatBot, "p2": SeatBot}}
}

// fixedStart is a game starting from st instead of a dealt map.
type fixedStart struct {
	*Game
	st *State
}

func (f fixedStart) Load(ctx context.Context, s *store.Store, tick int) (any, error) {
	if tick == 0 {
		c := f.st.clone()
		c.Turn = 0
		return c, nil
	}
	return f.Game.Load(ctx, s, tick)
}

// openRunner opens a runner of g on dir's state.db.
func openRunner(t *testing.T, dir string, g runner.Stepper, client *llm.Client) (*runner.Runner, *store.Store) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &runner.Runner{Stepper: g, Store: st, Client: client}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r, st
}

func modelClient(t *testing.T, h openaitest.Handler) (*openaitest.Server, *llm.Client) {
	t.Helper()
	srv := openaitest.New(t, h)
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.MaxAttempts = srv.URL, "k", 2
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, time.Millisecond
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// modelTable is board() played by a model seat p1 against the bot p2,
// through the runner and a real store.
func modelTable(t *testing.T, h openaitest.Handler, iterations int) (*openaitest.Server, *runner.Runner, *store.Store) {
	t.Helper()
	srv, client := modelClient(t, h)
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatModel, "p2": SeatBot}})
	g.Client, g.Params, g.MaxIterations = client, llm.Params{Model: "test-model", MaxTokens: 300}, iterations
	r, st := openRunner(t, t.TempDir(), fixedStart{g, board()}, client)
	return srv, r, st
}

func orderArgs(list ...map[string]any) map[string]any {
	if list == nil {
		list = []map[string]any{}
	}
	return map[string]any{"orders": list}
}

func ord(from, to string, ships any) map[string]any {
	return map[string]any{"from": from, "to": to, "ships": ships}
}

// toolResult is the content of the tool message answering call id in a
// request, "" when there is none.
func toolResult(c *openaitest.Call, id string) string {
	for _, m := range c.Messages() {
		if m.Role == "tool" && m.ToolCallID == id {
			return m.Content
		}
	}
	return ""
}

// §6.2.2: a model agent proposes, reads its errors, corrects and submits.
func TestModelProposesCorrectsAndSubmits(t *testing.T) {
	t.Parallel()
	srv, r, st := modelTable(t, openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("c1", ToolGetState, map[string]any{})),
		openaitest.ToolCalls(openaitest.Tool("c2", ToolPropose, orderArgs(ord("A", "B", 7), ord("A", "C", 5)))),
		openaitest.ToolCalls(openaitest.Tool("c3", ToolPropose, orderArgs(ord("A", "B", 7), ord("A", "C", 3)))),
		openaitest.ToolCalls(openaitest.Tool("c4", ToolSubmit, orderArgs(ord("A", "B", 7), ord("A", "C", 3)))),
		openaitest.Content("a fifth call: the turn should have ended"),
	), 0)
	rep, err := r.Run(context.Background(), 1)
	if err != nil || rep.LastTick != 1 || rep.Stop != runner.StopCompleted {
		t.Fatalf("run: %+v, %v", rep, err)
	}
	calls := srv.Calls()
	if len(calls) != 4 {
		t.Fatalf("%d model calls, want 4", len(calls))
	}
	first := calls[0]
	if !strings.Contains(first.LastUserMessage(), "Turn 1 of 50. You are p1.") {
		t.Errorf("first user message: %q", first.LastUserMessage())
	}
	var names []string
	for _, tl := range first.Request.Tools {
		names = append(names, tl.Function.Name)
	}
	if strings.Join(names, ",") != "get_state,propose_orders,submit_orders" {
		t.Errorf("tools %v", names)
	}
	if got := toolResult(calls[1], "c1"); !strings.Contains(got, `"you":"p1"`) {
		t.Errorf("get_state answered %q", got)
	}
	if got, want := toolResult(calls[2], "c2"), `{"ok":false,"errors":["Order 0: Total ships from A (12) exceeds available (10)"]}`; got != want {
		t.Errorf("first proposal answered %s, want %s", got, want)
	}
	if got := toolResult(calls[3], "c3"); got != `{"ok":true}` {
		t.Errorf("corrected proposal answered %s", got)
	}
	s := r.State().(*State)
	var sent []string
	for _, f := range fleetsOf(s, "p1") {
		sent = append(sent, fmt.Sprintf("%s->%s:%d", f.From, f.To, f.Ships))
	}
	if strings.Join(sent, " ") != "A->B:7 A->C:3" || s.Star("A").Ships["p1"] != 0+HomeProduction {
		t.Errorf("p1 fleets %v, A %v", sent, s.Star("A").Ships)
	}
	if len(s.ErrorsOf("p1", 1)) != 0 || len(s.Passed) != 0 {
		t.Errorf("errors %+v, passed %+v", s.Errors, s.Passed)
	}
	recs, err := st.Calls(context.Background(), 1)
	if err != nil || len(recs) != 4 {
		t.Fatalf("stored calls: %d, %v", len(recs), err)
	}
	for _, c := range recs {
		if c.Phase != PhaseOrders || c.EntityKey != "conquest:p1" || c.Error != "" || c.Raw == "" {
			t.Errorf("stored call %+v", c)
		}
	}
	if !strings.Contains(recs[3].Raw, ToolSubmit) {
		t.Errorf("last stored call's raw answer %q lacks the submit", recs[3].Raw)
	}
}

// A model that never submits: the turn passes after MaxIterations model
// turns, the pass is recorded and the tick commits.
func TestModelNeverSubmitsPasses(t *testing.T) {
	t.Parallel()
	srv, r, st := modelTable(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c", ToolPropose, orderArgs(ord("A", "B", 3))))), 3)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	if n := srv.CallCount(); n != 3 {
		t.Errorf("%d model calls, want 3 (MaxIterations)", n)
	}
	s := r.State().(*State)
	want := Pass{Turn: 1, Player: "p1", Reason: "no submit_orders in 3 model turns: the turn passes with no orders"}
	if len(s.Passed) != 1 || s.Passed[0] != want {
		t.Errorf("passed %+v, want %+v", s.Passed, want)
	}
	if len(fleetsOf(s, "p1")) != 0 {
		t.Errorf("a passed turn sent fleets: %+v", s.Fleets)
	}
	if recs, err := st.Calls(context.Background(), 1); err != nil || len(recs) != 3 {
		t.Errorf("stored calls %d, %v", len(recs), err)
	}
	// The pass survives a reload from state.db.
	g2 := r.Stepper.(fixedStart)
	loaded, err := g2.Load(context.Background(), st, 1)
	if err != nil || len(loaded.(*State).Passed) != 1 {
		t.Errorf("reloaded passes: %+v, %v", loaded, err)
	}
}

// Seed 002's budget_exhausted ("Builder used all tool calls"): a model
// seat that spends its model turns without submitting is a failure like any
// other. The event log, as it happens, says STATE_ENTRY state=ERROR
// error_type=budget_exhausted and the handler's message, then, the turn
// committed, RECOVERY_ATTEMPT strategy=pass_turn success=true; the turn's
// story tells the same lines.
func TestBudgetExhaustedModelSeatPasses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, r, st := modelTable(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c", ToolGetState, map[string]any{}))), 2)
	var mu sync.Mutex
	var shown []string
	r.OnEvent = func(e runner.Event) { mu.Lock(); shown = append(shown, e.String()); mu.Unlock() }
	if _, err := r.Run(ctx, 1); err != nil || r.LastTick() != 1 {
		t.Fatalf("run: %v, last tick %d", err, r.LastTick())
	}
	want := []string{
		"EMIT: STATE_ENTRY state=ORDERS",
		"EMIT: STATE_ENTRY state=ERROR error_type=budget_exhausted",
		`EMIT: "Model turn budget exhausted: p1 passes its turn (no submit_orders in 2 model turns)"`,
		"EMIT: RECOVERY_ATTEMPT strategy=pass_turn success=true",
		"EMIT: STATE_ENTRY state=APPLY",
		"EMIT: STATE_ENTRY state=COMMIT",
	}
	stored, err := st.Events(ctx, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	for _, e := range stored {
		logged = append(logged, e.Line)
	}
	if !slices.Equal(logged, want) || !slices.Equal(shown, want) {
		t.Errorf("event log\n%s\nshown\n%s\nwant\n%s", strings.Join(logged, "\n"), strings.Join(shown, "\n"), strings.Join(want, "\n"))
	}
	var story session.Story
	if err := r.Stepper.(fixedStart).Story(ctx, st, 1, 1, session.StoryQuery{}, &story); err != nil || len(story.Turns) != 1 {
		t.Fatalf("story %+v, %v", story, err)
	}
	lines := story.Turns[0].Lines
	if i := slices.Index(lines, want[1]); i < 0 || !slices.Equal(lines[i:], want[1:4]) || !slices.Contains(lines, "passed: p1: no submit_orders in 2 model turns: the turn passes with no orders") {
		t.Errorf("story of turn 1:\n%s\nwant the pass and the lines\n%s", strings.Join(lines, "\n"), strings.Join(want[1:4], "\n"))
	}
}

// A model that answers in words instead of calling a tool is told to call
// one, and may still submit.
func TestModelWithoutToolCallIsNudged(t *testing.T) {
	t.Parallel()
	srv, r, _ := modelTable(t, openaitest.Sequence(
		openaitest.Content("I will attack B."),
		openaitest.ToolCalls(openaitest.Tool("c", ToolSubmit, orderArgs(ord("A", "B", 3)))),
	), 0)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	calls := srv.Calls()
	if len(calls) != 2 || !strings.HasPrefix(calls[1].LastUserMessage(), "Call a tool") {
		t.Fatalf("%d calls; second user message %q", len(calls), calls[len(calls)-1].LastUserMessage())
	}
	if f := fleetsOf(r.State().(*State), "p1"); len(f) != 1 || f[0].Ships != 3 {
		t.Errorf("fleets %+v", f)
	}
}

// Every model call fails (500s) and the model is the only model seat: no
// call of the tick succeeded, so the tick is not committed (quorum_failure).
func TestModelCallFailsQuorum(t *testing.T) {
	t.Parallel()
	srv, r, st := modelTable(t, openaitest.Always(openaitest.Status(500, "server_error", "", "down")), 0)
	rep, err := r.Run(context.Background(), 1)
	var qe *runner.QuorumError
	if !errors.As(err, &qe) || rep.Stop != runner.StopQuorum || rep.LastTick != 0 {
		t.Fatalf("run: %+v, %v; want a quorum failure", rep, err)
	}
	if n := srv.CallCount(); n != 2 {
		t.Errorf("%d requests, want 2 (one call, MaxAttempts 2)", n)
	}
	if last, err := st.LastTick(context.Background()); err != nil || last != 0 {
		t.Errorf("last stored tick %d, %v", last, err)
	}
}

// Ships of the wrong type in a tool call are errors of their orders in the
// proposal's answer and in the executed turn; the valid order executes.
func TestModelWrongShipTypes(t *testing.T) {
	t.Parallel()
	bad := orderArgs(ord("A", "B", "7"), ord("A", "C", 7.5), ord("A", "B", nil), ord("A", "C", "seven"), ord("D", "B", 2), ord("A", "C", 7.0))
	srv, r, _ := modelTable(t, openaitest.Sequence(
		openaitest.ToolCalls(openaitest.Tool("p", ToolPropose, bad)),
		openaitest.ToolCalls(openaitest.Tool("s", ToolSubmit, bad)),
	), 0)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`Order 0: A -> B with "7" ships: Ships must be a whole number, got "7"`,
		`Order 1: A -> C with 7.5 ships: Ships must be a whole number, got 7.5`,
		`Order 2: A -> B with null ships: Ships must be a whole number, got null`,
		`Order 3: A -> C with "seven" ships: Ships must be a whole number, got "seven"`,
	}
	answer := []string{
		`Order 0: Ships must be a whole number, got "7"`,
		`Order 1: Ships must be a whole number, got 7.5`,
		`Order 2: Ships must be a whole number, got null`,
		`Order 3: Ships must be a whole number, got "seven"`,
	}
	if got := toolResult(srv.Calls()[1], "p"); got != jsonOf(t, ProposeResult{Errors: answer}) {
		t.Errorf("propose answered %s", got)
	}
	s := r.State().(*State)
	if got := errorTexts(s.ErrorsOf("p1", 1)); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded:\n%s", strings.Join(got, "\n"))
	}
	if f := fleetsOf(s, "p1"); len(f) != 2 || f[0].From != "D" || f[1].Ships != 7 {
		t.Errorf("fleets %+v, want D -> B and the 7.0 ships A -> C", f)
	}
}

// Tool calls that are not what the tools take are answered with an error,
// and the conversation goes on.
func TestModelBadToolCalls(t *testing.T) {
	t.Parallel()
	srv, r, _ := modelTable(t, openaitest.Sequence(
		openaitest.ToolCalls(
			openaitest.Tool("a", "launch_missiles", map[string]any{}),
			openaitest.Tool("b", ToolSubmit, map[string]any{"orders": "all of them"}),
			openaitest.Tool("c", ToolPropose, "{not json"),
			openaitest.Tool("d", ToolSubmit, map[string]any{}),
		),
		openaitest.ToolCalls(openaitest.Tool("e", ToolSubmit, orderArgs())),
	), 0)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	c := srv.Calls()[1]
	for id, want := range map[string]string{
		"a": "launch_missiles", "b": "not a JSON array", "c": "arguments must be", "d": `\"orders\" is missing`,
	} {
		if got := toolResult(c, id); !strings.Contains(got, want) || !strings.HasPrefix(got, `{"ok":false,"errors":[`) {
			t.Errorf("call %s answered %s, want an error containing %s", id, got, want)
		}
	}
	if s := r.State().(*State); len(s.Passed) != 0 || len(fleetsOf(s, "p1")) != 0 {
		t.Errorf("empty submit: passed %+v fleets %+v", s.Passed, s.Fleets)
	}
}

// Two games from the same seed played by bots are the same turn by turn.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	play := func(seed int) string {
		g := newGame(t, botSettings(seed))
		r, _ := openRunner(t, t.TempDir(), g, nil)
		if _, err := r.Run(context.Background(), 12); err != nil {
			t.Fatal(err)
		}
		return jsonOf(t, exported(t, g, r.State()))
	}
	a, b := play(42), play(42)
	if a != b {
		t.Fatalf("same seed, different games:\n%s\n%s", a, b)
	}
	if c := play(43); c == a {
		t.Error("seeds 42 and 43 played the same game")
	}
}

// A game resumed from state.db goes on exactly as one played in one go:
// the random generator's state is stored with each turn.
func TestResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	first := Move{Orders: map[string][]Order{"p1": orders(t, `[{"from":"Q","to":"B","ships":1}]`)}}
	once := newGame(t, botSettings(5))
	r, _ := openRunner(t, t.TempDir(), once, nil)
	if _, err := r.Turn(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Run(ctx, 5); err != nil {
		t.Fatal(err)
	}
	want := r.State().(*State)

	dir := t.TempDir()
	g := newGame(t, botSettings(5))
	r1, st1 := openRunner(t, dir, g, nil)
	if _, err := r1.Turn(ctx, first); err != nil {
		t.Fatal(err)
	}
	if _, err := r1.Run(ctx, 2); err != nil {
		t.Fatal(err)
	}
	mid := r1.State().(*State)
	st1.Close()
	g2 := newGame(t, botSettings(5))
	r2, _ := openRunner(t, dir, g2, nil)
	if r2.LastTick() != 3 || jsonOf(t, r2.State()) != jsonOf(t, mid) {
		t.Fatalf("reopened at tick %d:\n%s\nwant\n%s", r2.LastTick(), jsonOf(t, r2.State()), jsonOf(t, mid))
	}
	if _, err := r2.Run(ctx, 3); err != nil {
		t.Fatal(err)
	}
	got := r2.State().(*State)
	if a, b := jsonOf(t, exported(t, g2, got)), jsonOf(t, exported(t, once, want)); a != b {
		t.Fatalf("resumed game differs:\n%s\nwant\n%s", a, b)
	}
	if len(got.Errors) == 0 || got.Errors[0].Error != "Order 0: Q -> B with 1 ships: Origin star Q does not exist" {
		t.Errorf("order errors after resume: %+v", got.Errors)
	}
	// The test means something only if turns 4 to 6 drew from the generator.
	if jsonOf(t, mid.Rand) == jsonOf(t, got.Rand) {
		t.Error("no random draw in turns 4 to 6: the test proves nothing")
	}
}

// The runner stops once the game is over, and a further turn is refused.
func TestGameEnds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGame(t, map[string]any{"seed": 3, "max_turns": 40, "stars": 4, "width": 4, "height": 4,
		"seats": map[string]any{"p1": SeatBot, "p2": SeatBot}})
	r, _ := openRunner(t, t.TempDir(), g, nil)
	rep, err := r.Run(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	s := r.State().(*State)
	if rep.Stop != runner.StopGameOver || s.Result == nil || rep.Ended != s.Result.String() || rep.LastTick != s.Result.Turn || s.Turn > 40 {
		t.Fatalf("report %+v, result %+v", rep, s.Result)
	}
	t.Logf("ended: %s", rep.Ended)
	// Bots only ever make the errors a changed state causes: a star lost,
	// or ships lost in combat before the orders execute.
	for _, e := range s.Errors {
		if !strings.Contains(e.Reason, "does not control origin star") && !strings.HasPrefix(e.Reason, "Not enough ships at") {
			t.Errorf("bot order error: %s", e.Error)
		}
	}
	if _, err := r.Turn(ctx, nil); !errors.Is(err, ErrGameOver) || !errors.Is(err, runner.ErrRefused) {
		t.Errorf("a turn after the end: %v", err)
	}
	if rep, err := r.Run(ctx, 1); err != nil || rep.Stop != runner.StopGameOver || len(rep.Ticks) != 0 {
		t.Errorf("run after the end: %+v, %v", rep, err)
	}
}

func TestStepRefusals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	person := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatPerson, "p2": SeatBot}})
	r, _ := openRunner(t, t.TempDir(), person, nil)
	tests := []struct {
		name string
		in   any
		want error
	}{
		{"a person's seat needs a move", nil, ErrNeedPerson},
		{"orders of a stranger", Move{Orders: map[string][]Order{"p9": {}}}, runner.ErrRefused},
		{"not a move", "SEND 3 FROM A TO B", runner.ErrRefused},
	}
	for _, tt := range tests {
		if _, err := r.Turn(ctx, tt.in); !errors.Is(err, tt.want) || !errors.Is(err, runner.ErrRefused) {
			t.Errorf("%s: %v, want %v", tt.name, err, tt.want)
		}
	}
	if r.LastTick() != 0 {
		t.Fatalf("a refused move committed tick %d", r.LastTick())
	}
	if _, err := r.Turn(ctx, Move{Orders: map[string][]Order{"p1": {}}}); err != nil || r.LastTick() != 1 {
		t.Errorf("the person's pass: %v, tick %d", err, r.LastTick())
	}
	model := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatModel, "p2": SeatBot}})
	rm, _ := openRunner(t, t.TempDir(), model, nil)
	if _, err := rm.Run(ctx, 1); err == nil || !strings.Contains(err.Error(), "needs a model client") {
		t.Errorf("a model seat without a client: %v", err)
	}
}

// A state.db written for other players does not load.
func TestLoadMismatch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r, st := openRunner(t, dir, newGame(t, botSettings(1)), nil)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	st.Close()
	other := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatBot, "p3": SeatBot}})
	st2, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	r2 := &runner.Runner{Stepper: other, Store: st2}
	if err := r2.Open(context.Background()); !errors.Is(err, runner.ErrStateMismatch) {
		t.Errorf("open: %v, want ErrStateMismatch", err)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(simulation(map[string]any{"max_turns": 9, "seats": map[string]any{"p1": SeatModel, "p2": SeatBot, "p3": SeatBot}}), pr)
	if err != nil {
		t.Fatal(err)
	}
	if p := g.prompts["p1"]; !strings.Contains(p, "p1") || !strings.Contains(p, "p2, p3") || !strings.Contains(p, "9") {
		t.Errorf("p1's prompt:\n%s", p)
	}
	if !g.NeedsModel("") || g.NeedsModel("p1") || g.Seat("p2") != SeatBot || g.Seat("p9") != "" || g.Kind() != KindName {
		t.Errorf("game %+v", g)
	}
	sim := simulation(nil)
	sim.Kind = "duel"
	if _, err := Open(sim, pr); err == nil || !strings.Contains(err.Error(), "simulation.yaml") {
		t.Errorf("a duel opened as a conquest: %v", err)
	}
}

// §6.2.1: a person submits invalid orders: the turn commits with the
// errors recorded (in the state and as rows of state.db), the valid order
// executes, the game goes on, and the next turn starts with the display.
func TestPersonInvalidOrdersGameContinues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatPerson, "p2": SeatBot}})
	r, st := openRunner(t, t.TempDir(), fixedStart{g, board()}, nil)
	move := Move{Orders: map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":17},{"from":"F","to":"G","ships":3},{"from":"D","to":"B","ships":2}]`)}}
	tr, err := r.Turn(ctx, move)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Order 0: A -> B with 17 ships: Not enough ships at A: have 10, need 17",
		"Order 1: F -> G with 3 ships: Player p1 does not control origin star F",
	}
	if tr.ApplyErrors != 2 {
		t.Errorf("tick report %+v, want 2 apply errors", tr)
	}
	s := r.State().(*State)
	if got := errorTexts(s.ErrorsOf("p1", 1)); strings.Join(got, "\n") != strings.Join(want, "\n") || len(fleetsOf(s, "p1")) != 1 {
		t.Fatalf("errors %q, fleets %+v", got, s.Fleets)
	}
	recs, err := st.Records(ctx, Stream, 10, 1)
	if err != nil || len(recs) != 2 || !strings.Contains(string(recs[1].Body), `"error":"Order 1: F -> G with 3 ships: Player p1 does not control origin star F"`) {
		t.Fatalf("stored records %v (%d), %v", recs, len(recs), err)
	}
	if block := ErrorBlock(s, "p1", false); !strings.Contains(block, "\nOrder skipped: 17 ships from A to B\n  Reason: Not enough ships at A: have 10, need 17\n") {
		t.Errorf("the next turn's display:\n%s", block)
	}
	if _, err := r.Turn(ctx, Move{Orders: map[string][]Order{"p1": {}}}); err != nil || r.LastTick() != 2 {
		t.Fatalf("the game did not go on: %v", err)
	}
	if ErrorBlock(r.State().(*State), "p1", false) != "" {
		t.Error("a pass shows last turn's errors again")
	}
}

// Seed 000's _log_player_order_failure: a set rejected whole is recorded
// with 'order': 'ALL', in the state.db row and in what export prints, and
// reads back as the whole set; a record of one order whose element was the
// string "ALL", and a whole-set record written with null before, read back
// as they were meant.
func TestLogPlayerOrderFailureOrderALL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatPerson, "p2": SeatBot}})
	dir := t.TempDir()
	r, st := openRunner(t, dir, fixedStart{g, board()}, nil)
	move := Move{Orders: map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`)}}
	if _, err := r.Turn(ctx, move); err != nil {
		t.Fatal(err)
	}
	recs, err := st.Records(ctx, Stream, 10, 1)
	if err != nil || len(recs) != 1 || !strings.Contains(string(recs[0].Body), `"index":-1,"order":"ALL","kind":"over_commitment"`) {
		t.Fatalf("stored record %v, %v", recs, err)
	}
	exported, err := g.Export(ctx, st, r.State())
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.MarshalIndent(exported, "", "  ")
	if err != nil || !strings.Contains(string(out), `"order": "ALL",`) {
		t.Fatalf("export lacks \"order\": \"ALL\" (%v):\n%s", err, out)
	}
	r2, _ := openRunner(t, dir, fixedStart{g, board()}, nil)
	if e := r2.State().(*State).Errors; len(e) != 1 || !e[0].All() || e[0].Order != nil {
		t.Errorf("the record read back as %+v", e)
	}
	for _, tt := range []struct {
		record string
		all    bool
	}{
		{`{"turn":4,"player":"p1","index":-1,"order":null,"error":"Invalid orders: x"}`, true},
		{`{"turn":4,"player":"p1","index":0,"order":"ALL","error":"Order 0: Invalid order object \"ALL\""}`, false},
	} {
		var back OrderError
		if err := json.Unmarshal([]byte(tt.record), &back); err != nil || back.All() != tt.all || (back.Order == nil) != tt.all {
			t.Errorf("%s read back as %+v (%v)", tt.record, back, err)
		}
		if !tt.all && back.Order.String() != `"ALL"` {
			t.Errorf("%s: the element reads back as %s", tt.record, back.Order)
		}
	}
}

// Two model seats play at once; when one's calls fail and the other's
// succeed, the turn commits and the failed seat's turn passes.
func TestTwoModelSeats(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		p2     openaitest.Handler
		passed string // p2's pass reason prefix, "" when it submitted
	}{
		{"both submit", openaitest.Sequence(openaitest.ToolCalls(openaitest.Tool("s", ToolSubmit, orderArgs(ord("F", "G", 2))))), ""},
		{"p2's calls fail", openaitest.Always(openaitest.Status(500, "server_error", "", "down")), "model call 1 failed: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := openaitest.Match(tt.p2, openaitest.Route{If: openaitest.UserContains("You are p1."),
				Then: openaitest.Sequence(openaitest.ToolCalls(openaitest.Tool("s", ToolSubmit, orderArgs(ord("A", "B", 3)))))})
			_, client := modelClient(t, h)
			g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatModel, "p2": SeatModel}})
			g.Client, g.Params = client, llm.Params{Model: "test-model", MaxTokens: 300}
			r, st := openRunner(t, t.TempDir(), fixedStart{g, board()}, client)
			if _, err := r.Run(context.Background(), 1); err != nil {
				t.Fatal(err)
			}
			s := r.State().(*State)
			if f := fleetsOf(s, "p1"); len(f) != 1 || f[0].To != "B" {
				t.Errorf("p1 fleets %+v", f)
			}
			if tt.passed == "" {
				if f := fleetsOf(s, "p2"); len(f) != 1 || f[0].To != "G" || len(s.Passed) != 0 {
					t.Errorf("p2 fleets %+v, passed %+v", f, s.Passed)
				}
			} else if len(s.Passed) != 1 || s.Passed[0].Player != "p2" || !strings.HasPrefix(s.Passed[0].Reason, tt.passed) || len(fleetsOf(s, "p2")) != 0 {
				t.Errorf("passed %+v, p2 fleets %+v", s.Passed, fleetsOf(s, "p2"))
			}
			recs, err := st.Calls(context.Background(), 1)
			if err != nil || len(recs) != 2 {
				t.Fatalf("stored calls %d, %v", len(recs), err)
			}
			for _, c := range recs {
				if failed := c.EntityKey == "conquest:p2" && tt.passed != ""; failed != (c.Error != "") || failed != c.Fallback {
					t.Errorf("stored call %s: error %q fallback %v", c.EntityKey, c.Error, c.Fallback)
				}
			}
		})
	}
}

func TestStatus(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"max_turns": 9, "seats": map[string]any{"p1": SeatPerson, "p2": SeatBot}})
	s := next(t, board(), map[string][]Order{"p1": orders(t, `[{"from":"Q","to":"B","ships":1}]`)})
	s.MaxTurns = 9
	s.Passed = []Pass{{Turn: 4, Player: "p1", Reason: "r"}}
	fields, err := g.Status(context.Background(), nil, s)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fields {
		got[f.Key] = f.Value
	}
	want := map[string]string{
		"turn": "4 of 9",
		"p1":   "person · 2 stars, 21 ships · 1 order error · 1 turn passed",
		"p2":   "bot · 1 star, 10 ships · 0 order errors · 0 turns passed",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if !strings.Contains(got["map"], "A (0,0) production 4, p1: p1 14 ships") || got["result"] != "" {
		t.Errorf("fields %q", got)
	}
	s.Result = &Result{Turn: 4, Winner: "p1", Reason: "r"}
	fields, _ = g.Status(context.Background(), nil, s)
	if fields[1].Key != "result" || fields[1].Value != "p1 won at turn 4 (r)" {
		t.Errorf("fields %+v", fields[:2])
	}
}

// The first call of a model seat's turn: the system prompt (left out when
// empty: Ollama refuses a message with no content), then the view and last
// turn's errors in the seed's display.
func TestOpeningRequest(t *testing.T) {
	t.Parallel()
	s := next(t, board(), map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":70}]`)})
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatModel, "p2": SeatBot}})
	req := g.OpeningRequest(s, "p1", 5)
	if len(req.Messages) != 1 || req.Messages[0].Role != "user" {
		t.Fatalf("messages %+v, want the user message alone", req.Messages)
	}
	user := req.Messages[0].Content
	for _, want := range []string{"Turn 5 of 50. You are p1.", `"you":"p1"`, "ORDER ERRORS FROM LAST TURN",
		"Order skipped: 70 ships from A to B\n  Reason: Not enough ships at A: have 10, need 70\n  Suggestion: Reduce ships to 10 or split across multiple turns",
		"call submit_orders"} {
		if !strings.Contains(user, want) {
			t.Errorf("user message lacks %q:\n%s", want, user)
		}
	}
	if req.EntityKey != "conquest:p1" || req.Phase != PhaseOrders || req.Tick != 5 || len(req.Tools) != 3 || req.Choice != "auto" {
		t.Errorf("request %+v", req)
	}
	g.prompts["p1"] = "You command p1."
	if req := g.OpeningRequest(s, "p1", 5); len(req.Messages) != 2 || req.Messages[0].Role != "system" || req.Messages[0].Content != "You command p1." {
		t.Errorf("messages %+v, want the system prompt first", req.Messages)
	}
	if req := g.OpeningRequest(s, "p2", 5); strings.Contains(req.Messages[0].Content, "ORDER ERRORS") {
		t.Errorf("p2 sees p1's errors:\n%s", req.Messages[0].Content)
	}
}

// exported is what `arbiter export` prints of state s.
func exported(t *testing.T, g *Game, s any) any {
	t.Helper()
	v, err := g.Export(t.Context(), nil, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPersonSeatReadsPerson: issue 25 item 1. A seat a person played at the
// terminal (a Move's orders) reads "person" in status from then on, over
// its configured bot; a game no person played stores no people.
func TestPersonSeatReadsPerson(t *testing.T) {
	g := newGame(t, botSettings(3))
	r, _ := openRunner(t, t.TempDir(), g, nil)
	if _, err := r.Turn(context.Background(), Move{Orders: map[string][]Order{"p1": {}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Turn(context.Background(), nil); err != nil { // p1 back to its bot
		t.Fatal(err)
	}
	st := r.State().(*State)
	if !slices.Equal(st.People, []string{"p1"}) {
		t.Fatalf("people %v, want [p1]", st.People)
	}
	fields, err := g.Status(context.Background(), nil, st)
	if err != nil {
		t.Fatal(err)
	}
	seats := map[string]string{}
	for _, f := range fields {
		seats[f.Key], _, _ = strings.Cut(f.Value, " ·")
	}
	if seats["p1"] != SeatPerson || seats["p2"] != SeatBot {
		t.Errorf("status seats p1 %q, p2 %q; want person and bot", seats["p1"], seats["p2"])
	}
	bots, _ := openRunner(t, t.TempDir(), newGame(t, botSettings(3)), nil)
	if _, err := bots.Turn(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(bots.State()); strings.Contains(string(b), `"people"`) {
		t.Errorf("a game of bots stores people: %s", b)
	}
}

// TestModelSeatTruncatedPromptsCounted: a model seat's turns whose prompt
// filled the model's context (llm.context_tokens 1000, prompt_tokens 1000)
// are stored as truncated and counted, the turn played as answered.
func TestModelSeatTruncatedPromptsCounted(t *testing.T) {
	t.Parallel()
	full := openai.Usage{PromptTokens: 1000, CompletionTokens: 10, TotalTokens: 1010}
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Content("I will attack B.").WithUsage(full),
		openaitest.ToolCalls(openaitest.Tool("c", ToolSubmit, orderArgs(ord("A", "B", 3)))),
	))
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.ContextTokens = srv.URL, "k", 1000
	client, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	g := newGame(t, map[string]any{"seats": map[string]any{"p1": SeatModel, "p2": SeatBot}})
	g.Client, g.Params = client, llm.Params{Model: "test-model", MaxTokens: 300}
	r, st := openRunner(t, t.TempDir(), fixedStart{g, board()}, client)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	sum, err := st.Summary(context.Background())
	if err != nil || sum.TruncatedPrompts != 1 || sum.Total.Calls != 2 {
		t.Fatalf("summary: %d truncated prompts of %d calls, %v; want the first of 2", sum.TruncatedPrompts, sum.Total.Calls, err)
	}
	if f := fleetsOf(r.State().(*State), "p1"); len(f) != 1 || f[0].Ships != 3 {
		t.Errorf("fleets %+v: the turn was not played", f)
	}
}
