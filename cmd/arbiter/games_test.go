package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
)

// gameCopy copies simulations/<name> into a temp folder.
func gameCopy(t *testing.T, name string) string {
	t.Helper()
	return worldtest.Copy(t, filepath.Join(repoRoot, "simulations", name))
}

// play runs `arbiter play` with input typed on stdin.
func play(t *testing.T, input string, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := TestStreams(input)
	code := Execute(context.Background(), io, append([]string{"play"}, args...))
	return code, out.String(), errOut.String()
}

// TestGamesRunWithBotsAndNoEndpoint: a game whose seats are bots runs, says
// how it ended, and needs no model endpoint; status and export show it.
func TestGamesRunWithBotsAndNoEndpoint(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct{ sim, statusWant string }{
		{"conquest-demo", "order errors"},
		{"duel-demo", "health"},
	} {
		t.Run(tc.sim, func(t *testing.T) {
			dir := gameCopy(t, tc.sim)
			code, out, errOut := arbiter(t, "run", dir, "--ticks", "3")
			if code != 0 || !strings.Contains(out, "tick 3 committed") || !strings.Contains(out, "completed; last committed tick 3 (3 ticks") {
				t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
			}
			code, out, _ = arbiter(t, "status", dir)
			if code != 0 || !strings.Contains(out, tc.statusWant) || !strings.Contains(out, "last tick:    3") {
				t.Fatalf("status: exit %d\n%s", code, out)
			}
			code, out, _ = arbiter(t, "export", dir, "--format", "json")
			var st map[string]any
			if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
				t.Fatalf("export: exit %d\n%s", code, out)
			}
			// Play to the end: the run stops there and says how.
			code, out, errOut = arbiter(t, "run", dir, "--ticks", "500")
			if code != 0 || !strings.Contains(out, "game_over") || !strings.Contains(out, "game over: ") {
				t.Fatalf("run to the end: exit %d\n%s\n%s", code, out, errOut)
			}
			code, out, _ = arbiter(t, "run", dir, "--ticks", "1")
			if code != 0 || !strings.Contains(out, "(0 ticks this run") {
				t.Fatalf("run after the end: exit %d\n%s", code, out)
			}
		})
	}
}

func TestConquestExportFields(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	if code, out, errOut := arbiter(t, "run", dir, "-n", "2"); code != 0 {
		t.Fatalf("run: %d %s %s", code, out, errOut)
	}
	_, out, _ := arbiter(t, "export", dir, "--format", "json")
	var st struct {
		Turn    int      `json:"turn"`
		Players []string `json:"players"`
		Stars   []struct {
			ID         string         `json:"id"`
			Owner      *string        `json:"owner"`
			X          int            `json:"x"`
			Y          int            `json:"y"`
			Production int            `json:"production"`
			Ships      map[string]int `json:"ships"`
		} `json:"stars"`
		Fleets []any `json:"fleets"`
	}
	if err := json.Unmarshal([]byte(out), &st); err != nil || st.Turn != 2 || len(st.Players) != 2 || len(st.Stars) != 8 || st.Fleets == nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
}

func TestConquestCheckOrders(t *testing.T) {
	cleanEnv(t)
	game := filepath.Join(t.TempDir(), "game.json")
	os.WriteFile(game, []byte(`{"turn": 3, "players": ["p1", "p2"], "stars": [
		{"id": "A", "owner": "p1", "x": 0, "y": 0, "production": 2, "ships": {"p1": 10}},
		{"id": "B", "owner": null, "x": 3, "y": 0, "production": 1, "ships": {}},
		{"id": "C", "owner": "p2", "x": 6, "y": 0, "production": 2, "ships": {"p2": 4}}]}`), 0o644)
	check := func(orders string, args ...string) (int, string, string) {
		io, out, errOut := TestStreams(orders)
		code := Execute(context.Background(), io, append([]string{"conquest", "check-orders", "--game", game, "--player", "p1"}, args...))
		return code, out.String(), errOut.String()
	}
	tests := []struct {
		name, orders string
		code         int
		want         []string
	}{
		{"valid", `[{"from":"A","to":"B","ships":3}]`, 0, []string{`"ok": true`}},
		{"empty list passes", `[]`, 0, []string{`"ok": true`}},
		{"seed over-commitment", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`, 0,
			[]string{`"ok": false`, `"Order 0: Total ships from A (12) exceeds available (10)"`}},
		{"each order alone", `[{"from":"C","to":"B","ships":1},{"from":"A","to":"Z","ships":1},{"from":"A","to":"A","ships":1}]`, 0,
			[]string{`"Order 0: Player p1 does not control origin star C"`, `"Order 1: Destination star Z does not exist"`, `"Order 2: Cannot send fleet to same star"`}},
		{"ships of the wrong type", `[{"from":"A","to":"B","ships":"7"},{"from":"A","to":"B","ships":7.5},{"from":"A","to":"B","ships":null},{"from":"A","to":"B","ships":"seven"}]`, 0,
			[]string{`"Order 0: Ships must be a whole number, got \"7\""`, `"Order 1: Ships must be a whole number, got 7.5"`, `"Order 2: Ships must be a whole number, got null"`,
				`"Order 3: Ships must be a whole number, got \"seven\""`}},
		// issue 21 item 4: the seed's example answer, as propose_orders gives it.
		{"seed example", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5},{"from":"A","to":"Z","ships":1}]`, 0,
			[]string{"{\n  \"ok\": false,\n  \"errors\": [\n    \"Order 0: Total ships from A (12) exceeds available (10)\",\n    \"Order 2: Destination star Z does not exist\"\n  ]\n}\n"}},
		{"a typo does not cost the whole turn", `[{"from":"A","to":"B","ships":7},{"from":"A","to":"Z","ships":5}]`, 0,
			[]string{"{\n  \"ok\": false,\n  \"errors\": [\n    \"Order 1: Destination star Z does not exist\"\n  ]\n}\n"}},
		{"ships too large, a junk order", `[{"from":"A","to":"B","ships":2147483648},{"x":1},7]`, 0,
			[]string{`"Order 0: Ships must be at most 2147483647, got 2147483648"`, `"Order 1: Invalid order object {\"x\":1}: missing \"from\", \"to\" and \"ships\""`,
				`"Order 2: Invalid order object 7: want {\"from\": <star>, \"to\": <star>, \"ships\": <number>}"`}},
		{"not an array", `{"from":"A"}`, 2, []string{"not a JSON array"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := check(tc.orders)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %s:\n%s%s", w, out, errOut)
				}
			}
		})
	}
	if code, _, errOut := check(`[]`, "--player", "p9"); code != 2 || !strings.Contains(errOut, "not a player") {
		t.Errorf("unknown player: exit %d %s", code, errOut)
	}
	if code, _, errOut := check(`[]`, "--game", t.TempDir()); code != 2 || !strings.Contains(errOut, "want a regular file") {
		t.Errorf("a folder as the game: exit %d %s", code, errOut)
	}
	os.WriteFile(game, []byte(`{"turn":1,"players":["p1"],"stars":[{"id":"A","owner":"p7","ships":{}}]}`), 0o644)
	if code, _, errOut := check(`[]`); code != 2 || !strings.Contains(errOut, `owner "p7" is not one of the players`) {
		t.Errorf("bad game file: exit %d %s", code, errOut)
	}
}

// TestPlayConquest: a person's orders are read by the command parser, the
// seed's warnings come before submission, refused lists are asked again, a
// skipped order shows in the seed's block at the start of the next turn,
// and every turn commits.
func TestPlayConquest(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	_, out, _ := arbiter(t, "export", dir, "--format", "json", "--tick", "0")
	var start struct {
		Stars []struct {
			ID    string         `json:"id"`
			Owner string         `json:"owner"`
			Ships map[string]int `json:"ships"`
		} `json:"stars"`
	}
	if err := json.Unmarshal([]byte(out), &start); err != nil {
		t.Fatal(err)
	}
	home, other := "", ""
	for _, st := range start.Stars {
		switch {
		case st.Owner == "p1":
			home = st.ID
		case st.Owner == "" && other == "":
			other = st.ID
		}
	}
	input := strings.Join([]string{
		"SEND 6 FROM " + home + " TO " + other, "SEND 6 FROM " + home + " TO " + other, "", "n", // over-commitment warning, not submitted
		"/drop 2", "/drop 1", // back to the orders typed: both dropped
		"SEND 3 FROM " + home, "", // not read: asked again
		"send 3 from " + strings.ToLower(home) + " to " + strings.ToLower(other), "SEND 2 FROM Z TO " + other, "", "y", // submitted anyway
		"/pass",
		"/quit",
	}, "\n") + "\n"
	code, out, errOut := play(t, input, dir, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"WARNINGS:\n  - Over-commitment at " + home + ": 12 ships ordered but only 10 available\n\nSubmit anyway? (y/n): ",
		"Not read: line 1: Missing required field TO",
		"  - Order 2: Z -> " + other + " with 2 ships: Origin star Z does not exist",
		"  Order 1 of p1 executed: 3 ships " + home + " -> " + other + ", arriving turn ",
		"ORDER ERRORS FROM LAST TURN\n" + strings.Repeat("=", 60) + "\n\nOrder skipped: 2 ships from Z to " + other + "\n  Reason: Origin star Z does not exist\n",
		"Turn 3: your orders, p1?",
		"Left the game",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("play output lacks %q:\n%s", want, out)
		}
	}
	_, status, _ := arbiter(t, "status", dir)
	if !strings.Contains(status, "last tick:    2") || !strings.Contains(status, "p1:           person · ") || !strings.Contains(status, "1 order error ·") {
		t.Errorf("status after play:\n%s", status)
	}
}

func TestPlayUsageErrors(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir}, "no seat of " + dir + " is a person: name the one you play, e.g. `arbiter play " + dir + " --seat p1`"},
		{[]string{dir, "--seat", "p9"}, "--seat p9: not a player"},
		{[]string{demoCopy(t), "--seat", "p1"}, "narrative simulation"},
	} {
		code, _, errOut := play(t, "", tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("play %v: exit %d, %s; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if exists(filepath.Join(dir, "state.db")) {
		t.Error("a refused play left a state.db")
	}
}

// TestRunRefusesAPersonSeat: run cannot play a person's seat and says which
// command does; nothing is written.
func TestRunRefusesAPersonSeat(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	yaml := filepath.Join(dir, "simulation.yaml")
	b, _ := os.ReadFile(yaml)
	os.WriteFile(yaml, []byte(strings.Replace(string(b), "p1: bot ", "p1: person ", 1)), 0o644)
	code, out, errOut := arbiter(t, "run", dir)
	if code != 2 || !strings.Contains(errOut, "arbiter play "+dir+" --seat p1") {
		t.Fatalf("run with a person seat: exit %d\n%s\n%s", code, out, errOut)
	}
	if exists(filepath.Join(dir, "state.db")) {
		t.Error("a refused run left a state.db")
	}
}

// TestPlayDuel: a person plays a duel seat at the terminal through the
// game's Chooser; a ship that is not offered is said and asked again, in
// the same step.
func TestPlayDuel(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "duel-demo")
	input := "none\n/quit\n"
	code, out, errOut := play(t, input, dir, "--seat", "p1")
	if code != 0 || !strings.Contains(out, "build (a ship above, \"<ship> <your ship>\" to upgrade, or none)> ") || !strings.Contains(out, "Left the game") {
		t.Fatalf("play duel: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = play(t, "Nonesuch\n/quit\n", dir, "--seat", "p1")
	if code != 0 || !strings.Contains(out, `"Nonesuch" is not a ship you can build or upgrade into now: type one of `) || strings.Count(out, "build (a ship above, ") != 2 {
		t.Fatalf("play duel, a ship not offered is asked again: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestPromptsRenderConquest: the opening call of a model seat's turn is
// shown with its tools; a wrong phase or player is a usage error.
func TestPromptsRenderConquest(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	code, out, errOut := arbiter(t, "prompts", "render", dir, "--phase", "orders", "--entity", "p2")
	if code != 0 || !strings.Contains(out, "You command player p2") || !strings.Contains(out, "Turn 1 of 40. You are p2.") || !strings.Contains(out, `"propose_orders"`) {
		t.Fatalf("render: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, args := range [][]string{{"--phase", "chat", "--entity", "p1"}, {"--phase", "orders", "--entity", "p9"}} {
		if code, _, errOut := arbiter(t, append([]string{"prompts", "render", dir}, args...)...); code != 2 || errOut == "" {
			t.Errorf("render %v: exit %d %s", args, code, errOut)
		}
	}
}

// TestArena: seeded games of a demo between bots, as a table and as JSON;
// bad seats are usage errors; the simulation's own run state is untouched.
func TestArena(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	code, out, errOut := arbiter(t, "arena", dir, "--games", "4", "--seed", "2", "--seats", "bot,bot")
	if code != 0 || !strings.Contains(out, "4 games, seeds 2..5") || !strings.Contains(out, "invalid/turn") {
		t.Fatalf("arena: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = arbiter(t, "arena", dir, "--games", "2", "--json")
	var tab struct {
		Games   int `json:"games"`
		Players []struct {
			Wins, Losses, Draws int
		} `json:"players"`
		Results []any `json:"results"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &tab) != nil || tab.Games != 2 || len(tab.Results) != 2 || len(tab.Players) != 2 {
		t.Fatalf("arena --json: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seats", "bot,person"}, `seat p2 is "person"`},
		{[]string{"--seats", "bot,bot,bot"}, "3 seats for 2 players"},
		{[]string{"--seats", "p1=model"}, "no model endpoint"},
		{[]string{"--games", "0"}, "--games must be"},
	} {
		if code, _, errOut := arbiter(t, append([]string{"arena", dir}, tc.args...)...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("arena %v: exit %d %s; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := arbiter(t, "arena", demoCopy(t)); code != 2 || !strings.Contains(errOut, "an arena plays conquest or duel") {
		t.Errorf("arena on a narrative simulation: exit %d %s", code, errOut)
	}
	if exists(filepath.Join(dir, "state.db")) {
		t.Error("the arena wrote the simulation's state.db")
	}
}

// Seed 002's budget_exhausted for a conquest model seat that spends its 15
// model turns without submitting: -v shows the ERROR state, the handler's
// message and the pass's RECOVERY_ATTEMPT, and `arbiter story` tells them
// with the turn.
func TestBudgetExhaustedModelSeatOnVerboseAndStory(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.ToolCalls(openaitest.Tool("look", "get_state", map[string]any{}))))
	dir := gameCopy(t, "conquest-demo")
	seatModel(t, dir)
	lines := []string{"EMIT: STATE_ENTRY state=ERROR error_type=budget_exhausted\n",
		`EMIT: "Model turn budget exhausted: p1 passes its turn (no submit_orders in 15 model turns)"` + "\n",
		"EMIT: RECOVERY_ATTEMPT strategy=pass_turn success=true\n"}
	code, out, errOut := arbiter(t, "run", dir, "--ticks", "1", "-v")
	if code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	texttest.InOrder(t, errOut, append([]string{"EMIT: STATE_ENTRY state=ORDERS\n"}, append(lines, "EMIT: STATE_ENTRY state=COMMIT\n")...)...)
	code, story, errOut := arbiter(t, "story", dir)
	if code != 0 {
		t.Fatalf("story: exit %d\n%s", code, errOut)
	}
	texttest.InOrder(t, story, append([]string{"turn 1\n", "  passed: p1: no submit_orders in 15 model turns"}, lines...)...)
}
