package phases

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

func TestExtractIntentionsForLocation(t *testing.T) {
	all := map[string]string{"ada": "cook soup", "bo": "steal the spoon", "cy": "dig"}
	got := IntentionsAt(all, []string{"ada", "bo"})
	want := map[string]string{"ada": "cook soup", "bo": "steal the spoon"}
	if !maps.Equal(got, want) {
		t.Errorf("IntentionsAt = %v, want %v", got, want)
	}
}

func TestEmptyLocationNoIntentions(t *testing.T) {
	got := IntentionsAt(map[string]string{"ada": "cook"}, nil)
	if len(got) != 0 {
		t.Errorf("IntentionsAt(empty location) = %v, want none", got)
	}
}

// answerFor maps a location (from the request's schema) to a reply.
func answerFor(replies map[string]openaitest.Reply, fallback openaitest.Handler) openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		for loc, r := range replies {
			if c.SchemaConst("location_id") == loc {
				return r
			}
		}
		return fallback(c)
	}
}

func TestExecuteSingleLocation(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	hall := *env.Sim.Locations[2]
	hall.Connections = nil
	env.Sim.Locations = []*world.Location{&hall}
	env.Sim.Characters = env.Sim.Characters[:1]
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, map[string]string{"ada": "cook soup"})
	if err != nil {
		t.Fatal(err)
	}
	out, ok := Values(res)["hall"]
	if !ok || len(Values(res)) != 1 {
		t.Fatalf("outputs = %v, want hall only", Values(res))
	}
	if out.Tick != 1 || out.LocationID != "hall" {
		t.Errorf("tick, location = %d, %q; want 1, hall", out.Tick, out.LocationID)
	}
	if _, ok := out.Characters["ada"]; !ok || len(out.Characters) != 1 {
		t.Errorf("characters = %v, want ada only", out.Characters)
	}
	if fallbacks(res)["hall"] {
		t.Error("hall fell back")
	}
}

func TestExecuteMultipleLocations(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	env.Model = mustClient(t, srv.URL, 3)
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, map[string]string{"ada": "a", "bo": "b", "cy": "c"})
	if err != nil {
		t.Fatal(err)
	}
	if srv.CallCount() != 3 {
		t.Errorf("calls = %d, want one per location (3)", srv.CallCount())
	}
	for _, loc := range []string{"cellar", "garden", "hall"} {
		if Values(res)[loc].LocationID != loc {
			t.Errorf("output for %s has location_id %q", loc, Values(res)[loc].LocationID)
		}
	}
	if got := slices.Sorted(maps.Keys(Values(res)["hall"].Characters)); !slices.Equal(got, []string{"ada", "bo"}) {
		t.Errorf("hall characters = %v, want [ada bo]", got)
	}
	if srv.MaxInFlight() < 2 {
		t.Logf("calls did not overlap (max in flight %d); parallelism is asserted in llm's batch tests", srv.MaxInFlight())
	}
}

func TestExecuteEmptyLocation(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, ok := Values(res)["cellar"]
	if !ok {
		t.Fatal("the empty cellar got no output")
	}
	if len(out.Characters) != 0 || fallbacks(res)["cellar"] {
		t.Errorf("cellar: characters %v, fallback %v; want none, false", out.Characters, fallbacks(res)["cellar"])
	}
	// The empty location's request still went to the game master, with a schema
	// that only admits an empty characters object.
	found := false
	for _, c := range srv.Calls() {
		if c.SchemaConst("location_id") == "cellar" {
			found = true
			var s struct {
				Properties struct {
					Characters struct {
						Properties map[string]any `json:"properties"`
						Required   []string       `json:"required"`
					} `json:"characters"`
				} `json:"properties"`
			}
			if err := json.Unmarshal(c.Schema(), &s); err != nil {
				t.Fatal(err)
			}
			if len(s.Properties.Characters.Properties) != 0 || len(s.Properties.Characters.Required) != 0 {
				t.Errorf("cellar schema admits characters: %+v", s.Properties.Characters)
			}
		}
	}
	if !found {
		t.Error("no request was sent for the empty cellar")
	}
}

func TestExecuteCreatesCorrectRequests(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, map[string]string{"ada": "cook soup", "bo": "steal", "cy": "dig"})
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{"resolution:cellar", "resolution:garden", "resolution:hall"}
	for i, c := range results(res) {
		if c.Request.EntityKey != wantKeys[i] {
			t.Errorf("request %d entity key %q, want %q", i, c.Request.EntityKey, wantKeys[i])
		}
		if c.Request.Phase != PhaseResolution || c.Request.Tick != 1 || c.Request.SchemaName != "MasterOutput" {
			t.Errorf("request %d: phase %q tick %d schema %q", i, c.Request.Phase, c.Request.Tick, c.Request.SchemaName)
		}
	}
	for _, c := range srv.Calls() {
		if c.SchemaName() != "MasterOutput" || !c.Strict() {
			t.Errorf("wire: json_schema name %q strict %v; want MasterOutput, true", c.SchemaName(), c.Strict())
		}
		if c.SchemaConst("location_id") == "hall" && !strings.Contains(c.LastUserMessage(), "cook soup") {
			t.Errorf("hall prompt lacks Ada's intention:\n%s", c.LastUserMessage())
		}
		if c.SchemaConst("location_id") == "hall" && strings.Contains(c.LastUserMessage(), "dig") {
			t.Errorf("hall prompt has Cy's intention (Cy is in the garden):\n%s", c.LastUserMessage())
		}
	}
}

func TestExecutePartialFailureFallback(t *testing.T) {
	h := answerFor(map[string]openaitest.Reply{"garden": openaitest.Status(500, "server_error", "", "boom")}, openaitest.FromSchema(nil))
	env, _, _ := testEnv(t, h)
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatalf("a failed call must not fail the phase: %v", err)
	}
	if !fallbacks(res)["garden"] || fallbacks(res)["hall"] || fallbacks(res)["cellar"] {
		t.Errorf("fallback = %v, want garden only", fallbackIDs(res))
	}
	if got := Values(res)["garden"].Characters["cy"].MemoryEntry; got != FallbackMemory {
		t.Errorf("garden memory entry %q, want %q", got, FallbackMemory)
	}
	if got := Values(res)["hall"].Characters["ada"].MemoryEntry; got == FallbackMemory || got == "" {
		t.Errorf("hall should have the game master's entry, got %q", got)
	}
}

func TestExecuteAllFailureFallback(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.Always(openaitest.Status(500, "server_error", "", "down")))
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fallbackIDs(res)) != 3 || len(Values(res)) != 3 {
		t.Errorf("fallbacks %d outputs %d, want 3 and 3", len(fallbackIDs(res)), len(Values(res)))
	}
	for _, c := range results(res) {
		if c.Err == nil {
			t.Errorf("%s: no error recorded", c.Request.EntityKey)
		}
	}
}

func TestFallbackLogsWarning(t *testing.T) {
	h := answerFor(map[string]openaitest.Reply{"hall": openaitest.Refusal("I can't help with that")}, openaitest.FromSchema(nil))
	env, _, logs := testEnv(t, h)
	if _, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), nil); err != nil {
		t.Fatal(err)
	}
	got := logs.String()
	if !strings.Contains(got, "level=WARN") || !strings.Contains(got, "Phase 2a: hall fallback (refusal: ") {
		t.Errorf("log lacks the seed's warning:\n%s", got)
	}
	if strings.Contains(got, "garden fallback") {
		t.Errorf("a successful location was logged as fallback:\n%s", got)
	}
}

func TestFallbackPreservesCurrentState(t *testing.T) {
	sim := testWorld()
	st := sim.InitialState()
	st.Tick = 4
	out := Fallback(st, "hall", st.CharactersAt("hall"))
	if out.Tick != 5 || out.LocationID != "hall" {
		t.Errorf("tick %d location %q, want 5, hall", out.Tick, out.LocationID)
	}
	if out.Location.Moment != nil || out.Location.Description != nil {
		t.Error("fallback must leave the location unchanged (null moment and description)")
	}
	for _, id := range []string{"ada", "bo"} {
		cs, u := st.Characters[id], out.Characters[id]
		if u.Location != cs.Location || u.InternalState != cs.InternalState || u.ExternalIntent != cs.ExternalIntent || u.MemoryEntry != FallbackMemory {
			t.Errorf("%s: update %+v does not preserve %+v", id, u, cs)
		}
	}
	next, errs := Apply(sim, st, map[string]MasterOutput{"hall": out})
	if len(errs) != 0 {
		t.Fatalf("fallback output rejected by apply: %v", errs)
	}
	for id, cs := range st.Characters {
		n := next.Characters[id]
		if n.Location != cs.Location || n.InternalState != cs.InternalState || n.ExternalIntent != cs.ExternalIntent {
			t.Errorf("%s changed under a fallback: %+v -> %+v", id, cs, n)
		}
	}
	if next.Locations["hall"] != st.Locations["hall"] {
		t.Errorf("hall changed under a fallback: %+v -> %+v", st.Locations["hall"], next.Locations["hall"])
	}
}

func TestResultHasAllLocations(t *testing.T) {
	h := answerFor(map[string]openaitest.Reply{"cellar": openaitest.Truncated(`{"tick":1,`)}, openaitest.FromSchema(nil))
	env, _, _ := testEnv(t, h)
	res, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range env.Sim.Locations {
		if _, ok := Values(res)[l.ID]; !ok {
			t.Errorf("no output for %s", l.ID)
		}
	}
	if len(results(res)) != len(env.Sim.Locations) {
		t.Errorf("calls %d, want %d", len(results(res)), len(env.Sim.Locations))
	}
}

// TestResultSuccessAlwaysTrue: Resolution fails only for prompts it cannot
// build, never because of what the model did.
func TestResultSuccessAlwaysTrue(t *testing.T) {
	for name, reply := range map[string]openaitest.Reply{
		"invalid json": openaitest.Content("not json"),
		"schema":       openaitest.JSON(map[string]any{"tick": 99}),
		"refusal":      openaitest.Refusal("no"),
		"truncated":    openaitest.Truncated(`{"tick"`),
		"401":          openaitest.Status(401, "invalid_request_error", "invalid_api_key", "bad key"),
	} {
		t.Run(name, func(t *testing.T) {
			env, _, _ := testEnv(t, openaitest.Always(reply))
			res, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), nil)
			if err != nil || res == nil {
				t.Fatalf("Resolution = %v, %v; want a result", res, err)
			}
			if len(fallbackIDs(res)) != len(env.Sim.Locations) {
				t.Errorf("fallbacks %v, want every location", fallbackIDs(res))
			}
		})
	}
}

func TestResultDataContainsMasterOutput(t *testing.T) {
	choose := func(ptr string, enum []any) any {
		if ptr == "/characters/ada/location" {
			return "garden"
		}
		return nil
	}
	env, _, _ := testEnv(t, openaitest.FromSchema(choose))
	res, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), nil)
	if err != nil {
		t.Fatal(err)
	}
	ada := Values(res)["hall"].Characters["ada"]
	if ada.Location != "garden" || ada.MemoryEntry == "" {
		t.Errorf("ada's update %+v: want the model's answer (location garden, a memory entry)", ada)
	}
}

// TestResolutionMaxTokensFitsTheCrowd: a location's call asks for at least
// the tokens its answer can take with everyone present, never less than
// configured.
func TestResolutionMaxTokensFitsTheCrowd(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	env.Params.MaxTokens = 600
	res, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"resolution:cellar": 600, "resolution:garden": 600, "resolution:hall": resolutionTokens(2)}
	for _, c := range results(res) {
		if got := c.Request.Params.MaxTokens; got != want[c.Request.EntityKey] {
			t.Errorf("%s: max_tokens %d, want %d", c.Request.EntityKey, got, want[c.Request.EntityKey])
		}
	}
}

// Seed 004, read per character: an answer whose envelope is valid keeps its
// valid updates; an invalid one is skipped and reported, a missing one falls
// back, and the location does not fall back as a whole.
func TestExecuteOneBadUpdateKeepsTheRest(t *testing.T) {
	tests := []struct {
		name, bo string
		reason   string // of bo's report
	}{
		{"unreachable destination", `"bo": {"memory_entry": "I ran.", "location": "cellar", "internal_state": "scared", "external_intent": "running"}`, ""},
		{"missing field", `"bo": {"memory_entry": "I ran.", "location": "hall", "external_intent": "running"}`, "internal_state"},
		{"not an object", `"bo": "ran away"`, "want object"},
		{"missing", ``, "no update"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chars := `"ada": {"memory_entry": "I cooked.", "location": "garden", "internal_state": "proud", "external_intent": "serving"}`
			if tt.bo != "" {
				chars += ", " + tt.bo
			}
			hall := openaitest.Content(`{"tick": 1, "location_id": "hall", "characters": {` + chars + `, "zed": {"memory_entry": "?", "location": "hall", "internal_state": "", "external_intent": ""}}, "location": {"moment": "Soup.", "description": null}}`)
			env, _, logs := testEnv(t, answerFor(map[string]openaitest.Reply{"hall": hall}, openaitest.FromSchema(nil)))
			st := env.Sim.InitialState()
			res, err := resolutionPhase(context.Background(), env, st, nil)
			if err != nil {
				t.Fatal(err)
			}
			if fallbacks(res)["hall"] {
				t.Fatalf("hall fell back as a whole: %v", results(res)[2].Err)
			}
			var hallOut Outcome[MasterOutput]
			for _, o := range res {
				if o.ID == "hall" {
					hallOut = o
				}
			}
			if got := hallOut.Value.Characters["ada"]; got.MemoryEntry != "I cooked." || got.Location != "garden" {
				t.Errorf("ada's valid update lost: %+v", got)
			}
			next, applyErrs := Apply(env.Sim, st, Values(res))
			all := append(slices.Clone(hallOut.Skipped), applyErrs...)
			if ada := next.Characters["ada"]; ada.Location != "garden" || ada.InternalState != "proud" {
				t.Errorf("ada after apply = %+v, want her update applied", ada)
			}
			if bo := next.Characters["bo"]; bo.Location != "hall" || bo.InternalState != "greedy" {
				t.Errorf("bo after apply = %+v, want unchanged", bo)
			}
			var boReasons, zedReasons []string
			for _, e := range all {
				switch e.CharacterID {
				case "bo":
					boReasons = append(boReasons, e.Reason)
				case "zed":
					zedReasons = append(zedReasons, e.Reason)
				}
			}
			if len(boReasons) != 1 || !strings.Contains(boReasons[0], cmp.Or(tt.reason, "not reachable")) {
				t.Errorf("bo's reports = %q, want one naming %q", boReasons, cmp.Or(tt.reason, "not reachable"))
			}
			if len(zedReasons) != 1 {
				t.Errorf("zed (unknown id) reports = %q, want one", zedReasons)
			}
			if tt.name == "missing" && !strings.Contains(logs.String(), "bo") {
				t.Errorf("a missing update was not logged:\n%s", logs.String())
			}
			if got := next.Locations["hall"].Moment; got != "Soup." {
				t.Errorf("hall moment = %q, want the game master's", got)
			}
		})
	}
}

// Seed 004: moment and description are optional (str | None = None); an
// answer that leaves them out keeps the current values.
func TestExecuteLocationUpdateMayOmitFields(t *testing.T) {
	cellar := openaitest.Content(`{"tick": 1, "location_id": "cellar", "characters": {}, "location": {}}`)
	env, _, _ := testEnv(t, answerFor(map[string]openaitest.Reply{"cellar": cellar}, openaitest.FromSchema(nil)))
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fallbacks(res)["cellar"] {
		t.Fatalf("cellar fell back: %v", results(res)[0].Err)
	}
	next, _ := Apply(env.Sim, st, Values(res))
	if next.Locations["cellar"] != st.Locations["cellar"] {
		t.Errorf("cellar = %+v, want unchanged %+v", next.Locations["cellar"], st.Locations["cellar"])
	}
}

// Seed 004's logging: DEBUG for context assembly and prompt rendering.
func TestResolutionLogsContextAndRenderingAtDebug(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	logs := &bytes.Buffer{}
	env.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if _, err := resolutionPhase(context.Background(), env, env.Sim.InitialState(), map[string]string{"ada": "cook"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`level=DEBUG msg="Phase 2a: context for hall" phase=resolution tick=1 entity=resolution:hall characters="[ada bo]" intentions=1`,
		`level=DEBUG msg="Phase 2a: prompts rendered for hall"`,
		`level=DEBUG msg="Phase 2a: context for cellar" phase=resolution tick=1 entity=resolution:cellar characters=[] intentions=0`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("no %q in:\n%s", want, logs.String())
		}
	}
}

// TestResolutionWrongTickOrLocationIsRepaired: the client checks the tick
// and location a game master's answer names (ResolutionCheck), so one that names
// another is sent back for repair like a schema mismatch, and a repaired
// answer is used; the envelope it is checked against is the same for every
// call.
func TestResolutionWrongTickOrLocationIsRepaired(t *testing.T) {
	for _, tt := range []struct {
		name, key string
		value     any
		says      string
	}{
		{"tick", "tick", 7, "at /tick: 7, but this call resolves tick 1"},
		{"location", "location_id", "garden", `at /location_id: "garden", but this call resolves location "hall"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			first := true
			var mu sync.Mutex
			env, srv, _ := testEnv(t, func(c *openaitest.Call) openaitest.Reply {
				v, err := openaitest.Instance(c, nil)
				if err != nil {
					return openaitest.Status(400, "invalid_request_error", "", err.Error())
				}
				mu.Lock()
				defer mu.Unlock()
				if first {
					first = false
					v.(map[string]any)[tt.key] = tt.value
				}
				return openaitest.JSON(v)
			})
			client, err := llm.New(llm.Config{BaseURL: srv.URL, APIKey: "test", MaxAttempts: 1, RepairAttempts: 1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			env.Model = client
			hall := *env.Sim.Locations[2]
			hall.Connections = nil
			env.Sim.Locations = []*world.Location{&hall}
			env.Sim.Characters = env.Sim.Characters[:1]
			res, err := resolutionPhase(t.Context(), env, env.Sim.InitialState(), nil)
			if err != nil {
				t.Fatal(err)
			}
			call := res[0].Call
			if res[0].Fallback || call.Repairs != 1 || call.Err != nil {
				t.Fatalf("fallback %v, repairs %d, err %v; want the repaired answer", res[0].Fallback, call.Repairs, call.Err)
			}
			if out := res[0].Value; out.Tick != 1 || out.LocationID != "hall" {
				t.Errorf("used answer names tick %d, location %q", out.Tick, out.LocationID)
			}
			if len(call.Recoveries) != 1 || !strings.Contains(call.Recoveries[0].Err.Error(), tt.says) {
				t.Errorf("recoveries %v, want one repair saying %q", call.Recoveries, tt.says)
			}
			if last := call.Messages[len(call.Messages)-1].Content; !strings.Contains(last, tt.says) {
				t.Errorf("the repair prompt does not tell the model %q:\n%s", tt.says, last)
			}
		})
	}
}

// TestResolutionEnvelopeIsShared: every game master call is checked against the
// same envelope, whatever its tick, location or crowd, so the client's
// compiled-schema cache holds one entry for all of them.
func TestResolutionEnvelopeIsShared(t *testing.T) {
	env, _, _ := testEnv(t, openaitest.FromSchema(nil))
	st := env.Sim.InitialState()
	var accepts [][]byte
	for _, tick := range []int{0, 41} {
		st.Tick = tick
		w := prompts.NewSnapshot(env.Sim, st)
		for _, loc := range env.Sim.Locations {
			req, err := ResolutionRequest(env, w, loc, nil)
			if err != nil {
				t.Fatal(err)
			}
			if req.Check == nil {
				t.Fatalf("%s: no Check for tick and location", loc.ID)
			}
			accepts = append(accepts, req.Accept)
		}
	}
	for i, a := range accepts {
		if !bytes.Equal(a, accepts[0]) {
			t.Errorf("accept schema %d differs from the first:\n%s\n%s", i, a, accepts[0])
		}
	}
	if bytes.Contains(accepts[0], []byte(`"enum"`)) {
		t.Errorf("the shared envelope pins a value: %s", accepts[0])
	}
}
