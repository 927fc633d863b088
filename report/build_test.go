package report_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/report"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// TestBuildNarrative: the report of a narrative run holds every tick's
// story, each character's path (Pip walks wharf -> lock -> undercroft and is
// stuck there when the undercroft's game master fails), and the calls per phase
// with the fallbacks of each.
func TestBuildNarrative(t *testing.T) {
	dir := narrativeRun(t, 3)
	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != "narrative" || r.LastTick != 3 || len(r.Timeline) != 3 || r.Turns != nil || r.Outline != nil {
		t.Fatalf("report: kind %s, last tick %d, %d ticks, turns %v", r.Kind, r.LastTick, len(r.Timeline), r.Turns)
	}
	if f := r.Figures; len(f) != 6 || f[0] != (runner.Field{Key: "model calls", Value: "33"}) || f[4] != (runner.Field{Key: "skipped updates", Value: "0"}) {
		t.Errorf("figures = %v", f)
	}
	if !slices.Equal(r.Paths.Ticks, []int{0, 1, 2, 3}) || len(r.Paths.Paths) != 6 || len(r.Paths.Locations) != 5 {
		t.Fatalf("paths: %+v", r.Paths)
	}
	for _, p := range r.Paths.Paths {
		want := map[string][]string{
			"pip":    {"wharf", "lock", "undercroft", "undercroft"},
			"wren":   {"lock", "common", "apothecary", "apothecary"},
			"hollis": {"common", "common", "common", "common"},
		}[p.ID]
		if want != nil && !slices.Equal(p.At, want) {
			t.Errorf("path of %s = %v, want %v", p.ID, p.At, want)
		}
	}
	// Wren reaches the apothecary, whose only way out is the common, so
	// she stays: 3 ticks of Pip's refused intention, the undercroft
	// failing at ticks 2 and 3 (empty at tick 1 the call still fails).
	totals := map[string]report.PhaseTotal{}
	for _, p := range r.Phases {
		totals[p.Phase] = p
	}
	if in := totals["intention"]; in.Calls != 18 || in.Fallbacks != 3 || in.Failed != 3 {
		t.Errorf("intention totals = %+v, want 18 calls, 3 failed, 3 fallbacks (Pip's)", in)
	}
	if res := totals["resolution"]; res.Calls != 15 || res.Fallbacks != 3 || res.Failed != 3 || res.PromptTokens == 0 {
		t.Errorf("resolution totals = %+v, want 15 calls, 3 failed, 3 fallbacks (the undercroft's)", res)
	}
	if len(r.Calls) != 3 {
		t.Fatalf("%d call charts, want tokens, latency, failures", len(r.Calls))
	}
	var names []string
	for _, s := range r.Calls[2].Series {
		names = append(names, s.Name)
	}
	if want := []string{"intention failed", "intention fallbacks", "resolution failed", "resolution fallbacks"}; !slices.Equal(names, want) {
		t.Errorf("failure series = %v, want %v", names, want)
	}
	for _, s := range r.Calls[0].Series {
		if len(s.Values) != 3 || s.Values[0] == 0 {
			t.Errorf("tokens of %s = %v, want 3 ticks of tokens", s.Name, s.Values)
		}
	}
	var memory bool
	for _, l := range r.Timeline[0].Locations {
		for _, c := range l.Characters {
			memory = memory || slices.Contains(c.Memory, hostileMemory)
		}
	}
	if !memory {
		t.Error("tick 1 lacks Hollis's memory entry")
	}
}

// TestBuildGames: conquest and the duel report every turn with its board
// and log, and each player with their errors; bots make no model calls.
func TestBuildGames(t *testing.T) {
	for _, tc := range []struct {
		demo  string
		turns int
	}{{"conquest-demo", 6}, {"duel-demo", 4}} {
		t.Run(tc.demo, func(t *testing.T) {
			dir := gameRun(t, tc.demo, tc.turns)
			r, err := report.Build(context.Background(), open(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if r.LastTick != tc.turns || len(r.Turns) != tc.turns || r.Timeline != nil || r.Paths != nil {
				t.Fatalf("report: last %d, %d turns, timeline %v", r.LastTick, len(r.Turns), r.Timeline)
			}
			var keys []string
			for _, f := range r.Figures {
				keys = append(keys, f.Key)
			}
			want := map[string]string{"conquest-demo": "order errors", "duel-demo": ""}[tc.demo]
			if slices.Contains(keys, "skipped updates") || (want != "" && !slices.Contains(keys, want)) {
				t.Errorf("figures %v: a game has no skipped updates; conquest counts order errors", keys)
			}
			if len(r.Calls) != 0 || len(r.Phases) != 0 {
				t.Errorf("bots made calls: %+v", r.Phases)
			}
			if len(r.Players) != 2 || r.Players[0].Player != "p1" || r.Players[0].Seat != "bot" || r.Players[1].Player != "p2" {
				t.Errorf("players = %+v", r.Players)
			}
			for i, turn := range r.Turns {
				if turn.N != i+1 || len(turn.Lines) == 0 || len(turn.Board.Fields) == 0 {
					t.Errorf("turn %d: %+v", i+1, turn)
				}
				if turn.Board.Fields[0].Key != "turn" || !strings.HasPrefix(turn.Board.Fields[0].Value, strconv.Itoa(i+1)+" of") {
					t.Errorf("turn %d's board says %v", i+1, turn.Board.Fields[0])
				}
				for _, f := range turn.Board.Fields {
					if f.Key == "map" {
						t.Errorf("turn %d: the map's text is in the fields; it is drawn", i+1)
					}
				}
				switch tc.demo {
				case "conquest-demo":
					if m := turn.Board.Map; m == nil || len(m.Points) == 0 || !slices.Equal(m.Players, []string{"p1", "p2"}) {
						t.Errorf("turn %d: map %+v", i+1, m)
					}
				case "duel-demo":
					if len(turn.Board.Meters) != 2 || turn.Board.Meters[0].Max == 0 {
						t.Errorf("turn %d: meters %+v", i+1, turn.Board.Meters)
					}
				}
			}
			if tc.demo == "conquest-demo" {
				// The boards differ from turn to turn: each is that turn's.
				first, last := r.Turns[0].Board.Fields, r.Turns[len(r.Turns)-1].Board.Fields
				if slices.Equal(first, last) {
					t.Errorf("turn 1 and turn %d show the same board: %v", tc.turns, first)
				}
			}
		})
	}
}

// TestBuildConquestErrors: a conquest game whose bots lose stars in combat
// records order errors; each lands with its player and turn.
func TestBuildConquestErrors(t *testing.T) {
	dir := gameRun(t, "conquest-demo", 40)
	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	var fromTurns, fromPlayers int
	for _, turn := range r.Turns {
		for _, e := range turn.Errors {
			fromTurns++
			if !slices.ContainsFunc(r.Players, func(p session.PlayerErrors) bool {
				return p.Player == e.Player && slices.Contains(p.Errors, session.TurnError{Turn: turn.N, Error: e.Error})
			}) {
				t.Errorf("turn %d's error of %s is not in the player's list: %s", turn.N, e.Player, e.Error)
			}
		}
	}
	for _, p := range r.Players {
		fromPlayers += len(p.Errors)
	}
	if fromTurns == 0 || fromTurns != fromPlayers {
		t.Errorf("%d errors in the turns, %d in the players' lists; want the same, more than 0 (the demo's bots make some)", fromTurns, fromPlayers)
	}
}

// TestBuildChronicle: a chronicle's report is its timeline and its calls.
func TestBuildChronicle(t *testing.T) {
	dir := chronicleRun(t, openaitest.Content("CREATE EVENT The <Flood> IN Dusk TONE dark DESCRIPTION Water & mud."))
	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if r.Outline == nil || len(r.Outline.Periods) == 0 || r.LastTick != 2 {
		t.Fatalf("chronicle report: %+v", r)
	}
	if len(r.Phases) != 1 || r.Phases[0].Phase != "chat" || r.Phases[0].Calls != 1 || r.Phases[0].Failed != 0 || r.Phases[0].Truncated != 0 {
		t.Errorf("phases = %+v, want one chat call, neither failed nor truncated", r.Phases)
	}
}

// TestBuildChronicleTruncated: a chronicle reply cut at max_tokens is kept
// as written; the page counts it as truncated, not as a failed call (the
// store counts it failed: its error kind is truncated).
func TestBuildChronicleTruncated(t *testing.T) {
	dir := chronicleRun(t, openaitest.Truncated("CREATE EVENT The Flood IN Dusk TONE dark DESCRIPTION Water rose over the"))
	ctx := context.Background()
	s := open(t, dir)
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Total.Calls != 1 || st.Total.FailedCalls != 1 {
		t.Fatalf("the store counts %d calls, %d failed; want the cut one among the failed", st.Total.Calls, st.Total.FailedCalls)
	}
	r, err := report.Build(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	if !r.KeepsCuts || len(r.Phases) != 1 || r.Phases[0] != (report.PhaseTotal{Phase: "chat", Calls: 1, Truncated: 1,
		PromptTokens: r.Phases[0].PromptTokens, CompletionTokens: r.Phases[0].CompletionTokens, MeanLatencyMS: r.Phases[0].MeanLatencyMS}) {
		t.Errorf("phases = %+v (keeps cuts %v), want one chat call, truncated, not failed", r.Phases, r.KeepsCuts)
	}
	figures := map[string]string{}
	for _, f := range r.Figures {
		figures[f.Key] = f.Value
	}
	if figures["failed calls"] != "0" || figures["truncated"] != "1" {
		t.Errorf("figures = %v, want 0 failed calls, 1 truncated", r.Figures)
	}
	failed := r.Calls[2]
	var names []string
	for _, s := range failed.Series {
		names = append(names, s.Name)
		want := map[string][]float64{"chat failed": {0, 0}, "chat truncated": {0, 1}}[s.Name]
		if !slices.Equal(s.Values, want) {
			t.Errorf("series %s = %v, want %v", s.Name, s.Values, want)
		}
	}
	if !slices.Equal(names, []string{"chat failed", "chat truncated"}) {
		t.Errorf("failure series = %v", names)
	}
}

// chronicleRun copies chronicle-demo and plays two turns of it: the
// person's bookend, then the model's reply, which is answer.
func chronicleRun(t *testing.T, answer openaitest.Reply) string {
	t.Helper()
	dir := worldtest.Copy(t, "../simulations/chronicle-demo")
	srv := openaitest.New(t, openaitest.Always(answer))
	set := session.Settings{Model: "test-model", Override: session.PhaseOverride{MaxTokens: 200}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.MaxAttempts = srv.URL, 1
		return cfg, nil
	}}
	ctx := context.Background()
	s, err := session.Open(ctx, dir, set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, move := range []any{chronicle.Say{Text: "CREATE PERIOD Dusk LAST TONE dark DESCRIPTION The end."}, chronicle.Reply{}} {
		if _, err := s.Turn(ctx, move); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildNoTick: a simulation never run has nothing to report, and the
// error says to run it first.
func TestBuildNoTick(t *testing.T) {
	dir := worldtest.Copy(t, "../simulations/demo-sim")
	_, err := report.Build(context.Background(), open(t, dir))
	var ie *session.InputError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "no tick committed yet") || !strings.Contains(err.Error(), "arbiter run "+dir) {
		t.Errorf("Build of a sim never run = %v, want an input error saying to run it", err)
	}
}

// TestBuildDuelRefusals: a duel seat whose model fails has each refused
// choice listed under its player, with the turn; the other seat has none.
func TestBuildDuelRefusals(t *testing.T) {
	dir := worldtest.Copy(t, "../simulations/duel-demo")
	yaml := filepath.Join(dir, "simulation.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte("p1: bot")) {
		t.Fatalf("duel-demo no longer seats p1 as a bot:\n%s", b)
	}
	if err := os.WriteFile(yaml, bytes.Replace(b, []byte("p1: bot"), []byte("p1: model"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := openaitest.New(t, openaitest.Always(openaitest.Status(500, "server_error", "", "down")))
	run(t, dir, session.Settings{Model: "test-model", Override: session.PhaseOverride{MaxTokens: 200}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.MaxAttempts = srv.URL, 1
		return cfg, nil
	}}, 3)
	r, err := report.Build(context.Background(), open(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Players) != 2 || r.Players[0].Seat != "model" || len(r.Players[0].Errors) == 0 || len(r.Players[1].Errors) != 0 {
		t.Fatalf("players = %+v, want p1's refused choices and none of p2", r.Players)
	}
	for _, e := range r.Players[0].Errors {
		if e.Turn < 1 || e.Turn > 3 || !strings.Contains(e.Error, "the bot's choice is used") || strings.HasPrefix(e.Error, "p1") {
			t.Errorf("p1's error %+v: want the turn and the reason alone", e)
		}
	}
	if len(r.Phases) == 0 || r.Phases[0].Failed == 0 || r.Phases[0].Failed != r.Phases[0].Calls {
		t.Errorf("phases = %+v, want every call failed", r.Phases)
	}
}
