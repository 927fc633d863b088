package phases

import (
	"fmt"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// grid is a world of n characters in m locations: villages of 10
// locations on a ring (each connected both ways to its neighbours),
// characters spread evenly, so no crowd outgrows one call.
func grid(n, m int) *world.Simulation {
	sim := &world.Simulation{ID: "grid", Kind: KindName, Title: "Grid", Premise: "A ring of rooms."}
	for i := range m {
		v := i / 10 * 10
		sim.Locations = append(sim.Locations, &world.Location{ID: fmt.Sprintf("l%05d", i), Name: "L", Description: "d",
			Start:       world.LocationState{Moment: "m", Description: "d"},
			Connections: []string{fmt.Sprintf("l%05d", v+(i+1)%10), fmt.Sprintf("l%05d", v+(i+9)%10)}})
	}
	for i := range n {
		sim.Characters = append(sim.Characters, &world.Character{ID: fmt.Sprintf("c%06d", i), Name: "C", Description: "d",
			Start: world.CharacterState{Location: fmt.Sprintf("l%05d", i%m), InternalState: "i", ExternalIntent: "e"}})
	}
	return sim
}

// BenchmarkLint is the start-up check of every first-tick request, which a
// run and validate pay before any call.
func BenchmarkLint(b *testing.B) {
	for _, size := range []struct{ chars, locs int }{{1000, 100}, {10000, 1000}} {
		b.Run(fmt.Sprintf("%dx%d", size.chars, size.locs), func(b *testing.B) {
			sim := grid(size.chars, size.locs)
			pr, err := prompts.New("")
			if err != nil {
				b.Fatal(err)
			}
			n := &Narrative{Sim: sim, Prompts: pr, Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
			for b.Loop() {
				n.Lint()
			}
		})
	}
}
