package duel

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// table is a duel through the runner and a real store.
type table struct {
	g  *Game
	st *store.Store
	r  *runner.Runner
}

func openTable(t *testing.T, dir string, g *Game, client *llm.Client) *table {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(dir, store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	g.Client, g.Params = client, llm.Params{Model: "test-model", MaxTokens: 200}
	r := &runner.Runner{Stepper: g, Store: st, Client: client}
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	return &table{g: g, st: st, r: r}
}

func model(t *testing.T, h openaitest.Handler) (*openaitest.Server, *llm.Client) {
	t.Helper()
	srv := openaitest.New(t, h)
	cfg := llm.DefaultConfig()
	cfg.BaseURL = srv.URL
	cfg.BackoffBase, cfg.BackoffMax = time.Millisecond, time.Millisecond
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func (tb *table) log(t *testing.T, turn int) TurnLog {
	t.Helper()
	recs, err := tb.st.Records(context.Background(), Stream, turn, turn)
	if err != nil || len(recs) < turn {
		t.Fatalf("records of turn %d: %v (%d)", turn, err, len(recs))
	}
	var l TurnLog
	if err := json.Unmarshal(recs[turn-1].Body, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

func enumOf(t *testing.T, schema json.RawMessage, path ...string) []string {
	t.Helper()
	var node map[string]any
	if err := json.Unmarshal(schema, &node); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		if p == "items" {
			node = node["items"].(map[string]any)
			continue
		}
		node = node["properties"].(map[string]any)[p].(map[string]any)
	}
	var out []string
	for _, v := range node["enum"].([]any) {
		out = append(out, v.(string))
	}
	return out
}

func TestModelSeat(t *testing.T) {
	t.Parallel()
	charges := openaitest.JSON(map[string]any{"charges": []any{}})
	tests := []struct {
		name     string
		build    openaitest.Reply
		want     string // what p1 built on turn 1
		rejected string // in the turn's rejections ("" for none)
		fallback bool
	}{
		{"a valid choice is played", openaitest.JSON(map[string]any{"ship": "Orbital", "upgrade": "none", "reason": "cheap"}), "Orbital", "", false},
		{"none builds nothing", openaitest.JSON(map[string]any{"ship": "none", "upgrade": "none", "reason": "saving"}), "", "", false},
		{"an invalid choice is rejected, the bot builds", openaitest.JSON(map[string]any{"ship": "Dreadnought", "upgrade": "none", "reason": "big"}), "Guardian",
			`p1: build choice "Dreadnought": costs 6 lines, you have 4 (choose one of: Orbital, Defender, Fighter, Science Vessel, Hive, Defense Swarm, Interceptor, Guardian, Sacrificial Pool, none)`, true},
		{"a failed call falls back to the bot", openaitest.Status(500, "server_error", "", "boom"), "Guardian", "boom", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, client := model(t, openaitest.Match(openaitest.Always(charges),
				openaitest.Route{If: func(c *openaitest.Call) bool { return c.SchemaName() == "DuelBuild" }, Then: openaitest.Always(tt.build)}))
			dir := t.TempDir()
			// Seed 7: p1 rolls a 4 on turn 1.
			g := newGame(t, map[string]any{"seed": 7, "seats": people("model", "bot")})
			tb := openTable(t, dir, g, client)
			rep, err := tb.r.Run(context.Background(), 2)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if rep.LastTick != 2 {
				t.Fatalf("last tick %d, want 2: the turns go on", rep.LastTick)
			}
			l := tb.log(t, 1)
			wantChoice := "p1 builds " + tt.want
			if tt.want == "" {
				wantChoice = "p1 builds none"
			}
			if !slices.Contains(l.Choices, wantChoice) {
				t.Errorf("choices %q, want %q", l.Choices, wantChoice)
			}
			switch {
			case tt.rejected == "" && len(l.Rejected) > 0:
				t.Errorf("rejected %q, want none", l.Rejected)
			case tt.rejected != "" && (len(l.Rejected) != 1 || !strings.Contains(l.Rejected[0], tt.rejected)):
				t.Errorf("rejected %q\nwant one containing %q", l.Rejected, tt.rejected)
			}
			calls, err := tb.st.Calls(context.Background(), 1)
			if err != nil || len(calls) == 0 {
				t.Fatalf("calls of turn 1: %v %d", err, len(calls))
			}
			if calls[0].Phase != PhaseBuild || calls[0].EntityKey != "duel:p1:build" || calls[0].Fallback != tt.fallback {
				t.Errorf("call %+v, want the build call of p1, fallback %v", calls[0], tt.fallback)
			}
			// The schema lists only what p1 can afford now, and none.
			first := srv.Calls()[0]
			if !first.Strict() {
				t.Errorf("schema not strict")
			}
			ships := enumOf(t, first.Schema(), "ship")
			if slices.Contains(ships, "Dreadnought") || !slices.Contains(ships, "Orbital") || ships[len(ships)-1] != "none" {
				t.Errorf("build enum %v: want the affordable ships and none", ships)
			}
		})
	}
}

// TestModelCharges: a model's declaration is played; a declaration the
// schema cannot catch (one ship twice) is rejected, and the bot's is used.
func TestModelCharges(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name     string
		answer   any
		rejected string
		p2Health int
	}{
		{"one charge at the opponent", map[string]any{"charges": []any{map[string]any{"ship": "p1-1", "target": "opponent"}}}, "", 26},
		{"the same ship twice", map[string]any{"charges": []any{map[string]any{"ship": "p1-1", "target": "opponent"}, map[string]any{"ship": "p1-1", "target": "opponent"}}},
			`charge declaration: ship "p1-1" spends a charge twice`, 26},
		{"no charge", map[string]any{"charges": []any{}}, "", 30},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, client := model(t, openaitest.Match(openaitest.Always(openaitest.JSON(map[string]any{"ship": "none", "upgrade": "none", "reason": "-"})),
				openaitest.Route{If: func(c *openaitest.Call) bool { return c.SchemaName() == "DuelCharges" }, Then: openaitest.Always(openaitest.JSON(tt.answer))}))
			g := newGame(t, map[string]any{"seats": people("model", "person")})
			st := g.Initial()
			give(st, P1, "Guardian", 5, 3)
			tb := openTable(t, t.TempDir(), g, client)
			// Play the turn through a runner whose state is st.
			r := &runner.Runner{Stepper: fixedStart{g, st}, Store: tb.st, Client: client}
			if _, err := r.Turn(context.Background(), Seats{P2: chooser{}}); err != nil {
				t.Fatal(err)
			}
			got := r.State().(*State)
			if h := got.Board.Player(P2).Health; h != tt.p2Health {
				t.Errorf("p2 health %d, want %d", h, tt.p2Health)
			}
			l := got.Log
			if tt.rejected == "" && len(l.Rejected) > 0 || tt.rejected != "" && (len(l.Rejected) != 1 || !strings.Contains(l.Rejected[0], tt.rejected)) {
				t.Errorf("rejected %q, want %q", l.Rejected, tt.rejected)
			}
			var schema json.RawMessage
			for _, c := range srv.Calls() {
				if c.SchemaName() == "DuelCharges" {
					schema = c.Schema()
				}
			}
			if ships := enumOf(t, schema, "charges", "items", "ship"); !slices.Equal(ships, []string{"p1-1"}) {
				t.Errorf("charge enum %v, want [p1-1]", ships)
			}
		})
	}
}

// fixedStart is g starting from st instead of its initial state.
type fixedStart struct {
	*Game
	st *State
}

func (f fixedStart) Load(ctx context.Context, s *store.Store, tick int) (any, error) {
	if tick == 0 {
		return f.st, nil
	}
	return f.Game.Load(ctx, s, tick)
}

// TestPersonSeat: a person's refused choice refuses the turn (nothing is
// recorded) with the rule's words; a good one plays it.
func TestPersonSeat(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seed": 7, "seats": people("person", "bot")})
	tb := openTable(t, t.TempDir(), g, nil)
	bad := Seats{P1: chooser{build: func(BuildView) BuildChoice { return BuildChoice{Ship: "Dreadnought"} }}}
	_, err := tb.r.Turn(context.Background(), bad)
	if !errors.Is(err, runner.ErrRefused) || !strings.Contains(err.Error(), `build choice "Dreadnought": costs 6 lines, you have 4 (choose one of: Orbital,`) {
		t.Fatalf("err %v, want a refusal naming the rule", err)
	}
	if tb.r.LastTick() != 0 {
		t.Fatalf("a refused turn committed")
	}
	if _, err := tb.r.Run(context.Background(), 1); !errors.Is(err, ErrNeedPerson) {
		t.Errorf("run without the person's chooser: %v, want ErrNeedPerson", err)
	}
	good := Seats{P1: chooser{build: func(v BuildView) BuildChoice { return BuildChoice{Ship: v.Options[0].Ship} }}}
	if _, err := tb.r.Turn(context.Background(), good); err != nil {
		t.Fatal(err)
	}
	if l := tb.log(t, 1); !slices.Contains(l.Choices, "p1 builds Orbital") {
		t.Errorf("choices %q", l.Choices)
	}
}
