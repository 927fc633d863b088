package world_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

func loadValid(t *testing.T) *world.Simulation {
	t.Helper()
	sim, err := Load(writeSim(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	return sim
}

func TestReachable(t *testing.T) {
	t.Parallel()
	sim := loadValid(t)
	tests := []struct {
		from, to string
		want     bool
	}{
		{"hall", "hall", true},    // staying put
		{"hall", "cellar", true},  // a connection
		{"hall", "yard", true},    // a connection
		{"cellar", "yard", false}, // two steps away
		{"yard", "hall", false},   // connections are directed: yard has none
		{"yard", "yard", true},
		{"attic", "attic", false}, // not a location
		{"hall", "attic", false},
	}
	for _, tt := range tests {
		if got := sim.Reachable(tt.from, tt.to); got != tt.want {
			t.Errorf("Reachable(%q, %q) = %v, want %v", tt.from, tt.to, got, tt.want)
		}
	}
	if got := sim.Destinations("hall"); !slices.Equal(got, []string{"hall", "cellar", "yard"}) {
		t.Errorf("Destinations(hall) = %v", got)
	}
	if got := sim.Destinations("yard"); !slices.Equal(got, []string{"yard"}) {
		t.Errorf("Destinations(yard) = %v", got)
	}
	if got := sim.Destinations("attic"); got != nil {
		t.Errorf("Destinations(attic) = %v, want nil", got)
	}
}

func TestInitialState(t *testing.T) {
	t.Parallel()
	sim := loadValid(t)
	st := sim.InitialState()
	if st.Tick != 0 || len(st.Characters) != 2 || len(st.Locations) != 3 {
		t.Fatalf("InitialState = %+v", st)
	}
	if ada := st.Characters["ada"]; ada.Location != "hall" || ada.ExternalIntent != "fix the clock" || ada.Memory == nil {
		t.Errorf("ada = %+v, want the authored start with a non-nil memory", ada)
	}
	if hall := st.Locations["hall"]; hall.Moment != "Dusk." {
		t.Errorf("hall = %+v", hall)
	}
	data, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"memory":[]`) || strings.Contains(string(data), "null") {
		t.Errorf("JSON = %s, want empty memories as []", data)
	}
	if err := st.Validate(sim); err != nil {
		t.Errorf("Validate(initial state) = %v", err)
	}
	// The state must not share memory with the authored start.
	ada := st.Characters["ada"]
	ada.Memory = append(ada.Memory, world.MemoryEntry{Tick: 1, Entry: "x"})
	st.Characters["ada"] = ada
	if len(sim.Character("ada").Start.Memory) != 0 || len(sim.InitialState().Characters["ada"].Memory) != 0 {
		t.Error("changing a state changed the simulation's authored start")
	}
}

func TestClone(t *testing.T) {
	t.Parallel()
	st := &world.State{
		Tick: 4,
		Characters: map[string]world.CharacterState{
			"ada": {Location: "hall", Memory: []world.MemoryEntry{{Tick: 3, Entry: "saw a ghost"}}},
			"bo":  {Location: "cellar"}, // nil memory
		},
		Locations: map[string]world.LocationState{"hall": {Moment: "Dusk."}},
	}
	c := st.Clone()
	if c.Tick != 4 || c.Characters["ada"].Memory[0].Entry != "saw a ghost" || c.Locations["hall"].Moment != "Dusk." {
		t.Fatalf("Clone = %+v", c)
	}
	if c.Characters["bo"].Memory == nil {
		t.Error("Clone kept a nil memory, want empty")
	}

	ada := c.Characters["ada"]
	ada.Memory[0].Entry = "changed"
	ada.Memory = append(ada.Memory, world.MemoryEntry{Tick: 4, Entry: "more"})
	ada.Location = "yard"
	c.Characters["ada"] = ada
	c.Locations["hall"] = world.LocationState{Moment: "Night."}
	delete(c.Characters, "bo")

	if got := st.Characters["ada"]; got.Location != "hall" || len(got.Memory) != 1 || got.Memory[0].Entry != "saw a ghost" {
		t.Errorf("original ada changed through the clone: %+v", got)
	}
	if st.Locations["hall"].Moment != "Dusk." || len(st.Characters) != 2 {
		t.Errorf("original maps changed through the clone: %+v", st)
	}
}

func TestCharactersAt(t *testing.T) {
	t.Parallel()
	st := &world.State{Characters: map[string]world.CharacterState{
		"zed": {Location: "hall"}, "ada": {Location: "hall"}, "bo": {Location: "cellar"}, "mo": {Location: "hall"},
	}}
	if got := st.CharactersAt("hall"); !slices.Equal(got, []string{"ada", "mo", "zed"}) {
		t.Errorf("CharactersAt(hall) = %v", got)
	}
	if got := st.CharactersAt("yard"); len(got) != 0 {
		t.Errorf("CharactersAt(yard) = %v, want none", got)
	}
}

// TestOccupancy: one pass places everyone as CharactersAt would, location
// by location, sorted.
func TestOccupancy(t *testing.T) {
	t.Parallel()
	st := &world.State{Characters: map[string]world.CharacterState{
		"zed": {Location: "hall"}, "ada": {Location: "hall"}, "bo": {Location: "cellar"}, "mo": {Location: "hall"},
	}}
	occ := st.Occupancy()
	if len(occ) != 2 {
		t.Errorf("occupancy has %d locations, want 2: %v", len(occ), occ)
	}
	for _, loc := range []string{"hall", "cellar", "yard"} {
		if got, want := occ[loc], st.CharactersAt(loc); !slices.Equal(got, want) {
			t.Errorf("occupancy of %s = %v, CharactersAt = %v", loc, got, want)
		}
	}
}

// TestLookupByID: lookups find what a scan finds, the first of a duplicate
// id included (the loader refuses duplicates; a literal may hold them).
func TestLookupByID(t *testing.T) {
	t.Parallel()
	first, second := &world.Character{ID: "ada", Name: "first"}, &world.Character{ID: "ada", Name: "second"}
	sim := &world.Simulation{
		Characters: []*world.Character{first, second, {ID: "bo"}},
		Locations:  []*world.Location{{ID: "hall"}, {ID: "yard"}},
	}
	if c := sim.Character("ada"); c != first {
		t.Errorf("Character(ada) = %+v, want the first", c)
	}
	if sim.Character("bo") == nil || sim.Character("cy") != nil {
		t.Error("Character finds bo and not cy")
	}
	if l := sim.Location("yard"); l == nil || l.ID != "yard" {
		t.Errorf("Location(yard) = %v", l)
	}
	if sim.Location("attic") != nil {
		t.Error("Location(attic) is not authored")
	}
}

func TestStateValidate(t *testing.T) {
	t.Parallel()
	sim := loadValid(t)
	tests := []struct {
		name   string
		change func(*world.State)
		want   []string // substrings of the error, one per problem
	}{
		{"character in unknown location", func(st *world.State) {
			st.Characters["ada"] = world.CharacterState{Location: "attic"}
		}, []string{`state at tick 0: character "ada" is in unknown location "attic"`}},
		{"character no longer authored", func(st *world.State) {
			st.Characters["cy"] = world.CharacterState{Location: "hall"}
		}, []string{`character "cy" is not authored`}},
		{"character authored after the run began", func(st *world.State) {
			delete(st.Characters, "bo")
		}, []string{`character "bo" is authored but not in the state`}},
		{"locations changed", func(st *world.State) {
			delete(st.Locations, "yard")
			st.Locations["vault"] = world.LocationState{}
		}, []string{`location "yard" is authored but not in the state`, `location "vault" is not authored`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := sim.InitialState()
			tt.change(st)
			err := st.Validate(sim)
			if err == nil {
				t.Fatal("Validate = nil, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to contain %q", err, w)
				}
			}
			if n := strings.Count(err.Error(), "\n") + 1; n != len(tt.want) {
				t.Errorf("Validate reported %d problems, want %d: %v", n, len(tt.want), err)
			}
		})
	}
}
