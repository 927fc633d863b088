package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// variantsConquest writes a conquest of the given seats (player -> seat,
// in order) whose games end at turn 3, with an eval suite of three
// variants: terse (its own system prompt and model), chatty (its own
// system prompt), broken (a template that does not parse) and rules
// (other settings of the game).
func variantsConquest(t *testing.T, seats ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rim")
	yaml := "id: rim\nkind: conquest\ntitle: Rim\nsettings:\n  seed: 7\n  max_turns: 3\n  stars: 8\n  width: 10\n  height: 10\n  seats:\n"
	for i, seat := range seats {
		yaml += fmt.Sprintf("    p%d: %s\n", i+1, seat)
	}
	files := map[string]string{
		"simulation.yaml": yaml,
		"evals.yaml": `variants:
  - name: terse
    templates: evals/terse
    model: m-terse
  - name: chatty
    templates: evals/chatty
  - name: broken
    templates: evals/broken
  - name: rules
    settings: {max_turns: 5}
`,
		"evals/terse/" + conquest.PromptFile:  "TERSE {{.Player}}",
		"evals/chatty/" + conquest.PromptFile: "CHATTY {{.Player}} against {{.Opponents}}",
		"evals/broken/" + conquest.PromptFile: "{{.Player",
	}
	for name, text := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// submitting is a model that submits no orders every turn.
func submitting(t *testing.T) *openaitest.Server {
	t.Helper()
	return fakeModel(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("c1", conquest.ToolSubmit, map[string]any{"orders": []any{}}))))
}

// arenaTable is what `arena --json` prints, as far as these tests read it.
type arenaTable struct {
	Games   int `json:"games"`
	Players []struct {
		Player, Seat string
	} `json:"players"`
	Configurations []struct {
		Seat           string
		Players        []string
		Finished, Wins int
		Losses, Draws  int
		WinRate        float64  `json:"win_rate"`
		WinLow         float64  `json:"win_rate_low"`
		WinHigh        float64  `json:"win_rate_high"`
		InvalidByTurn  float64  `json:"invalid_per_turn"`
		Rating         *float64 `json:"rating"`
	} `json:"configurations"`
}

func arenaJSON(t *testing.T, args ...string) arenaTable {
	t.Helper()
	code, out, errOut := arbiter(t, append(args, "--json")...)
	var tab arenaTable
	if code != 0 || json.Unmarshal([]byte(out), &tab) != nil {
		t.Fatalf("%v --json: exit %d\n%s\n%s", args, code, out, errOut)
	}
	return tab
}

// seatCalls groups the calls the server saw by the player they were made
// for ("You are p1." in the opening user message).
func seatCalls(srv *openaitest.Server, players ...string) map[string][]*openaitest.Call {
	out := map[string][]*openaitest.Call{}
	for _, c := range srv.Calls() {
		for _, p := range players {
			if strings.Contains(c.Request.Messages[len(c.Request.Messages)-1].Content, "You are "+p+".") {
				out[p] = append(out[p], c)
			}
		}
	}
	return out
}

// TestArenaVariantsPlayEachOther: two variants of the suite play each
// other's model seats; every request carries its seat's own templates and
// model, and the table gives each configuration's win rate with its 95%
// interval (two configurations: no rating).
func TestArenaVariantsPlayEachOther(t *testing.T) {
	cleanEnv(t)
	srv := submitting(t)
	dir := variantsConquest(t, "model", "model")
	args := []string{"arena", dir, "--seats", "p1=model:terse,p2=model:chatty", "--games", "2", "--seed", "1"}
	code, out, errOut := arbiter(t, args...)
	if code != 0 {
		t.Fatalf("arena: exit %d\n%s\n%s", code, out, errOut)
	}
	calls := seatCalls(srv, "p1", "p2")
	if len(calls["p1"]) != 6 || len(calls["p2"]) != 6 || srv.CallCount() != 12 {
		t.Fatalf("2 games of 3 turns: %d calls for p1, %d for p2, %d in all; want 6, 6, 12", len(calls["p1"]), len(calls["p2"]), srv.CallCount())
	}
	for _, c := range calls["p1"] {
		if c.SystemMessage() != "TERSE p1" || c.Request.Model != "m-terse" {
			t.Errorf("p1 (terse) sent system %q to model %q", c.SystemMessage(), c.Request.Model)
		}
	}
	for _, c := range calls["p2"] {
		if c.SystemMessage() != "CHATTY p2 against p1" || c.Request.Model != "test-model" {
			t.Errorf("p2 (chatty) sent system %q to model %q", c.SystemMessage(), c.Request.Model)
		}
	}
	tab := arenaJSON(t, args...)
	if len(tab.Configurations) != 2 || tab.Players[0].Seat != "model:terse" || tab.Players[1].Seat != "model:chatty" {
		t.Fatalf("table %+v", tab)
	}
	for _, c := range tab.Configurations {
		if c.Finished != 2 || c.Wins+c.Losses+c.Draws != 2 || c.WinRate != float64(c.Wins)/2 || c.Rating != nil {
			t.Errorf("configuration %+v: 2 finished games, unrated", c)
		}
		want := map[int][2]float64{0: {0, 0.6576}, 1: {0.0945, 0.9055}, 2: {0.3424, 1}}[c.Wins] // Wilson, 95%
		if math.Abs(c.WinLow-want[0]) > 1e-4 || math.Abs(c.WinHigh-want[1]) > 1e-4 {
			t.Errorf("%s won %d of 2: interval [%v, %v], want %v", c.Seat, c.Wins, c.WinLow, c.WinHigh, want)
		}
		row := fmt.Sprintf("%.3f-%.3f", c.WinLow, c.WinHigh)
		if !strings.Contains(out, c.Seat) || !strings.Contains(out, row) {
			t.Errorf("the table lacks %s's interval %s:\n%s", c.Seat, row, out)
		}
	}
	if strings.Contains(out, "rating") {
		t.Errorf("two configurations rated:\n%s", out)
	}
}

// TestArenaRatesThreeConfigurations: a terse seat, the simulation's own
// model seat and a bot are three configurations, each rated
// (Bradley-Terry, averaging 1500); the arena played in shards merges to the
// same table, and shards of other seat configurations do not merge.
func TestArenaRatesThreeConfigurations(t *testing.T) {
	cleanEnv(t)
	submitting(t)
	dir := variantsConquest(t, "model", "model", "bot")
	args := []string{"arena", dir, "--seats", "p1=model:terse", "--games", "4", "--seed", "3", "--parallel", "2"}
	code, out, errOut := arbiter(t, args...)
	if code != 0 || !strings.Contains(out, "rating (Bradley-Terry)") {
		t.Fatalf("arena: exit %d\n%s\n%s", code, out, errOut)
	}
	tab := arenaJSON(t, args...)
	var sum float64
	for i, want := range []string{"model:terse", "model", "bot"} {
		c := tab.Configurations[i]
		if c.Seat != want || c.Rating == nil || c.Finished != 4 {
			t.Fatalf("configuration %d: %+v, want %s rated over 4 games", i, c, want)
		}
		sum += *c.Rating
		if !strings.Contains(out, fmt.Sprintf("%.0f\n", *c.Rating)) {
			t.Errorf("the table lacks %s's rating %.0f:\n%s", c.Seat, *c.Rating, out)
		}
	}
	if math.Abs(sum/3-1500) > 1e-6 {
		t.Errorf("ratings average %v, want 1500", sum/3)
	}
	_, whole, _ := arbiter(t, append(args, "--json")...)
	files := arenaShards(t, 2, t.TempDir(), args...)
	if code, merged, errOut := arbiter(t, append([]string{"arena", "merge", "--json"}, files...)...); code != 0 || merged != whole {
		t.Errorf("merged: exit %d %s\n%s\nwhole:\n%s", code, errOut, merged, whole)
	}
	other := arenaShards(t, 2, t.TempDir(), "arena", dir, "--seats", "p1=model:chatty", "--games", "4", "--seed", "3")
	code, _, errOut = arbiter(t, "arena", "merge", files[0], other[1])
	if want := "seats p1=model:chatty,p2=model,p3=bot, not p1=model:terse,p2=model,p3=bot"; code != ExitUsage || !strings.Contains(errOut, want) {
		t.Errorf("merge of two configurations: exit %d %s, want %q", code, errOut, want)
	}
	// The same variant with another template is another arena.
	if err := os.WriteFile(filepath.Join(dir, "evals", "terse", conquest.PromptFile), []byte("TERSER {{.Player}}"), 0o644); err != nil {
		t.Fatal(err)
	}
	edited := arenaShards(t, 2, t.TempDir(), args...)
	code, _, errOut = arbiter(t, "arena", "merge", files[0], edited[1])
	if code != ExitUsage || !strings.Contains(errOut, "settings digest") {
		t.Errorf("merge across an edited variant: exit %d %s", code, errOut)
	}
}

// TestArenaSeatGivenDirectly: --seat-templates and --seat-model give a
// seat its own folder and model, named by them; model:baseline is the
// simulation's own model seat.
func TestArenaSeatGivenDirectly(t *testing.T) {
	cleanEnv(t)
	srv := submitting(t)
	dir := variantsConquest(t, "model", "model")
	t.Chdir(dir)
	tab := arenaJSON(t, "arena", ".", "--seats", "p2=model:baseline", "--seat-templates", "p1=evals/chatty/", "--seat-model", "p1=m-direct", "--games", "1")
	if tab.Players[0].Seat != "model:evals/chatty/@m-direct" || tab.Players[1].Seat != "model" {
		t.Fatalf("seats %+v", tab.Players)
	}
	calls := seatCalls(srv, "p1", "p2")
	for _, c := range calls["p1"] {
		if c.SystemMessage() != "CHATTY p1 against p2" || c.Request.Model != "m-direct" {
			t.Errorf("p1 sent system %q to model %q", c.SystemMessage(), c.Request.Model)
		}
	}
	for _, c := range calls["p2"] {
		if !strings.HasPrefix(c.SystemMessage(), "You command player p2") || c.Request.Model != "test-model" {
			t.Errorf("p2 sent system %q to model %q", c.SystemMessage(), c.Request.Model)
		}
	}
	if len(calls["p1"]) == 0 || len(calls["p2"]) == 0 {
		t.Errorf("calls: %d for p1, %d for p2", len(calls["p1"]), len(calls["p2"]))
	}
}

// TestArenaVariantBadInput: a seat's variant or settings that cannot be
// played is one line naming what is wrong, exit 2, before any call.
func TestArenaVariantBadInput(t *testing.T) {
	cleanEnv(t)
	srv := submitting(t)
	dir := variantsConquest(t, "model", "model")
	bare := variantsConquest(t, "model", "model")
	os.Remove(filepath.Join(bare, "evals.yaml"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir, "--seats", "p1=model:tersee"}, `seat p1: no variant "tersee" in ` + filepath.Join(dir, "evals.yaml") + " (its variants: terse, chatty, broken, rules; model or model:baseline plays the simulation as it is)"},
		{[]string{dir, "--seats", "p1=model:broken"}, "seat p1 (model:broken): "},
		{[]string{dir, "--seats", "p1=model:rules"}, "the variant rules of " + filepath.Join(dir, "evals.yaml") + " lays settings over simulation.yaml's"},
		{[]string{dir, "--seats", "bot:terse"}, `seat p1 is "bot:terse"; a seat of an arena is model, model:<variant> or bot`},
		{[]string{dir, "--seats", "model:,bot"}, "name the variant after model:"},
		{[]string{dir, "--seats", "model:terse", "--suite", filepath.Join(dir, "none.yaml")}, "none.yaml: stat"},
		{[]string{bare, "--seats", "model:terse"}, bare + " has no evals.yaml: give the suite with --suite FILE"},
		{[]string{"conquest", "--seats", "model:terse"}, "conquest has no evals.yaml"},
		{[]string{dir, "--seat-model", "p9=m"}, `--seat-model p9=m: "p9" is not a player (players: p1, p2)`},
		{[]string{dir, "--seat-model", "p1"}, "--seat-model p1: want PLAYER=VALUE"},
		{[]string{dir, "--seats", "p1=model:terse", "--seat-model", "p1=m"}, "seat p1 plays the variant terse: give a seat a variant or --seat-templates and --seat-model, not both"},
		{[]string{dir, "--seats", "bot,model", "--seat-model", "p1=m"}, "seat p1 is a bot: --seat-templates and --seat-model are for a model seat"},
		{[]string{dir, "--seat-templates", "p1=" + filepath.Join(dir, "none")}, "none"},
	} {
		code, _, errOut := arbiter(t, append([]string{"arena"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("arena %v: exit %d %q; want exit 2, one line, with %q", tc.args, code, errOut, tc.want)
		}
	}
	if srv.CallCount() != 0 {
		t.Errorf("refused arenas made %d calls", srv.CallCount())
	}
}
