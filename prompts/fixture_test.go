package prompts

import (
	"fmt"

	"github.com/arbiter-sim/arbiter/world"
)

// fixture is a small world: two characters in the cottage, one alone in the
// lamp room, nobody on the jetty; twelve ticks have committed.
func fixture() (*world.Simulation, *world.State) {
	sim := &world.Simulation{
		ID:      "lighthouse",
		Kind:    "narrative",
		Title:   "The Last Lamp",
		Premise: "A storm has cut the island off for a week. The lamp must burn every night, and the oil is running out.",
		Characters: []*world.Character{
			{ID: "ada", Name: "Ada Marsh", Description: "The head keeper, sixty, stubborn, who has never let the lamp go dark."},
			{ID: "bo", Name: "Bo Finch", Description: "A young assistant keeper who secretly sold oil to smugglers last month."},
			{ID: "cy", Name: "Cy", Description: "A shipwrecked sailor nobody knows, washed up two days ago."},
		},
		Locations: []*world.Location{
			{ID: "cottage", Name: "Keeper's Cottage", Description: "A stone cottage with a stove, a table and a locked oil store.", Connections: []string{"lamp_room", "jetty"}},
			{ID: "jetty", Name: "Jetty", Description: "A wooden jetty where the supply boat should dock.", Connections: []string{"cottage"}},
			{ID: "lamp_room", Name: "Lamp Room", Description: "The glass room at the top of the tower, around the great lamp.", Connections: []string{"cottage"}},
		},
	}
	st := &world.State{
		Tick: 12,
		Characters: map[string]world.CharacterState{
			"ada": {Location: "cottage", InternalState: "Worried about the oil, suspicious of Bo.", ExternalIntent: "Counting the oil cans."},
			"bo":  {Location: "cottage", InternalState: "", ExternalIntent: "Pretending to read."},
			"cy":  {Location: "lamp_room", InternalState: "Cold and lost.", ExternalIntent: ""},
		},
		Locations: map[string]world.LocationState{
			"cottage":   {Moment: "Rain drums on the roof; the stove hisses.", Description: "The oil store door is ajar."},
			"jetty":     {Moment: "", Description: ""},
			"lamp_room": {Moment: "The lamp sputters.", Description: "Glass shards from a cracked pane lie on the floor."},
		},
	}
	ada := st.Characters["ada"]
	for tick := 1; tick <= st.Tick; tick++ { // more than MemoryDepth
		ada.Memory = append(ada.Memory, world.MemoryEntry{Tick: tick, Entry: fmt.Sprintf("Memory %d of the storm.", tick)})
	}
	st.Characters["ada"] = ada
	return sim, st
}
