package prompts

import (
	"fmt"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

// The games' data types are unexported in their packages, which import this
// one; these mirror their fields (README.md, "Template data") so that every
// default template is benchmarked here with data of its real shape.
type (
	chronicleBench struct{ Title, BigPicture string }
	conquestBench  struct {
		Player, Opponents string
		MaxTurns          int
		Speed             float64
		MaxIterations     int
	}
	duelBench struct {
		Seat, Opponent string
		Turn, MaxTurns int
		Phase          string
		You, Them      duelPlayerBench
		Ships          []duelShipBench
		Options        []string
	}
	duelPlayerBench struct {
		ID                             string
		Health, MaxHealth, Lines, Dice int
		Fleet                          []duelFleetBench
	}
	duelFleetBench struct {
		ID, Ship               string
		Health, Charges, Built int
	}
	duelShipBench struct {
		Name                  string
		Cost, Health, Charges int
		Token                 bool
		Text, PhaseTimings    string
	}
)

// crowd is a tick of a large run as one place sees it: ten characters
// together, each with a full memory, in a place with four connections.
func crowd() (*world.Simulation, *world.State) {
	sim := &world.Simulation{ID: "harbour", Kind: "narrative", Title: "The Harbour Town",
		Premise: "A fishing town the day the cannery closes. Everyone owes someone, and the last boat leaves at dawn."}
	st := &world.State{Tick: 40, Characters: map[string]world.CharacterState{}, Locations: map[string]world.LocationState{}}
	for i := range 5 {
		id := fmt.Sprintf("place%d", i)
		loc := &world.Location{ID: id, Name: fmt.Sprintf("Quay %d", i), Description: "A stone quay with nets drying on iron rails, crates stacked by the harbour master's hut."}
		if i == 0 {
			loc.Connections = []string{"place1", "place2", "place3", "place4"}
		} else {
			loc.Connections = []string{"place0"}
		}
		sim.Locations = append(sim.Locations, loc)
		st.Locations[id] = world.LocationState{Moment: "Gulls fight over a spilled crate of herring.", Description: "The tide is out; the boats lean in the mud."}
	}
	for i := range 10 {
		id := fmt.Sprintf("c%02d", i)
		sim.Characters = append(sim.Characters, &world.Character{ID: id, Name: fmt.Sprintf("Character %d", i),
			Description: "A net mender of fifty who has lived here all her life, owes the cannery a year's rent and knows every boat's secrets."})
		cs := world.CharacterState{Location: "place0", InternalState: "Afraid the boat will leave without her, angry at her brother.",
			ExternalIntent: "Counting coins on the harbour wall."}
		for t := st.Tick - MemoryDepth + 1; t <= st.Tick; t++ {
			cs.Memory = append(cs.Memory, world.MemoryEntry{Tick: t, Entry: "Saw the harbour master lock the cannery gate and pocket the key without a word."})
		}
		st.Characters[id] = cs
	}
	return sim, st
}

// benchCases are every default template with a realistic binding.
func benchCases(tb testing.TB) map[string]any {
	tb.Helper()
	sim, st := crowd()
	w := NewSnapshot(sim, st)
	intention, err := w.IntentionData("c00")
	if err != nil {
		tb.Fatal(err)
	}
	intentions := map[string]string{}
	for _, c := range sim.Characters {
		intentions[c.ID] = "I walk to the cannery gate and ask the harbour master who bought the last boat's berths."
	}
	resolution, err := w.ResolutionData("place0", intentions)
	if err != nil {
		tb.Fatal(err)
	}
	you := duelPlayerBench{ID: "p1", Health: 14, MaxHealth: 20, Lines: 5, Dice: 4}
	them := duelPlayerBench{ID: "p2", Health: 11, MaxHealth: 20, Lines: 2, Dice: 6}
	for i := range 4 {
		you.Fleet = append(you.Fleet, duelFleetBench{ID: fmt.Sprintf("p1-%d", i), Ship: "Guardian", Health: 3, Charges: 1, Built: i + 1})
		them.Fleet = append(them.Fleet, duelFleetBench{ID: fmt.Sprintf("p2-%d", i), Ship: "Fighter", Health: 2, Built: i + 1})
	}
	duel := duelBench{Seat: "p1", Opponent: "p2", Turn: 6, MaxTurns: 20, Phase: "SIMULTANEOUS_DECLARATION", You: you, Them: them,
		Options: []string{"p1-0 Guardian: 4 damage, 1 charges left; targets: opponent, p2-0 (Fighter, 2 health), p2-1 (Fighter, 2 health)",
			"p1-1 Guardian: 4 damage, 1 charges left; targets: opponent, p2-0 (Fighter, 2 health), p2-1 (Fighter, 2 health)"}}
	for i := range 12 {
		duel.Ships = append(duel.Ships, duelShipBench{Name: fmt.Sprintf("Ship%d", i), Cost: i % 6, Health: 2 + i%4, Charges: i % 3, Token: i == 11,
			Text: "Deals 2 damage to a ship of the opponent when it is built; its charge deals 4.", PhaseTimings: "FIRST_STRIKE/CHARGE, AUTOMATIC/END"})
	}
	return map[string]any{
		"phase1_intention_system.md":   intention,
		"phase1_intention_user.md":     intention,
		"phase2a_resolution_system.md": resolution,
		"phase2a_resolution_user.md":   resolution,
		"chronicle_system.md":          chronicleBench{Title: sim.Title, BigPicture: sim.Premise},
		"conquest_system.md":           conquestBench{Player: "p1", Opponents: "p2, p3", MaxTurns: 100, Speed: 3, MaxIterations: 15},
		"duel_system.md":               duel,
		"duel_build.md":                duel,
		"duel_charges.md":              duel,
	}
}

// TestBenchCasesCoverTheDefaults: BenchmarkRender has a binding for every
// default template, and each renders with it.
func TestBenchCasesCoverTheDefaults(t *testing.T) {
	t.Parallel()
	r, err := New("")
	if err != nil {
		t.Fatal(err)
	}
	cases := benchCases(t)
	for _, name := range r.Names() {
		data, ok := cases[name]
		if !ok {
			t.Errorf("%s has no binding in benchCases", name)
			continue
		}
		if out, err := r.Render(name, data); err != nil || out == "" {
			t.Errorf("%s: %q, %v", name, out, err)
		}
	}
	if len(cases) != len(r.Names()) {
		t.Errorf("benchCases has %d bindings for %d templates", len(cases), len(r.Names()))
	}
}

// BenchmarkRender renders each default template once per iteration: a tick
// of the narrative renders the phase templates once per character and per
// location.
func BenchmarkRender(b *testing.B) {
	r, err := New("")
	if err != nil {
		b.Fatal(err)
	}
	cases := benchCases(b)
	for _, name := range r.Names() {
		data := cases[name]
		b.Run(strings.TrimSuffix(name, ".md"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := r.Render(name, data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
