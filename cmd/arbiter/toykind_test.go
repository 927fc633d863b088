package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// The toy kind proves the seam of the session layer: a counting game that
// no line outside this file (and its template, testdata/toy/toy_count.md)
// knows, registered as the four kinds register, and played through the
// commands a user types. Two seats take turns adding 1 or 2 to a count;
// whoever reaches the target wins. A bot adds what the configuration's
// toy.bot_adds says; a person says how much at the terminal; a model
// answers the toy's own template. Its board on the report page is a track
// of the count, drawn with the report's own parts.

//go:embed testdata/toy/toy_count.md
var toyTemplate []byte

func init() {
	prompts.AddDefault("toy_count.md", toyTemplate)
	session.Register("toy", session.Opener{Kind: (*toy)(nil), Reads: world.Reads{Folders: []string{"prompts"}}, Open: openToy, Section: toySection,
		Templates: []session.PhaseTemplates{{Phase: "count", Templates: []string{"toy_count.md"}}}})
}

// toyConfig is the toy's section of the configuration: its model seat and
// what a bot adds.
type toyConfig struct {
	session.PhaseConfig `mapstructure:",squash" yaml:",inline"`
	BotAdds             int `mapstructure:"bot_adds" yaml:"bot_adds" json:"bot_adds"`
}

var toySection = &session.Section{
	Key:      "toy",
	Defaults: map[string]any{"model": "", "temperature": 0.0, "max_tokens": 5, "bot_adds": 1},
	Ints:     []session.IntBound{{Key: "max_tokens", Min: 1, Max: session.MaxTokensBound}, {Key: "bot_adds", Min: 0, Max: 100}},
	New:      func() session.SectionConfig { return &toyConfig{} },
}

func (c *toyConfig) Phases() map[string]*session.PhaseConfig {
	return map[string]*session.PhaseConfig{"": &c.PhaseConfig}
}

func (c *toyConfig) Check(where func(string) string) []error {
	if c.BotAdds != 1 && c.BotAdds != 2 {
		return []error{fmt.Errorf("%s: must be 1 or 2, got %d", where("toy.bot_adds"), c.BotAdds)}
	}
	return nil
}

func (c *toyConfig) Clone() session.SectionConfig {
	d := *c
	return &d
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
	target  int
	seats   map[string]string // p1, p2 -> bot | person | model
	botAdds int
	params  session.Params
	prompts *prompts.Renderer
	client  *llm.Client
}

func openToy(sim *world.Simulation, pr *prompts.Renderer, set session.Settings) (session.Kind, error) {
	cfg := session.SectionOf[*toyConfig](set, toySection)
	g := &toy{target: 5, seats: map[string]string{"p1": "bot", "p2": "bot"}, botAdds: cfg.BotAdds, params: set.Params(cfg.PhaseConfig), prompts: pr}
	if n, ok := sim.Settings["target"].(int); ok {
		g.target = n
	}
	if seats, ok := sim.Settings["seats"].(map[string]any); ok {
		for p, s := range seats {
			if _, known := g.seats[p]; !known || (s != "bot" && s != "person" && s != "model") {
				return nil, fmt.Errorf("%s: seats.%s: %v is not bot, person or model", filepath.Join(sim.Dir, "simulation.yaml"), p, s)
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
		if st.Winner != "" {
			break
		}
		add := g.botAdds
		switch g.seats[p] {
		case "person":
			move, _ := in.(toyMove)
			n, ok := move[p]
			if !ok {
				return nil, runner.Refusal(p + " is a person: `arbiter play` asks them")
			}
			add = n
		case "model":
			n, err := g.ask(ctx, t, p, st.Count)
			if err != nil {
				return nil, err
			}
			add = n
		}
		st.Count += add
		st.Log = append(st.Log, fmt.Sprintf("%s adds %d: %d", p, add, st.Count))
		if st.Count >= g.target {
			st.Winner = p
		}
	}
	return &st, nil
}

// ask is the model seat p's call: what it adds to count (1 when its
// answer is not 1 or 2, or the call failed).
func (g *toy) ask(ctx context.Context, t *runner.Tick, p string, count int) (int, error) {
	add := 1
	_, err := t.Phase(ctx, runner.Phase{Name: "count", Calls: 1, Strategy: "add_one", Final: true}, func(ctx context.Context) ([]runner.Call, error) {
		req, err := g.request(p, count)
		if err != nil {
			return nil, err
		}
		res := g.client.Chat(ctx, req)
		if n, err := strconv.Atoi(strings.TrimSpace(res.Content)); res.Err == nil && err == nil && (n == 1 || n == 2) {
			add = n
		}
		return []runner.Call{{Result: &llm.Result{Request: llm.Request{EntityKey: req.EntityKey, Phase: "count", Tick: t.N, Params: req.Params},
			Messages: req.Messages, Raw: res.Content, Attempts: res.Attempts, Usage: res.Usage, Err: res.Err}, Fallback: res.Err != nil}}, nil
	})
	return add, err
}

// request is seat p's call at count: the toy's template, rendered.
func (g *toy) request(p string, count int) (llm.ChatRequest, error) {
	text, err := g.prompts.Render("toy_count.md", map[string]any{"Seat": p, "Count": count})
	return llm.ChatRequest{EntityKey: "count:" + p, Phase: "count", Params: g.params, Messages: []llm.Message{{Role: "user", Content: text}}}, err
}

func (g *toy) NeedsModel(people ...string) bool {
	for p, seat := range g.seats {
		if seat == "model" && !slices.Contains(people, p) {
			return true
		}
	}
	return false
}

func (g *toy) UseClient(c *llm.Client) { g.client = c }

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

func (g *toy) Manifest() session.ManifestPart {
	return session.ManifestPart{Models: []manifest.PhaseModel{{Phase: "count", Model: g.params.Model}}, Templates: []string{"toy_count.md"}}
}

func (g *toy) Request(_ context.Context, q session.RequestQuery) (*session.Request, error) {
	if q.Phase != "count" {
		return nil, &session.InputError{Err: fmt.Errorf("--phase %q: a toy has one phase, count", q.Phase)}
	}
	req, err := g.request(q.Entity, q.State.(*toyState).Count)
	if err != nil {
		return nil, err
	}
	return &session.Request{Phase: q.Phase, EntityKey: req.EntityKey, Tick: q.Tick + 1, Model: req.Params.Model, MaxTokens: req.Params.MaxTokens, Messages: req.Messages}, nil
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
			return session.Board{Fields: fields, Map: g.track(state.(*toyState)), Meters: []session.Meter{{Label: "count", Value: state.(*toyState).Count, Max: g.target}}}, err
		})
}

// track is the toy's board: a cell for each number up to the target,
// the one the count stands on owned by whoever brought it there.
func (g *toy) track(st *toyState) *session.Grid {
	m := &session.Grid{Width: g.target + 1, Height: 1, Players: []string{"p1", "p2"}}
	for n := 0; n <= g.target; n++ {
		pt := session.Point{ID: "n" + strconv.Itoa(n), X: n, Label: strconv.Itoa(n), Title: fmt.Sprintf("count %d", n)}
		if n == min(st.Count, g.target) {
			pt.Size, pt.Owner, pt.Title = 3, st.last(), fmt.Sprintf("count %d, reached by %s", st.Count, st.last())
		}
		m.Points = append(m.Points, pt)
	}
	return m
}

// last is the seat that added last this turn ("" before the first).
func (st *toyState) last() string {
	if len(st.Log) == 0 {
		return ""
	}
	seat, _, _ := strings.Cut(st.Log[len(st.Log)-1], " ")
	return seat
}

func (*toy) Help(command string) string {
	if command == "play" {
		return "  Add 1 or 2 to the count.\n"
	}
	return ""
}

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
	mustRun("You play a counting game as p1. The count is 4. Add 1 or 2: answer with the digit alone.", "prompts", "render", dir, "--phase", "count", "--entity", "p1")
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

// TestToyKindCallsItsModel: the toy's model seat is asked with the toy's
// own template, at the model and temperature of the toy's section of the
// configuration, and what it answers is played; its section's key is
// read and checked, and its report page draws its board.
func TestToyKindCallsItsModel(t *testing.T) {
	cleanEnv(t)
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("2")))
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("ARBITER_TOY_MODEL", "counter-1")
	t.Setenv("ARBITER_TOY_BOT_ADDS", "2")
	dir := toySim(t, "  seats: {p1: model}\n")
	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	calls := srv.Calls()
	if len(calls) != 1 || calls[0].Request.Model != "counter-1" || calls[0].Request.Temperature != 0 ||
		!strings.Contains(calls[0].Request.Messages[0].Content, "You play a counting game as p1. The count is 0.") {
		t.Fatalf("the model was asked %d calls: %+v", len(calls), calls)
	}
	if _, out, _ := arbiter(t, "story", dir); !strings.Contains(out, "p1 adds 2: 2\n  p2 adds 2: 4\n") {
		t.Errorf("story: the model's 2 and the bot's toy.bot_adds are not played:\n%s", out)
	}
	page := filepath.Join(t.TempDir(), "toy.html")
	if code, _, errOut := arbiter(t, "report", dir, "-o", page); code != 0 {
		t.Fatalf("report: exit %d\n%s", code, errOut)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), "<title>count 4, reached by p2</title>") {
		t.Errorf("the report lacks the toy's board: %v", err)
	}
	if _, out, _ := arbiter(t, "config", "show"); !strings.Contains(out, "  toy:\n    model: counter-1 # env ARBITER_TOY_MODEL\n") || !strings.Contains(out, "    bot_adds: 2 # env ARBITER_TOY_BOT_ADDS\n") {
		t.Errorf("config show lacks the toy's section:\n%s", out)
	}
	t.Setenv("ARBITER_TOY_BOT_ADDS", "3")
	if code, _, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != ExitUsage || errOut != "arbiter: ARBITER_TOY_BOT_ADDS (toy.bot_adds): must be 1 or 2, got 3\n" {
		t.Errorf("toy.bot_adds 3: exit %d\n%s", code, errOut)
	}
	t.Setenv("ARBITER_TOY_BOT_ADDS", "")
	cfg := writeConfig(t, "toy:\n  bot_adds: 0\n")
	if code, _, errOut := arbiter(t, "--config", cfg, "run", dir, "--ticks", "1"); code != ExitUsage || errOut != "arbiter: config "+cfg+": toy.bot_adds: must be 1 or 2, got 0\n" {
		t.Errorf("toy.bot_adds 0 in a config file: exit %d\n%s", code, errOut)
	}
	cfg = writeConfig(t, "toy:\n  colour: red\n")
	if _, _, errOut := arbiter(t, "--config", cfg, "config", "show"); !strings.Contains(errOut, "toy.colour: unknown key, ignored (toy holds bot_adds, max_tokens, model, temperature)") {
		t.Errorf("an unknown key of the toy's section:\n%s", errOut)
	}
}
