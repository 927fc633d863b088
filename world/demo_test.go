package world_test

import "testing"

// TestDemoSim keeps the shipped demo loadable and true to its promise: at
// least four locations, one of them empty at the start, and six characters.
func TestDemoSim(t *testing.T) {
	t.Parallel()
	const dir = "../simulations/demo-sim"
	if problems, warnings := Lint(dir); len(problems)+len(warnings) > 0 {
		t.Fatalf("Lint(%s) = %v, warnings %v", dir, problems, warnings)
	}
	sim, err := Load(dir)
	if err != nil {
		t.Fatalf("Load(%s): %v", dir, err)
	}
	if sim.Kind != KindNarrative || sim.Title == "" || len(sim.Premise) < 200 {
		t.Errorf("demo-sim kind %q, title %q, premise of %d bytes", sim.Kind, sim.Title, len(sim.Premise))
	}
	if len(sim.Locations) < 4 {
		t.Errorf("demo-sim has %d locations, want at least 4", len(sim.Locations))
	}
	if len(sim.Characters) != 6 {
		t.Errorf("demo-sim has %d characters, want 6", len(sim.Characters))
	}

	st := sim.InitialState()
	if err := st.Validate(sim); err != nil {
		t.Errorf("initial state: %v", err)
	}
	empty := 0
	for _, loc := range sim.Locations {
		if len(st.CharactersAt(loc.ID)) == 0 {
			empty++
		}
		// Not fully connected: every location misses at least one other.
		if len(loc.Connections) >= len(sim.Locations)-1 {
			t.Errorf("location %q connects to every other location", loc.ID)
		}
	}
	if empty != 1 {
		t.Errorf("%d locations are empty at the start, want exactly 1", empty)
	}
	for _, c := range sim.Characters {
		if c.Start.InternalState == "" || c.Start.ExternalIntent == "" {
			t.Errorf("character %q has no starting internal state or intent", c.ID)
		}
	}
}
