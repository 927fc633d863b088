package conquest

import (
	"encoding/json"
	"slices"
	"testing"
)

// board is a small map for the validation tests, after turn 3:
//
//	A (0,0) p1, 10 ships, production 4
//	B (3,0) neutral, no defenders
//	C (0,3) neutral, 2 defenders
//	D (3,3) p1, 5 ships, production 2
//	F (9,9) p2, 6 ships, production 4
//	G (6,9) neutral, no defenders
//
// Rand is seeded, so anything resolved from it replays.
func board() *State {
	return &State{
		Turn: 3, MaxTurns: 50, Players: []string{"p1", "p2"},
		Stars: []Star{
			{ID: "A", X: 0, Y: 0, Production: 4, Owner: "p1", Ships: map[string]int{"p1": 10}},
			{ID: "B", X: 3, Y: 0, Production: 1, Ships: map[string]int{}},
			{ID: "C", X: 0, Y: 3, Production: 2, Ships: map[string]int{}, Garrison: 2},
			{ID: "D", X: 3, Y: 3, Production: 2, Owner: "p1", Ships: map[string]int{"p1": 5}},
			{ID: "F", X: 9, Y: 9, Production: 4, Owner: "p2", Ships: map[string]int{"p2": 6}},
			{ID: "G", X: 6, Y: 9, Production: 1, Ships: map[string]int{}},
		},
		Fleets: []Fleet{}, Errors: []OrderError{}, Passed: []Pass{}, Rand: newRand(7),
	}
}

// orders reads an order list written as JSON, failing the test when it
// does not parse.
func orders(t testing.TB, js string) []Order {
	t.Helper()
	o, err := ParseOrders([]byte(js))
	if err != nil {
		t.Fatalf("ParseOrders(%s): %v", js, err)
	}
	return o
}

func errorTexts(errs []OrderError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error
	}
	return out
}

func fleetsOf(s *State, player string) []Fleet {
	return slices.DeleteFunc(slices.Clone(s.Fleets), func(f Fleet) bool { return f.Owner != player })
}

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
