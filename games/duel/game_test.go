package duel

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// TestResumeContinuesTheRandomSequence: three turns, a new process, three
// more, is the same game as six turns in one go: same dice, same board, same
// random state.
func TestResumeContinuesTheRandomSequence(t *testing.T) {
	t.Parallel()
	set := func() map[string]any { return map[string]any{"seed": 11} }
	dir := t.TempDir()
	first := openTable(t, dir, newGame(t, set()), nil)
	if _, err := first.r.Run(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	first.st.Close()
	again := openTable(t, dir, newGame(t, set()), nil)
	if again.r.LastTick() != 3 {
		t.Fatalf("resumed at %d, want 3", again.r.LastTick())
	}
	if _, err := again.r.Run(context.Background(), 3); err != nil {
		t.Fatal(err)
	}
	resumed := again.r.State().(*State)

	g := newGame(t, set())
	st := g.Initial()
	var dice []int
	for range 6 {
		st = turn(t, g, st, nil)
		dice = append(dice, st.Board.Player(P1).Dice, st.Board.Player(P2).Dice)
	}
	a, _ := json.Marshal(resumed)
	b, _ := json.Marshal(st)
	if string(a) != string(b) {
		t.Errorf("resumed game differs from the one played in one go (dice %v):\n%s\n%s", dice, a, b)
	}
	// Load of an earlier turn reads back what was committed then.
	loaded, err := again.g.Load(context.Background(), again.st, 6)
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := json.Marshal(loaded); string(c) != string(a) {
		t.Errorf("Load(6) differs from the state after turn 6")
	}
}

// TestSameSeedSameGame: a seed replays a whole game exactly; another seed
// plays another.
func TestSameSeedSameGame(t *testing.T) {
	t.Parallel()
	play := func(seed int) string {
		g := newGame(t, map[string]any{"seed": seed})
		st := g.Initial()
		for !st.Over() {
			st = turn(t, g, st, nil)
		}
		b, _ := json.Marshal(st)
		return string(b)
	}
	if play(4) != play(4) {
		t.Errorf("seed 4 played two different games")
	}
	if play(4) == play(5) {
		t.Errorf("seeds 4 and 5 played the same game")
	}
}

func TestOpenSettings(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		set  map[string]any
		want string // "" for no error
	}{
		{"defaults", map[string]any{"seats": people("bot", "model")}, ""},
		{"no seats", map[string]any{}, "settings.seats: missing"},
		{"a bad seat", map[string]any{"seats": people("bot", "robot")}, `settings.seats.p2: robot must be bot, model or person`},
		{"a third seat", map[string]any{"seats": map[string]any{"p1": "bot", "p2": "bot", "p3": "bot"}}, "settings.seats.p3: unknown seat"},
		{"seed not a number", map[string]any{"seed": "seven", "seats": people("bot", "bot")}, "settings.seed: seven must be a whole number"},
		{"max_turns zero", map[string]any{"max_turns": 0, "seats": people("bot", "bot")}, "settings.max_turns: 0 must be a whole number from 1 to 10000"},
		{"max_turns past the bound", map[string]any{"max_turns": 10001, "seats": people("bot", "bot")}, "settings.max_turns: 10001 must be a whole number from 1 to 10000"},
		{"health MaxInt64", map[string]any{"health": 9223372036854775807, "seats": people("bot", "bot")}, "settings.health: 9223372036854775807 must be a whole number from 1 to 1000000"},
		{"health past the bound", map[string]any{"health": 1000001, "seats": people("bot", "bot")}, "settings.health: 1000001 must be a whole number from 1 to 1000000"},
		{"bounds", map[string]any{"health": 1000000, "max_turns": 10000, "seed": 9223372036854775807, "seats": people("bot", "bot")}, ""},
		{"unknown key", map[string]any{"turns": 3, "seats": people("bot", "bot")}, "settings.turns: unknown key"},
	}
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			g, err := Open(&world.Simulation{Dir: dir, Kind: KindName, Settings: tt.set}, pr)
			if tt.want == "" {
				if err != nil || g.Health != cmp.Or(tt.set["health"], any(DefaultHealth)) || g.MaxTurns != cmp.Or(tt.set["max_turns"], any(DefaultMaxTurns)) {
					t.Errorf("Open: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "simulation.yaml")+": "+tt.want) {
				t.Errorf("err %v\nwant it to name simulation.yaml and say %q", err, tt.want)
			}
		})
	}
	if _, err := Open(&world.Simulation{Dir: t.TempDir(), Kind: "chronicle"}, pr); err == nil {
		t.Errorf("Open of a chronicle succeeded")
	}
}

// TestOpenRendersEveryTemplate: a broken override of any duel template
// stops Open, before a turn is played.
func TestOpenRendersEveryTemplate(t *testing.T) {
	t.Parallel()
	for _, name := range []string{SystemPrompt, BuildPrompt, ChargesPrompt} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			os.MkdirAll(filepath.Join(dir, "prompts"), 0o755)
			os.WriteFile(filepath.Join(dir, "prompts", name), []byte("{{.NoSuchKey}}"), 0o644)
			pr, err := prompts.New(dir)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Open(&world.Simulation{Dir: dir, Kind: KindName, Settings: map[string]any{"seats": people("bot", "model")}}, pr)
			if err == nil || !strings.Contains(err.Error(), "NoSuchKey") {
				t.Errorf("Open with a broken %s: %v", name, err)
			}
		})
	}
}

// TestDemo: simulations/duel-demo loads and plays to its end with two bots.
func TestDemo(t *testing.T) {
	t.Parallel()
	sim, err := worldtest.Load(filepath.Join("..", "..", "simulations", "duel-demo"))
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(sim.Dir)
	if err != nil {
		t.Fatal(err)
	}
	g, err := Open(sim, pr)
	if err != nil {
		t.Fatal(err)
	}
	tb := openTable(t, t.TempDir(), g, nil)
	if _, err := tb.r.Run(context.Background(), g.MaxTurns); err != nil {
		t.Fatal(err)
	}
	st := tb.r.State().(*State)
	if !st.Over() {
		t.Errorf("not over after %d turns", g.MaxTurns)
	}
	// Run stops at the end and says how; a turn played anyway is refused.
	if rep, err := tb.r.Run(context.Background(), 1); err != nil || rep.Stop != runner.StopGameOver || len(rep.Ticks) != 0 || rep.Ended == "" {
		t.Errorf("a run after the end: %+v, %v", rep, err)
	}
	if _, err := tb.r.Turn(context.Background(), nil); !errors.Is(err, runner.ErrRefused) || !strings.Contains(err.Error(), "the game is over") {
		t.Errorf("a turn after the end: %v", err)
	}
	fields, err := g.Status(context.Background(), tb.st, st)
	if err != nil || len(fields) != 4 || !strings.Contains(fields[1].Value, "health") {
		t.Errorf("status %v %v", fields, err)
	}
	if v, err := g.Export(t.Context(), nil, st); err != nil {
		t.Error(err)
	} else if _, err := json.Marshal(v); err != nil {
		t.Error(err)
	}
}

func TestCatalogIsChecked(t *testing.T) {
	t.Parallel()
	cat, err := Catalog()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"Defender", "Orbital", "Zenith", "Xenite", "Leviathan", "Science Vessel", "Sacrificial Pool", "Hive", "Ark of Knowledge", "Dreadnought", "Defense Swarm", "Guardian"} {
		if _, ok := cat.Get(id); !ok {
			t.Errorf("the catalog has no %s", id)
		}
	}
	bad := []byte("ships:\n  - id: Leviathan\n    cost: 8\n    health: 10\n    powers:\n      - {phase: DICE_ROLL, timing: PASSIVE, baseAmount: 6, specialLogic: {diceOverride: 6}}\n")
	_, err = ParseCatalog("bad.yaml", bad)
	want := `bad.yaml: ship "Leviathan" power 0: PASSIVE powers must not have baseAmount (they are queries, not effects)`
	if err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
	if _, err := ParseCatalog("typo.yaml", []byte("ships:\n  - id: A\n    cots: 1\n")); err == nil || !strings.Contains(err.Error(), "cots") {
		t.Errorf("a misspelt field: %v", err)
	}
}
