package prompts

import (
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

func TestNewIntentionData(t *testing.T) {
	t.Parallel()
	sim, st := fixture()
	d, err := NewSnapshot(sim, st).IntentionData("ada")
	if err != nil {
		t.Fatal(err)
	}
	if d.Simulation.Tick != 13 {
		t.Errorf("Simulation.Tick = %d, want 13 (the tick being run)", d.Simulation.Tick)
	}
	if d.Character.Name != "Ada Marsh" || d.Character.Location != "cottage" || d.Character.ExternalIntent != "Counting the oil cans." {
		t.Errorf("Character = %+v", d.Character)
	}
	if n := len(d.Character.Memory); n != MemoryDepth || d.Character.Memory[0].Tick != 3 || d.Character.Memory[n-1].Tick != 12 {
		t.Errorf("Memory = %+v, want the last %d entries, oldest first", d.Character.Memory, MemoryDepth)
	}
	wantLoc := LocationData{
		ID: "cottage", Name: "Keeper's Cottage",
		Description: "A stone cottage with a stove, a table and a locked oil store.",
		Moment:      "Rain drums on the roof; the stove hisses.",
		Scene:       "The oil store door is ajar.",
		Connections: []Link{{"lamp_room", "Lamp Room"}, {"jetty", "Jetty"}},
	}
	if !reflect.DeepEqual(d.Location, wantLoc) {
		t.Errorf("Location = %+v\nwant %+v", d.Location, wantLoc)
	}
	if want := []Other{{ID: "bo", Name: "Bo Finch", ExternalIntent: "Pretending to read."}}; !reflect.DeepEqual(d.Others, want) {
		t.Errorf("Others = %+v, want %+v", d.Others, want)
	}

	// The data is a copy: changing it leaves the state alone.
	d.Character.Memory[0].Entry = "changed"
	if st.Characters["ada"].Memory[2].Entry == "changed" {
		t.Error("Memory aliases the state")
	}

	alone, err := NewSnapshot(sim, st).IntentionData("cy")
	if err != nil {
		t.Fatal(err)
	}
	if alone.Others == nil || len(alone.Others) != 0 {
		t.Errorf("Others = %#v, want empty", alone.Others)
	}
}

func TestNewResolutionData(t *testing.T) {
	t.Parallel()
	sim, st := fixture()
	d, err := NewSnapshot(sim, st).ResolutionData("cottage", map[string]string{"ada": "I lock the oil store.", "cy": "I climb down."})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Present, []string{"ada", "bo"}) {
		t.Errorf("Present = %q", d.Present)
	}
	if !reflect.DeepEqual(d.Reachable, []string{"cottage", "lamp_room", "jetty"}) {
		t.Errorf("Reachable = %q, want the location then its connections", d.Reachable)
	}
	if len(d.Characters) != 2 {
		t.Fatalf("Characters = %+v", d.Characters)
	}
	if got := d.Characters[0]; got.ID != "ada" || got.Intention != "I lock the oil store." || len(got.Memory) != MemoryDepth {
		t.Errorf("ada = %+v", got)
	}
	if got := d.Characters[1]; got.ID != "bo" || got.Intention != "Pretending to read." {
		t.Errorf("bo = %+v, want the external intent as fallback intention", got)
	}

	empty, err := NewSnapshot(sim, st).ResolutionData("jetty", nil)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Characters == nil || len(empty.Characters) != 0 || empty.Present == nil || len(empty.Present) != 0 {
		t.Errorf("empty location: Characters = %#v, Present = %#v; want empty, non-nil", empty.Characters, empty.Present)
	}
}

func TestDataErrors(t *testing.T) {
	t.Parallel()
	sim, st := fixture()
	noState := st.Clone()
	delete(noState.Characters, "bo")
	lostLoc := st.Clone()
	delete(lostLoc.Locations, "cottage")
	nowhere := st.Clone()
	cy := nowhere.Characters["cy"]
	cy.Location = "attic"
	nowhere.Characters["cy"] = cy

	tests := []struct {
		name string
		run  func() error
		want string
	}{
		{"unknown character", func() error { _, err := NewSnapshot(sim, st).IntentionData("zed"); return err }, `unknown character "zed"`},
		{"character without state", func() error { _, err := NewSnapshot(sim, noState).IntentionData("bo"); return err }, `character "bo" has no state at tick 12`},
		{"character in unknown location", func() error { _, err := NewSnapshot(sim, nowhere).IntentionData("cy"); return err }, `character "cy": unknown location "attic"`},
		{"unknown location", func() error { _, err := NewSnapshot(sim, st).ResolutionData("attic", nil); return err }, `unknown location "attic"`},
		{"location without state", func() error { _, err := NewSnapshot(sim, lostLoc).ResolutionData("cottage", nil); return err }, `location "cottage" has no state at tick 12`},
		{"unknown character in state", func() error {
			odd := st.Clone()
			odd.Characters["ghost"] = world.CharacterState{Location: "cottage"}
			_, err := NewSnapshot(sim, odd).ResolutionData("cottage", nil)
			return err
		}, `unknown character "ghost"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.run(); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestSnapshotSharesAPlace: the prompts of one snapshot, built at once from
// many workers, get what a snapshot of their own gives each: a place's
// data gathered once serves every character there, each without itself.
func TestSnapshotSharesAPlace(t *testing.T) {
	t.Parallel()
	sim, st := fixture()
	shared := NewSnapshot(sim, st)
	var wg sync.WaitGroup
	for range 4 {
		for _, c := range sim.Characters {
			wg.Go(func() {
				got, err := shared.IntentionData(c.ID)
				want, werr := NewSnapshot(sim, st).IntentionData(c.ID)
				if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s from a shared snapshot: %+v (%v)\nalone: %+v (%v)", c.ID, got, err, want, werr)
				}
			})
		}
		for _, l := range sim.Locations {
			wg.Go(func() {
				got, err := shared.ResolutionData(l.ID, nil)
				want, werr := NewSnapshot(sim, st).ResolutionData(l.ID, nil)
				if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
					t.Errorf("%s from a shared snapshot: %+v (%v)\nalone: %+v (%v)", l.ID, got, err, want, werr)
				}
			})
		}
	}
	wg.Wait()
}
