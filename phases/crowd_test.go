package phases

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/world"
)

// withCrowd adds n characters to the hall of the test house (ids c0000...,
// after ada and bo in sort order).
func withCrowd(sim *world.Simulation, n int) {
	for i := range n {
		sim.Characters = append(sim.Characters, &world.Character{ID: fmt.Sprintf("c%04d", i), Name: fmt.Sprintf("Guest %d", i), Description: "a guest",
			Start: world.CharacterState{Location: "hall", InternalState: "curious", ExternalIntent: "mingle"}})
	}
}

// schemaIDs are the character ids a call's schema asks for.
func schemaIDs(t *testing.T, c *openaitest.Call) []string {
	t.Helper()
	var s struct {
		Properties struct {
			Characters struct {
				Required []string `json:"required"`
			} `json:"characters"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(c.Schema(), &s); err != nil {
		t.Error(err)
	}
	return s.Properties.Characters.Required
}

// signedAnswers answers every call from its schema, each memory entry and
// the location's moment naming the ids the call was asked for, so that a
// test can tell which call an update came from.
func signedAnswers(t *testing.T) openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		v, err := openaitest.Instance(c, nil)
		if err != nil {
			return openaitest.Status(400, "invalid_request_error", "", err.Error())
		}
		ids := schemaIDs(t, c)
		sign := "call for " + strings.Join(ids, ",")
		m := v.(map[string]any)
		for _, u := range m["characters"].(map[string]any) {
			u.(map[string]any)["memory_entry"] = sign[:min(len(sign), 300)]
		}
		if loc := m["location"].(map[string]any); loc["moment"] != nil || len(ids) == 0 {
			loc["moment"] = sign[:min(len(sign), 300)]
		}
		return openaitest.JSON(m)
	}
}

// TestCrowdOverMaxCharactersResolvedInSeveralCalls: a location with more
// characters than max_characters is resolved by as many calls as needed;
// each sees the whole scene and answers for its group, each character's
// update comes from its group's call, and the location's update from call 1
// alone. The runner sees every call.
func TestCrowdOverMaxCharactersResolvedInSeveralCalls(t *testing.T) {
	env, srv, _ := testEnv(t, signedAnswers(t))
	withCrowd(env.Sim, 5) // the hall: ada, bo, c0000..c0004
	env.MaxCharacters = 3
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	hall := Values(res)["hall"]
	present := st.CharactersAt("hall")
	if len(present) != 7 {
		t.Fatalf("hall holds %d", len(present))
	}
	var hallCalls []*openaitest.Call
	for _, c := range srv.Calls() {
		if c.SchemaConst("location_id") == "hall" {
			hallCalls = append(hallCalls, c)
		}
	}
	if len(hallCalls) != 3 {
		t.Fatalf("hall resolved in %d calls, want 3 (7 characters, at most 3 a call)", len(hallCalls))
	}
	groupOf := map[string]string{}
	for _, c := range hallCalls {
		ids := schemaIDs(t, c)
		if len(ids) > 3 || len(ids) < 2 {
			t.Errorf("a call resolves %v", ids)
		}
		for _, id := range ids {
			groupOf[id] = "call for " + strings.Join(ids, ",")
		}
		user := c.LastUserMessage()
		for _, id := range present {
			if !strings.Contains(user, `(id "`+id+`")`) {
				t.Errorf("the call for %v does not show %s: each call sees the whole scene", ids, id)
			}
		}
		if c.Request.MaxTokens > DefaultMaxOutputTokens {
			t.Errorf("max_tokens %d", c.Request.MaxTokens)
		}
	}
	if len(groupOf) != 7 {
		t.Errorf("the calls' groups cover %d characters, want 7", len(groupOf))
	}
	for _, id := range present {
		if got := hall.Characters[id].MemoryEntry; got != groupOf[id] {
			t.Errorf("%s: memory %q, want its group's call's %q", id, got, groupOf[id])
		}
	}
	if hall.Location.Moment == nil || *hall.Location.Moment != groupOf["ada"] {
		t.Errorf("hall's moment = %v, want call 1's (%q)", hall.Location.Moment, groupOf["ada"])
	}
	if hall.Location.Description == nil {
		t.Error("hall's description: call 1's update lost")
	}
	keys := map[string]bool{}
	for _, r := range calls(res) {
		keys[r.Result.Request.EntityKey] = true
	}
	for _, k := range []string{"resolution:hall", "resolution:hall/2", "resolution:hall/3", "resolution:garden", "resolution:cellar"} {
		if !keys[k] {
			t.Errorf("the runner does not see call %s (sees %v)", k, keys)
		}
	}
	if n := len(calls(res)); n != 5 {
		t.Errorf("the runner sees %d calls, want 5", n)
	}
	next, errs := Apply(env.Sim, st, Values(res))
	if len(errs) > 0 {
		t.Errorf("apply: %v", errs)
	}
	if got := next.Characters["c0004"].Memory; len(got) != 1 || got[0].Entry != groupOf["c0004"] {
		t.Errorf("c0004's memory after the tick: %v", got)
	}
}

// TestCrowdGroupFailureFallsBackOnlyItsGroup: a group's failed call falls
// back its own characters (kept as they are, FallbackMemory, each reported)
// and no one else; the location falls back as a whole only when every call
// of it failed.
func TestCrowdGroupFailureFallsBackOnlyItsGroup(t *testing.T) {
	var mu sync.Mutex
	failFor := "c0002" // the call whose group holds this id fails
	env, _, logs := testEnv(t, func(c *openaitest.Call) openaitest.Reply {
		mu.Lock()
		f := failFor
		mu.Unlock()
		if c.SchemaConst("location_id") == "hall" && (f == "*" || slices.Contains(schemaIDs(t, c), f)) {
			return openaitest.Status(500, "server_error", "", "boom")
		}
		return signedAnswers(t)(c)
	})
	withCrowd(env.Sim, 5)
	env.MaxCharacters = 3
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var hall Outcome[MasterOutput]
	for _, o := range res {
		if o.ID == "hall" {
			hall = o
		}
	}
	if hall.Fallback {
		t.Fatal("hall fell back as a whole for one failed call of three")
	}
	checkGroupFellBack(t, st, hall, "c0002")
	if hall.Value.Location.Moment == nil {
		t.Error("call 1 answered, yet the location's update is lost")
	}
	fellBack := 0
	for _, c := range calls(res) {
		if c.Fallback {
			fellBack++
		}
	}
	if fellBack != 1 {
		t.Errorf("the runner sees %d fallbacks, want 1", fellBack)
	}
	if !strings.Contains(logs.String(), "Phase 2a: hall (call ") || !strings.Contains(logs.String(), " of 3) fallback (server:") {
		t.Errorf("no warning naming the call:\n%s", logs)
	}

	mu.Lock()
	failFor = "*"
	mu.Unlock()
	res, err = resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res {
		if o.ID != "hall" {
			continue
		}
		if !o.Fallback || len(o.Skipped) != 0 {
			t.Errorf("every call failed: fallback %v, skipped %v; want the location's fallback, as for one call", o.Fallback, o.Skipped)
		}
		if want := Fallback(st, "hall", st.CharactersAt("hall")); !slices.Equal(sortedKeys(o.Value.Characters), sortedKeys(want.Characters)) || o.Value.Location != want.Location {
			t.Errorf("fallback = %+v", o.Value)
		}
	}
}

// checkGroupFellBack checks hall, a location of st resolved in several
// calls of which the one holding character failed: that call's group, and
// it alone, fell back (kept as is, FallbackMemory), each of its characters
// reported with the call's failure, and every other character has its
// group's answer.
func checkGroupFellBack(t *testing.T, st *world.State, hall Outcome[MasterOutput], character string) {
	t.Helper()
	failed := map[string]bool{}
	for _, p := range hall.Parts {
		if p.Fallback {
			for id := range p.Value.Characters {
				failed[id] = true
			}
		}
	}
	if !failed[character] || len(failed) < 2 || len(failed) > 3 {
		t.Fatalf("fell back: %v, want %s's group only", failed, character)
	}
	reported := map[string]bool{}
	for _, e := range hall.Skipped {
		reported[e.CharacterID] = true
		if !strings.Contains(e.Reason, "of 3 for this location failed (server); kept as is (fallback)") {
			t.Errorf("reason %q", e.Reason)
		}
	}
	for _, id := range st.CharactersAt("hall") {
		u := hall.Value.Characters[id]
		switch {
		case failed[id] && (u.MemoryEntry != FallbackMemory || u.Location != "hall" || u.InternalState != "curious" && id[0] == 'c'):
			t.Errorf("%s (failed group): %+v, want the fallback", id, u)
		case failed[id] && !reported[id]:
			t.Errorf("%s fell back unreported", id)
		case !failed[id] && !strings.HasPrefix(u.MemoryEntry, "call for "):
			t.Errorf("%s (group answered): %+v", id, u)
		}
	}
}

// TestCrowdSkipsInvalidUpdatesPerCharacter: within a group's answer, an
// invalid update is skipped and reported for that character alone, a
// missing one falls back, and an update for a character of another group
// is dropped (that group's call resolves it); the rest apply.
func TestCrowdSkipsInvalidUpdatesPerCharacter(t *testing.T) {
	env, _, _ := testEnv(t, func(c *openaitest.Call) openaitest.Reply {
		v, err := openaitest.Instance(c, nil)
		if err != nil {
			return openaitest.Status(400, "invalid_request_error", "", err.Error())
		}
		chars := v.(map[string]any)["characters"].(map[string]any)
		if _, ok := chars["c0003"]; ok {
			chars["c0003"].(map[string]any)["memory_entry"] = "" // invalid
			delete(chars, "c0004")                               // missing
			chars["ada"] = map[string]any{"memory_entry": "stolen", "location": "hall", "internal_state": "", "external_intent": ""}
		}
		return openaitest.JSON(v)
	})
	withCrowd(env.Sim, 5) // groups of at most 4: [ada bo c0000 c0001] [c0002 c0003 c0004]
	env.MaxCharacters = 4
	st := env.Sim.InitialState()
	res, err := resolutionPhase(context.Background(), env, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	hall := Values(res)["hall"]
	reasons := map[string]string{}
	for _, o := range res {
		for _, e := range o.Skipped {
			reasons[e.CharacterID] = e.Reason
		}
	}
	if r := reasons["c0003"]; !strings.HasPrefix(r, "update skipped:") {
		t.Errorf("c0003's invalid update: reason %q", r)
	}
	if r := reasons["c0004"]; r != "no update from the game master; kept as is (fallback)" {
		t.Errorf("c0004's missing update: reason %q", r)
	}
	if r := reasons["ada"]; !strings.Contains(r, "call 2 of 2 of this location does not resolve this character") {
		t.Errorf("ada's update from the wrong call: reason %q", r)
	}
	if hall.Characters["ada"].MemoryEntry == "stolen" {
		t.Error("call 2's update of ada replaced call 1's")
	}
	if _, ok := hall.Characters["c0003"]; ok {
		t.Error("c0003's invalid update was kept")
	}
	if hall.Characters["c0004"].MemoryEntry != FallbackMemory || hall.Characters["c0002"].MemoryEntry == FallbackMemory {
		t.Errorf("c0004 %+v, c0002 %+v", hall.Characters["c0004"], hall.Characters["c0002"])
	}
}

// TestCrowdOf1200InOneLocationRuns: a single location holding 1,200
// characters is resolved (in 19 calls of at most 64, none asking for more
// output tokens than llm.max_output_tokens), every character gets its
// group's update, and the tick applies whole.
func TestCrowdOf1200InOneLocationRuns(t *testing.T) {
	env, srv, _ := testEnv(t, openaitest.FromSchema(nil))
	// Two calls in flight: a prompt's rendering stops at prompts.MaxRenderTime,
	// and a crowd's large renderings must not race each other past it under
	// -race on a loaded machine.
	env.Model = mustClient(t, srv.URL, 2)
	withCrowd(env.Sim, 1198) // with ada and bo, 1,200 in the hall
	st := env.Sim.InitialState()
	intentions := map[string]string{}
	for _, c := range env.Sim.Characters {
		intentions[c.ID] = "I look for a seat near " + c.Name + "'s friends."
	}
	start := time.Now()
	res, err := resolutionPhase(context.Background(), env, st, intentions)
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	next, errs := Apply(env.Sim, st, Values(res))
	if len(errs) > 0 {
		t.Fatalf("apply: %d errors, first %v", len(errs), errs[0])
	}
	hallCalls, maxTokens, maxPrompt := 0, 0, 0
	for _, c := range calls(res) {
		if c.Fallback {
			t.Errorf("%s fell back: %v", c.Result.Request.EntityKey, c.Result.Err)
		}
		if strings.HasPrefix(c.Result.Request.EntityKey, "resolution:hall") {
			hallCalls++
			maxTokens = max(maxTokens, c.Result.Request.Params.MaxTokens)
			maxPrompt = max(maxPrompt, len(c.Result.Request.System)+len(c.Result.Request.User)+len(c.Result.Request.Schema))
		}
	}
	if hallCalls != 19 {
		t.Errorf("hall resolved in %d calls, want 19 (1,200 at most 64 a call)", hallCalls)
	}
	if maxTokens > DefaultMaxOutputTokens {
		t.Errorf("a call asks for %d output tokens, more than %d", maxTokens, DefaultMaxOutputTokens)
	}
	for id, cs := range next.Characters {
		if cs.Location == "hall" && (len(cs.Memory) != 1 || cs.Memory[0].Entry == FallbackMemory) {
			t.Fatalf("%s: memory %v", id, cs.Memory)
		}
	}
	t.Logf("FIGURES 1,200 in one location: %d calls, max_tokens at most %d, largest request %d bytes, %s against the in-process server",
		hallCalls, maxTokens, maxPrompt, elapsed.Round(time.Millisecond))
}

// FuzzGroupOutcome: whatever the answer of call 2 of 3 of a crowded
// location, reading it neither panics nor keeps an update of a character
// outside its group, nor a location update (call 1's to write).
func FuzzGroupOutcome(f *testing.F) {
	f.Add([]byte(`{"tick":1,"location_id":"hall","characters":{"c0002":{"memory_entry":"m","location":"hall","internal_state":"","external_intent":""},"ada":{"memory_entry":"x","location":"hall","internal_state":"","external_intent":""}},"location":{"moment":"m","description":null}}`))
	f.Add([]byte(`{"tick":1,"location_id":"hall","characters":{"c0003":1},"location":{}}`))
	f.Add([]byte(`{}`))
	sim := testWorld()
	withCrowd(sim, 5)
	st := sim.InitialState()
	loc := sim.Location("hall")
	g := Group{Call: 2, Calls: 3, IDs: []string{"c0002", "c0003"}}
	f.Fuzz(func(t *testing.T, answer []byte) {
		if _, _, err := ParseMasterOutput(answer); err != nil {
			t.Skip() // the client returns only answers that pass the envelope
		}
		o := resolutionOutcome(context.Background(), Env{Sim: sim}, st, loc, g, llm.Result{Output: answer})
		for id := range o.Value.Characters {
			if !slices.Contains(g.IDs, id) {
				t.Fatalf("kept an update of %s, outside the group", id)
			}
		}
		for _, id := range g.IDs {
			if _, ok := o.Value.Characters[id]; !ok && !skippedOf(o, id) {
				t.Fatalf("%s neither updated nor reported", id)
			}
		}
		if o.Value.Location != (LocationUpdate{}) {
			t.Fatalf("call 2 wrote the location's update: %+v", o.Value.Location)
		}
	})
}

func skippedOf(o Outcome[MasterOutput], id string) bool {
	return slices.ContainsFunc(o.Skipped, func(e ApplyError) bool { return e.CharacterID == id })
}
