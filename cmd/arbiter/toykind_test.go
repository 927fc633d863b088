package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// The toy kind proves the seam of the session layer: a counting game that
// no line outside this file knows, registered as the four kinds register,
// and played through the commands a user types. Two seats take turns
// adding 1 or 2 to a count; whoever reaches the target wins. A bot adds 1;
// a person says how much at the terminal.

func init() {
	session.Register("toy", session.Opener{Kind: (*toy)(nil), Reads: world.Reads{Folders: []string{"prompts"}}, Open: openToy})
}

type toyState struct {
	Count  int      `json:"count"`
	Turn   int      `json:"turn"`
	Log    []string `json:"log"`
	Winner string   `json:"winner,omitempty"`
}

// toyMove is what the people at the terminal add, by seat.
type toyMove map[string]int

type toy struct {
	target int
	seats  map[string]string // p1, p2 -> bot | person
}

func openToy(sim *world.Simulation, _ *prompts.Renderer, _ session.Settings) (session.Kind, error) {
	g := &toy{target: 5, seats: map[string]string{"p1": "bot", "p2": "bot"}}
	if n, ok := sim.Settings["target"].(int); ok {
		g.target = n
	}
	if seats, ok := sim.Settings["seats"].(map[string]any); ok {
		for p, s := range seats {
			if _, known := g.seats[p]; !known || (s != "bot" && s != "person") {
				return nil, fmt.Errorf("%s: seats.%s: %v is not bot or person", filepath.Join(sim.Dir, "simulation.yaml"), p, s)
			}
			g.seats[p] = s.(string)
		}
	}
	return g, nil
}

func (g *toy) Kind() string { return "toy" }

func (g *toy) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return &toyState{Log: []string{}}, nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var s toyState
	return &s, json.Unmarshal(raw, &s)
}

func (g *toy) Step(ctx context.Context, t *runner.Tick, s, in any) (any, error) {
	st := *s.(*toyState)
	st.Turn++
	st.Log = []string{}
	for _, p := range []string{"p1", "p2"} {
		add := 1
		if g.seats[p] == "person" {
			move, _ := in.(toyMove)
			n, ok := move[p]
			if !ok {
				return nil, runner.Refusal(p + " is a person: `arbiter play` asks them")
			}
			add = n
		}
		if st.Winner != "" {
			break
		}
		st.Count += add
		st.Log = append(st.Log, fmt.Sprintf("%s adds %d: %d", p, add, st.Count))
		if st.Count >= g.target {
			st.Winner = p
		}
	}
	return &st, nil
}

func (g *toy) Encode(rec *store.TickRecord, _, s any) (err error) {
	rec.State, err = json.Marshal(s)
	return err
}

func (g *toy) Over(s any) (bool, string) {
	st := s.(*toyState)
	return st.Winner != "", st.Winner + " reached " + strconv.Itoa(g.target)
}

func (g *toy) Export(_ context.Context, _ *store.Store, s any) (any, error) { return s, nil }

func (g *toy) Status(_ context.Context, _ *store.Store, s any) ([]runner.Field, error) {
	st := s.(*toyState)
	return []runner.Field{{Key: "count", Value: fmt.Sprintf("%d of %d", st.Count, g.target)}, {Key: "winner", Value: st.Winner}}, nil
}

func (g *toy) Manifest() session.ManifestPart { return session.ManifestPart{} }

func (g *toy) Request(_ context.Context, q session.RequestQuery) (*session.Request, error) {
	if q.Phase != "count" {
		return nil, &session.InputError{Err: fmt.Errorf("--phase %q: a toy has one phase, count", q.Phase)}
	}
	return &session.Request{Phase: q.Phase, EntityKey: "count:" + q.Entity, Tick: q.Tick + 1, Messages: []llm.Message{
		{Role: "system", Content: "You count."}, {Role: "user", Content: fmt.Sprintf("The count is %d. Add 1 or 2.", q.State.(*toyState).Count)}}}, nil
}

func (g *toy) CheckStory(dir string, q session.StoryQuery) error {
	return session.CheckTurnStory(dir, "toy", q)
}

func (g *toy) Story(ctx context.Context, st *store.Store, from, to int, _ session.StoryQuery, out *session.Story) error {
	for tick := from; tick <= to; tick++ {
		s, err := g.Load(ctx, st, tick)
		if err != nil {
			return err
		}
		out.Turns = append(out.Turns, session.StoryTurn{Turn: tick, Lines: s.(*toyState).Log, Errors: []session.PlayerError{}})
	}
	return nil
}

func (g *toy) Report(ctx context.Context, s *session.Session) (*session.ReportPart, error) {
	return s.GameReport(ctx, []string{"p1", "p2"}, func(p string) string { return g.seats[p] },
		func(ctx context.Context, state any) (session.Board, error) {
			fields, err := g.Status(ctx, nil, state)
			return session.Board{Fields: fields, Meters: []session.Meter{{Label: "count", Value: state.(*toyState).Count, Max: g.target}}}, err
		})
}

func (*toy) PlayHelp() string { return "  Add 1 or 2 to the count.\n" }

func (g *toy) Table(bool) *session.Table {
	return &session.Table{
		Players: []string{"p1", "p2"},
		People:  session.SeatsOf(g.seats, "person"),
		Intro:   func(people []string) string { return "You play " + strings.Join(people, " and ") + ": add 1 or 2.\n" },
		Over: func(s any) (bool, string) {
			over, how := g.Over(s)
			return over, "Game over: " + how + "\n"
		},
		Move: func(ctx context.Context, s any, people []string, p session.Person) (any, error) {
			move := toyMove{}
			for _, seat := range people {
				v, err := p.Ask(ctx, session.Question{Seat: seat, Screen: fmt.Sprintf("count %d\n", s.(*toyState).Count), Prompt: "add> ",
					Read: func(a string) (any, string) {
						if a != "1" && a != "2" {
							return nil, fmt.Sprintf("%q: add 1 or 2.", a)
						}
						n, _ := strconv.Atoi(a)
						return n, ""
					}})
				if err != nil {
					return nil, err
				}
				move[seat] = v.(int)
			}
			return move, nil
		},
		Told: func(_ context.Context, s any) ([]string, error) { return s.(*toyState).Log, nil },
	}
}

// toySim writes a toy simulation to a temporary folder.
func toySim(t *testing.T, settings string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "toy")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml := "id: toy\ntitle: Count to five\nkind: toy\nsettings:\n  target: 5\n" + settings
	if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestToyKindThroughTheCommands: a kind that only this file knows is run,
// resumed, shown (status, export, story, story --json), reported, its
// request rendered, and played by a person, through the commands.
func TestToyKindThroughTheCommands(t *testing.T) {
	cleanEnv(t)
	dir := toySim(t, "")
	mustRun := func(want string, args ...string) string {
		t.Helper()
		code, out, errOut := arbiter(t, args...)
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("arbiter %s: exit %d, want %q in stdout\n%s\n%s", strings.Join(args, " "), code, want, out, errOut)
		}
		return out
	}
	mustRun("ok: toy", "validate", dir)
	mustRun("tick 1 committed", "run", dir, "--ticks", "1")
	mustRun("tick 2 committed", "run", dir, "--ticks", "1") // resumed from tick 1
	mustRun("count:        4 of 5\n", "status", dir)
	if out := mustRun(`"count": 2`, "export", dir, "--tick", "1"); !strings.Contains(out, `"turn": 1`) {
		t.Errorf("export of tick 1:\n%s", out)
	}
	mustRun("turn 2\n  p1 adds 1: 3\n  p2 adds 1: 4\n", "story", dir)
	var story session.Story
	if err := json.Unmarshal([]byte(mustRun(`"turns"`, "story", dir, "--json")), &story); err != nil || story.Kind != "toy" || len(story.Turns) != 2 {
		t.Errorf("story --json: %+v, %v", story, err)
	}
	mustRun("The count is 4. Add 1 or 2.", "prompts", "render", dir, "--phase", "count", "--entity", "p1")
	page := filepath.Join(t.TempDir(), "toy.html")
	if code, _, errOut := arbiter(t, "report", dir, "-o", page); code != 0 || !strings.Contains(errOut, "2 turns") {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "p2 adds 1: 4") || !strings.Contains(string(b), `id="turn-2"`) {
		t.Errorf("the report lacks the turns: %v", err)
	}
	if code, _, errOut := arbiter(t, "story", dir, "--location", "x"); code != ExitUsage || !strings.Contains(errOut, "is a toy game") {
		t.Errorf("story --location: exit %d\n%s", code, errOut)
	}
}

// TestToyKindPlayed: a person plays the toy at the terminal; an answer
// that does not read is asked again, and the game ends when the count is
// reached.
func TestToyKindPlayed(t *testing.T) {
	cleanEnv(t)
	dir := toySim(t, "  seats: {p2: person}\n")
	if code, _, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != ExitUsage || !strings.Contains(errOut, "p2 is a person") {
		t.Errorf("run with a person seat: exit %d\n%s", code, errOut)
	}
	code, out, errOut := play(t, "3\n2\n2\n", dir)
	for _, want := range []string{"You play p2: add 1 or 2.\n", "count 0\nadd> ", `"3": add 1 or 2.`, "  p2 adds 2: 3\n", "  p1 adds 1: 4\n", "  p2 adds 2: 6\n", "Game over: p2 reached 5\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("play lacks %q", want)
		}
	}
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	if code, _, _ := play(t, "", dir); code != 0 {
		t.Errorf("play of an ended game: exit %d", code)
	}
}
