package report_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/session"
)

// Text the storyteller writes that a page must show as text, never as
// markup.
const (
	hostileMemory = `Saw "<b>CLOSED</b>" & <script>alert("x")</script> on the door`
	hostileMoment = `A lamp gutters. <img src="http://evil.example/x.png" onerror="alert(1)">`
)

// routes are where the storyteller walks characters: from a place, to the
// next one of the route (cyclic) when the game master may send them there.
var routes = map[string][]string{
	"pip":  {"wharf", "lock", "undercroft"},
	"wren": {"lock", "common", "apothecary"},
}

// storyteller is a model that writes readable text: Pip's intention call is
// refused (it falls back), the game master of the undercroft always fails (its
// location falls back), Pip and Wren walk their routes, Hollis remembers
// hostileMemory and the Drowned Bell's moment is hostileMoment.
func storyteller() openaitest.Handler {
	choose := func(ptr string, enum []any) any {
		id, ok := strings.CutPrefix(ptr, "/characters/")
		id, ok2 := strings.CutSuffix(id, "/location")
		route := routes[id]
		if !ok || !ok2 || route == nil || len(enum) == 0 {
			return nil
		}
		i := slices.Index(route, fmt.Sprint(enum[0]))
		if i < 0 {
			return nil
		}
		next := route[(i+1)%len(route)]
		if slices.Contains(enum, any(next)) {
			return next
		}
		return nil
	}
	write := func(c *openaitest.Call) openaitest.Reply {
		v, err := openaitest.Instance(c, choose)
		if err != nil {
			return openaitest.Status(400, "invalid_request_error", "", err.Error())
		}
		rewrite(v, "", c)
		return openaitest.JSON(v)
	}
	return openaitest.Match(write,
		openaitest.Route{
			If: func(c *openaitest.Call) bool {
				return c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "Pip")
			},
			Then: openaitest.Always(openaitest.Refusal("I won't play Pip.")),
		},
		openaitest.Route{
			If:   func(c *openaitest.Call) bool { return c.SchemaConst("location_id") == "undercroft" },
			Then: openaitest.Always(openaitest.Status(500, "server_error", "", "the undercroft is flooded")),
		},
	)
}

var lines = map[string][]string{
	"intention":       {"I ask the ferryman what he saw last night.", "I count the coins twice and hide the purse.", "I follow the wet footprints to the gate."},
	"memory_entry":    {"The ferryman would not meet my eyes.", "Someone had moved the lantern.", "The water rose a hand's width in an hour."},
	"moment":          {"Fog lies thick on the canal; a bell rings once.", "Rain drums on the roof tiles.", "A barge scrapes against the stones."},
	"internal_state":  {"Uneasy, and hiding it.", "Curious.", "Tired but stubborn."},
	"external_intent": {"Watching the door.", "Pacing by the window.", "Talking low with a stranger."},
	"description":     {"Damp, crowded, loud.", "Quiet but for the water.", "Lit by one lantern."},
}

// rewrite replaces the generated strings of an answer with readable lines
// picked by field name and call number.
func rewrite(v any, ptr string, c *openaitest.Call) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	for k, x := range m {
		p := ptr + "/" + k
		if _, isStr := x.(string); !isStr {
			rewrite(x, p, c)
			continue
		}
		switch {
		case p == "/characters/hollis/memory_entry":
			m[k] = hostileMemory
		case p == "/location/moment" && c.SchemaConst("location_id") == "common":
			m[k] = hostileMoment
		case lines[k] != nil:
			m[k] = lines[k][c.N%len(lines[k])]
		}
	}
}

// narrativeRun copies demo-sim, runs ticks of it against the storyteller
// and returns the simulation's folder.
func narrativeRun(t *testing.T, ticks int) string {
	t.Helper()
	dir := worldtest.Copy(t, "../simulations/demo-sim")
	srv := openaitest.New(t, storyteller())
	set := session.Settings{Depth: 1, Model: "test-model", Override: session.PhaseOverride{MaxTokens: 500}, LLM: func() (session.ClientConfig, error) {
		cfg := session.DefaultClientConfig()
		cfg.BaseURL, cfg.MaxAttempts, cfg.RepairAttempts, cfg.BackoffBase = srv.URL, 1, 0, time.Millisecond
		return cfg, nil
	}}
	run(t, dir, set, ticks)
	return dir
}

// gameRun copies a game demo (its seats are bots) and plays turns of it.
func gameRun(t *testing.T, demo string, turns int) string {
	t.Helper()
	dir := worldtest.Copy(t, "../simulations/"+demo)
	run(t, dir, session.Settings{}, turns)
	return dir
}

func run(t *testing.T, dir string, set session.Settings, ticks int) {
	t.Helper()
	ctx := context.Background()
	s, err := session.Open(ctx, dir, set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// As `arbiter run` does: the run's manifest is stored with its first
	// tick, and the page names the run of each tick.
	if err := s.StartRun(map[string]string{}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Run(ctx, ticks); err != nil {
		t.Fatalf("run %s: %v", dir, err)
	}
}

// open opens dir read-only, as `arbiter report` does.
func open(t *testing.T, dir string) *session.Session {
	t.Helper()
	s, err := session.Open(context.Background(), dir, session.Settings{}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
