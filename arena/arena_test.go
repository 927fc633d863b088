package arena_test

import (
	"context"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

func demo(t *testing.T, name string) (*world.Simulation, *prompts.Renderer) {
	t.Helper()
	sim, err := worldtest.Load(filepath.Join("..", "simulations", name))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(sim.Dir)
	if err != nil {
		t.Fatal(err)
	}
	return sim, pr
}

func conquestDemo(t *testing.T) *conquest.Game {
	t.Helper()
	g, err := conquest.Open(demo(t, "conquest-demo"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// demoGames are the demo conquest and the demo duel.
func demoGames(t *testing.T) []arena.Game {
	t.Helper()
	dg, err := duel.Open(demo(t, "duel-demo"))
	if err != nil {
		t.Fatal(err)
	}
	return []arena.Game{conquestDemo(t), dg}
}

// TestBotsArena: every game finishes, each one's outcome is counted once
// per player, and the same seeds give the same table.
func TestBotsArena(t *testing.T) {
	for _, g := range demoGames(t) {
		t.Run(g.Kind(), func(t *testing.T) {
			cfg := arena.Config{Games: 6, Seed: 3, Parallel: 3}
			a, err := arena.Run(context.Background(), g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if a.Unfinished != 0 || len(a.Results) != 6 || len(a.Rows) != 2 {
				t.Fatalf("table %+v", a)
			}
			decided := 0
			for i, res := range a.Results {
				if res.Seed != 3+uint64(i) || res.Stop != runner.StopGameOver || res.Turns == 0 {
					t.Errorf("game %d: %+v", i, res)
				}
				if res.Winner != "" {
					decided++
				}
			}
			for _, r := range a.Rows {
				if r.Seat != "bot" || r.Wins+r.Losses+r.Draws != 6 || r.Tokens != 0 {
					t.Errorf("row %+v", r)
				}
			}
			if a.Rows[0].Wins+a.Rows[1].Wins != decided || a.Draws != 6-decided {
				t.Errorf("wins %d+%d, draws %d, decided %d", a.Rows[0].Wins, a.Rows[1].Wins, a.Draws, decided)
			}
			b, err := arena.Run(context.Background(), g, cfg)
			if err != nil || !reflect.DeepEqual(a, b) {
				t.Errorf("same seeds, another table:\n%+v\n%+v (%v)", a, b, err)
			}
		})
	}
}

// TestModelSeatArena: a model seat (the in-process server submits no
// orders) plays through the tool loop in every game; its calls and tokens
// are counted per turn, and its games are all played out.
func TestModelSeatArena(t *testing.T) {
	srv := openaitest.New(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c1", conquest.ToolSubmit, map[string]any{"orders": []any{}})).
		WithUsage(openai.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110})))
	client := newClient(t, srv.URL)
	g := conquestDemo(t)
	g.Params = llm.Params{Model: "m", MaxTokens: 200}
	a, err := arena.Run(context.Background(), g, arena.Config{Games: 3, Seed: 1, Seats: map[string]string{"p1": "model"}, Client: client, MaxTurns: 5})
	if err != nil {
		t.Fatal(err)
	}
	p1 := a.Rows[0]
	if p1.Seat != "model" || p1.CallsByTurn != 1 || p1.Tokens != 110*a.Turns || p1.FailedCalls != 0 {
		t.Errorf("p1 row %+v over %d turns", p1, a.Turns)
	}
	if a.Turns != 15 || a.Unfinished != 3 {
		t.Errorf("3 games capped at 5 turns: %d turns, %d unfinished", a.Turns, a.Unfinished)
	}
}

// TestFailingModelArena: when the model fails every call, its games stop
// at the first turn (quorum_failure), each with its error; the arena still
// returns its table.
func TestFailingModelArena(t *testing.T) {
	srv := openaitest.New(t, openaitest.Always(openaitest.Status(500, "server_error", "", "down")))
	g := conquestDemo(t)
	g.Params = llm.Params{Model: "m", MaxTokens: 200}
	a, err := arena.Run(context.Background(), g, arena.Config{Games: 2, Seats: map[string]string{"p2": "model"}, Client: newClient(t, srv.URL)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Unfinished != 2 || a.Turns != 0 {
		t.Fatalf("table %+v", a)
	}
	for _, res := range a.Results {
		if res.Stop != runner.StopQuorum || !strings.Contains(res.Error, "quorum_failure") {
			t.Errorf("game %+v", res)
		}
	}
}

func TestArenaRefusesBadSeats(t *testing.T) {
	g := conquestDemo(t)
	for _, tc := range []struct {
		cfg  arena.Config
		want string
	}{
		{arena.Config{Games: 1, Seats: map[string]string{"p9": "bot"}}, "seat p9: not a player"},
		{arena.Config{Games: 1, Seats: map[string]string{"p1": "person"}}, "want model or bot"},
		{arena.Config{Games: 1, Seats: map[string]string{"p1": "model"}}, "no model client"},
		{arena.Config{Games: 0}, "at least 1"},
	} {
		if _, err := arena.Run(context.Background(), g, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
	}
	g.Setup.Seats["p2"] = conquest.SeatPerson
	if _, err := arena.Run(context.Background(), g, arena.Config{Games: 1}); err == nil || !strings.Contains(err.Error(), "seat p2 is a person in simulation.yaml") {
		t.Errorf("a person's seat left as it is: %v", err)
	}
	if _, err := arena.Run(context.Background(), g, arena.Config{Games: 1, Seats: map[string]string{"p2": "bot"}}); err != nil {
		t.Errorf("a person's seat given to the bot: %v", err)
	}
}

func newClient(t *testing.T, url string) *llm.Client {
	t.Helper()
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.APIKey, cfg.Depth = url, "k", 0
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, time.Millisecond
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// variantGame is the demo conquest opened with templates whose system
// prompt is system, playing with params: a seat configuration of its own.
func variantGame(t *testing.T, system string, params llm.Params) *conquest.Game {
	t.Helper()
	sim, _ := demo(t, "conquest-demo")
	layer := t.TempDir()
	if err := os.WriteFile(filepath.Join(layer, conquest.PromptFile), []byte(system), 0o644); err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(sim.Dir, layer)
	if err != nil {
		t.Fatal(err)
	}
	g, err := conquest.Open(sim, pr)
	if err != nil {
		t.Fatal(err)
	}
	g.Params = params
	return g
}

// TestModelSeatsWithOwnConfigurations: two model seats play each other,
// each with its own templates, model and client (here a server each):
// every request a server saw is its seat's, with its seat's system prompt
// and model, and the table names the configurations.
func TestModelSeatsWithOwnConfigurations(t *testing.T) {
	submit := openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c1", conquest.ToolSubmit, map[string]any{"orders": []any{}})))
	terseSrv, chattySrv := openaitest.New(t, submit), openaitest.New(t, submit)
	g := conquestDemo(t)
	cfg := arena.Config{Games: 2, Seed: 1, MaxTurns: 3, Seats: map[string]string{"p1": "model", "p2": "model"},
		Models: map[string]arena.Model{
			"p1": {Name: "terse", Game: variantGame(t, "TERSE {{.Player}}", llm.Params{Model: "m-terse", MaxTokens: 100}), Client: newClient(t, terseSrv.URL)},
			"p2": {Name: "chatty", Game: variantGame(t, "CHATTY {{.Player}} against {{.Opponents}}", llm.Params{Model: "m-chatty", MaxTokens: 300}), Client: newClient(t, chattySrv.URL)},
		}}
	a, err := arena.Run(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if a.Turns != 6 {
		t.Fatalf("2 games capped at 3 turns played %d turns", a.Turns)
	}
	for _, tc := range []struct {
		srv                   *openaitest.Server
		player, system, model string
	}{{terseSrv, "p1", "TERSE p1", "m-terse"}, {chattySrv, "p2", "CHATTY p2 against p1", "m-chatty"}} {
		calls := tc.srv.Calls()
		if len(calls) != a.Turns {
			t.Errorf("%s's server saw %d calls over %d turns, want one a turn", tc.player, len(calls), a.Turns)
		}
		for _, c := range calls {
			if c.SystemMessage() != tc.system || c.Request.Model != tc.model || !strings.Contains(c.LastUserMessage(), "You are "+tc.player+".") {
				t.Errorf("%s's server saw system %q, model %q, user %q", tc.player, c.SystemMessage(), c.Request.Model, c.LastUserMessage())
			}
		}
	}
	if a.Rows[0].Seat != "model:terse" || a.Rows[1].Seat != "model:chatty" {
		t.Errorf("rows %+v", a.Rows)
	}
	if len(a.Configurations) != 2 || a.Configurations[0].Seat != "model:terse" || a.Configurations[1].Rating != nil {
		t.Errorf("configurations %+v: want terse and chatty, unrated", a.Configurations)
	}
}

// TestArenaRefusesBadConfigurations: a configuration names a model seat
// of the game's kind and has a client; every other is refused before a
// game is played.
func TestArenaRefusesBadConfigurations(t *testing.T) {
	g := conquestDemo(t)
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("{}")))
	client := newClient(t, srv.URL)
	dg, err := duel.Open(demo(t, "duel-demo"))
	if err != nil {
		t.Fatal(err)
	}
	own := arena.Model{Name: "terse", Game: conquestDemo(t), Client: client}
	with := func(p string, m arena.Model, seats map[string]string) arena.Config {
		return arena.Config{Games: 1, Seats: seats, Client: client, Models: map[string]arena.Model{p: m}}
	}
	model := map[string]string{"p1": "model"}
	for _, tc := range []struct {
		cfg  arena.Config
		want string
	}{
		{with("p1", own, nil), "seat p1 is a bot: only a model seat plays a configuration (terse)"},
		{with("p9", own, model), "seat p9: not a player"},
		{with("p1", arena.Model{Name: "x", Game: dg, Client: client}, model), "configuration x is no conquest game"},
		{with("p1", arena.Model{Name: "x", Game: own.Game}, model), "configuration x has no model client"},
		{with("p1", arena.Model{Name: "a\x1bb", Game: own.Game, Client: client}, model), "holds a control character"},
		{with("p1", arena.Model{Game: own.Game, Client: client}, model), "is empty"},
		{arena.Config{Games: 1, Seats: map[string]string{"p1": "model", "p2": "model"}, Models: map[string]arena.Model{"p1": own}}, "no model client was given"},
	} {
		if _, err := arena.Run(context.Background(), g, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.cfg, err, tc.want)
		}
		if srv.CallCount() != 0 {
			t.Fatalf("a refused arena made %d calls", srv.CallCount())
		}
	}
}

// TestDuelSeatsWithOwnConfigurations: a duel's model seats play with
// their own system prompt and model too, the other seat as the simulation
// says.
func TestDuelSeatsWithOwnConfigurations(t *testing.T) {
	srv := openaitest.New(t, openaitest.FromSchema(nil))
	client := newClient(t, srv.URL)
	sim, pr := demo(t, "duel-demo")
	g, err := duel.Open(sim, pr)
	if err != nil {
		t.Fatal(err)
	}
	g.Params = llm.Params{Model: "m-own", MaxTokens: 200}
	layer := t.TempDir()
	if err := os.WriteFile(filepath.Join(layer, duel.SystemPrompt), []byte("TERSE {{.Seat}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	lpr, err := prompts.New(sim.Dir, layer)
	if err != nil {
		t.Fatal(err)
	}
	terse, err := duel.Open(sim, lpr)
	if err != nil {
		t.Fatal(err)
	}
	terse.Params = llm.Params{Model: "m-terse", MaxTokens: 100}
	cfg := arena.Config{Games: 1, Seed: 2, MaxTurns: 2, Seats: map[string]string{"p1": "model", "p2": "model"}, Client: client,
		Models: map[string]arena.Model{"p2": {Name: "terse", Game: terse, Client: client}}}
	a, err := arena.Run(context.Background(), g, cfg)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, c := range srv.Calls() {
		switch sys := c.SystemMessage(); {
		case sys == "TERSE p2" && c.Request.Model == "m-terse":
			seen["p2"]++
		case strings.Contains(sys, "p1") && !strings.Contains(sys, "TERSE") && c.Request.Model == "m-own":
			seen["p1"]++
		default:
			t.Errorf("a call with system %q to model %q", sys, c.Request.Model)
		}
	}
	if seen["p1"] == 0 || seen["p2"] == 0 || a.Rows[1].Seat != "model:terse" || a.Rows[0].Seat != "model" {
		t.Errorf("calls per seat %v, rows %+v", seen, a.Rows)
	}
}
