package phases

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

func upd(loc, memory string) CharacterUpdate {
	return CharacterUpdate{Location: loc, InternalState: "new state", ExternalIntent: "new intent", MemoryEntry: memory}
}

func TestApplyValidUpdates(t *testing.T) {
	sim := testWorld()
	st := sim.InitialState()
	outputs := map[string]MasterOutput{
		"hall": {Tick: 1, LocationID: "hall", Characters: CharacterUpdates{
			"ada": upd("garden", "Ada walked out"),
			"bo":  upd("hall", "Bo stayed"),
		}, Location: LocationUpdate{Moment: ptr("evening")}},
		"garden": {Tick: 1, LocationID: "garden", Characters: CharacterUpdates{"cy": upd("cellar", "Cy went down")},
			Location: LocationUpdate{Description: ptr("trampled roses")}},
	}
	next, errs := Apply(sim, st, outputs)
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if next.Tick != 1 {
		t.Errorf("tick %d, want 1", next.Tick)
	}
	for id, loc := range map[string]string{"ada": "garden", "bo": "hall", "cy": "cellar"} {
		if got := next.Characters[id].Location; got != loc {
			t.Errorf("%s in %q, want %q", id, got, loc)
		}
	}
	ada := next.Characters["ada"]
	if ada.InternalState != "new state" || ada.ExternalIntent != "new intent" {
		t.Errorf("ada's state not replaced: %+v", ada)
	}
	if len(ada.Memory) != 1 || ada.Memory[0].Tick != 1 || ada.Memory[0].Entry != "Ada walked out" {
		t.Errorf("ada's memory %+v, want one entry at tick 1", ada.Memory)
	}
	if h := next.Locations["hall"]; h.Moment != "evening" || h.Description != "a long table" {
		t.Errorf("hall %+v: moment replaced, description kept (null) expected", h)
	}
	if g := next.Locations["garden"]; g.Moment != "dawn" || g.Description != "trampled roses" {
		t.Errorf("garden %+v: moment kept, description replaced expected", g)
	}
	// The input state is untouched.
	if st.Tick != 0 || st.Characters["ada"].Location != "hall" || len(st.Characters["ada"].Memory) != 0 || st.Locations["hall"].Moment != "noon" {
		t.Errorf("Apply modified its input: %+v", st)
	}
}

func TestApplySkipsInvalidUpdates(t *testing.T) {
	sim := testWorld()
	st := sim.InitialState()
	tests := []struct {
		name   string
		loc    string
		out    MasterOutput
		char   string
		reason string
	}{
		{"unreachable destination", "hall", MasterOutput{Tick: 1, LocationID: "hall", Characters: CharacterUpdates{"ada": upd("cellar", "m")}}, "ada", `destination "cellar" is not reachable from "hall"`},
		{"unknown destination", "hall", MasterOutput{Tick: 1, LocationID: "hall", Characters: CharacterUpdates{"ada": upd("moon", "m")}}, "ada", `destination "moon" does not exist`},
		{"character elsewhere", "hall", MasterOutput{Tick: 1, LocationID: "hall", Characters: CharacterUpdates{"cy": upd("hall", "m")}}, "cy", `character is in "garden", not in this location`},
		{"unknown character", "hall", MasterOutput{Tick: 1, LocationID: "hall", Characters: CharacterUpdates{"zed": upd("hall", "m")}}, "zed", "no such character"},
		{"empty memory", "hall", MasterOutput{Tick: 1, LocationID: "hall", Characters: CharacterUpdates{"ada": upd("hall", "")}}, "ada", "memory_entry is empty"},
		{"wrong location id", "hall", MasterOutput{Tick: 1, LocationID: "garden"}, "", `output is for location "garden"`},
		{"wrong tick", "hall", MasterOutput{Tick: 7, LocationID: "hall"}, "", "output is for tick 7, not 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			outputs := map[string]MasterOutput{
				tc.loc: tc.out,
				// a valid update elsewhere still applies
				"garden": {Tick: 1, LocationID: "garden", Characters: CharacterUpdates{"cy": upd("hall", "Cy came in")}},
			}
			next, errs := Apply(sim, st, outputs)
			if len(errs) != 1 {
				t.Fatalf("errors %v, want exactly one", errs)
			}
			e := errs[0]
			if e.Tick != 1 || e.LocationID != tc.loc || e.CharacterID != tc.char || !strings.Contains(e.Reason, tc.reason) {
				t.Errorf("error %+v, want tick 1, location %s, character %q, reason containing %q", e, tc.loc, tc.char, tc.reason)
			}
			msg := e.Error()
			if !strings.Contains(msg, "tick 1") || !strings.Contains(msg, tc.loc) {
				t.Errorf("message %q does not name the tick and location", msg)
			}
			if next.Characters["cy"].Location != "hall" && tc.char != "cy" {
				t.Errorf("the valid update in the garden was not applied: cy in %q", next.Characters["cy"].Location)
			}
			if tc.char == "ada" && (next.Characters["ada"].Location != "hall" || len(next.Characters["ada"].Memory) != 0) {
				t.Errorf("the skipped update changed ada: %+v", next.Characters["ada"])
			}
		})
	}
}

// FuzzApply feeds arbitrary game master outputs to Apply: it never panics, and
// whatever it accepts obeys the world: every character is in a location that
// exists and was reachable from where it stood, and memories only grow.
func FuzzApply(f *testing.F) {
	f.Add([]byte(`{"tick":1,"location_id":"hall","characters":{"ada":{"location":"garden","internal_state":"a","external_intent":"b","memory_entry":"c"}},"location":{"moment":null,"description":"d"}}`))
	f.Add([]byte(`{"tick":1,"location_id":"hall","characters":{"cy":{"location":"cellar","internal_state":"","external_intent":"","memory_entry":"x"}},"location":{}}`))
	f.Add([]byte(`{"tick":2,"location_id":"cellar","characters":{},"location":{"moment":"m"}}`))
	sim := testWorld()
	st := sim.InitialState()
	f.Fuzz(func(t *testing.T, data []byte) {
		var out MasterOutput
		if err := json.Unmarshal(data, &out); err != nil {
			return
		}
		loc := out.LocationID
		if sim.Location(loc) == nil {
			loc = "hall"
		}
		next, _ := Apply(sim, st, map[string]MasterOutput{loc: out})
		for id, before := range st.Characters {
			after := next.Characters[id]
			if !sim.Reachable(before.Location, after.Location) {
				t.Fatalf("%s moved from %q to unreachable %q", id, before.Location, after.Location)
			}
			if len(after.Memory) < len(before.Memory) || len(after.Memory) > len(before.Memory)+1 {
				t.Fatalf("%s memory went from %d to %d entries", id, len(before.Memory), len(after.Memory))
			}
		}
		if len(next.Characters) != len(st.Characters) {
			t.Fatalf("characters %d, want %d", len(next.Characters), len(st.Characters))
		}
	})
}

// TestMemoryKeptInStateIsWhatPromptsShow: the state a tick makes keeps each
// character's latest prompts.MemoryDepth entries; a state loaded from the
// store does too, and Export reads every entry back from the store.
func TestMemoryKeptInStateIsWhatPromptsShow(t *testing.T) {
	sim := testWorld()
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	n := &Narrative{Sim: sim, Prompts: pr}
	db, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })

	st := sim.InitialState()
	const ticks = prompts.MemoryDepth + 5
	for tick := 1; tick <= ticks; tick++ {
		next, errs := Apply(sim, st, map[string]MasterOutput{"hall": {Tick: tick, LocationID: "hall",
			Characters: CharacterUpdates{"ada": upd("hall", fmt.Sprintf("memory %d", tick)), "bo": upd("hall", "bo")}}})
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		rec := &store.TickRecord{Tick: tick, Kind: n.Kind()}
		if err := n.Encode(rec, st, next); err != nil {
			t.Fatal(err)
		}
		if err := db.CommitTick(t.Context(), rec); err != nil {
			t.Fatal(err)
		}
		st = next
	}
	latest := func(mem []world.MemoryEntry) bool {
		if len(mem) != prompts.MemoryDepth {
			return false
		}
		for i, m := range mem {
			if want := ticks - prompts.MemoryDepth + 1 + i; m.Tick != want || m.Entry != fmt.Sprintf("memory %d", want) {
				return false
			}
		}
		return true
	}
	if mem := st.Characters["ada"].Memory; !latest(mem) {
		t.Errorf("ticked state keeps %+v, want the latest %d", mem, prompts.MemoryDepth)
	}
	loaded, err := n.Load(t.Context(), db, ticks)
	if err != nil {
		t.Fatal(err)
	}
	if mem := loaded.(*world.State).Characters["ada"].Memory; !latest(mem) {
		t.Errorf("loaded state keeps %+v, want the latest %d", mem, prompts.MemoryDepth)
	}
	v, err := n.Export(t.Context(), db, loaded)
	if err != nil {
		t.Fatal(err)
	}
	all := v.(*world.State)
	if mem := all.Characters["ada"].Memory; len(mem) != ticks || mem[0].Entry != "memory 1" || mem[ticks-1].Entry != fmt.Sprintf("memory %d", ticks) {
		t.Errorf("export has %d memories (%+v), want all %d", len(mem), mem, ticks)
	}
	if len(loaded.(*world.State).Characters["ada"].Memory) != prompts.MemoryDepth {
		t.Error("Export changed the state it was given")
	}
}
