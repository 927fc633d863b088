package store

import (
	"reflect"
	"testing"
)

func TestStoryRows(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	commit(t, s, record(1), record(2), record(3))

	got, err := s.Story(t.Context(), 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Intentions) != 4 || len(got.Outputs) != 4 || len(got.Memories) != 2 || len(got.ApplyErrors) != 2 {
		t.Fatalf("Story(2, 3) = %d intentions, %d outputs, %d memories, %d apply errors; want 4, 4, 2, 2",
			len(got.Intentions), len(got.Outputs), len(got.Memories), len(got.ApplyErrors))
	}
	if i := got.Intentions[1]; i != (TickIntention{2, IntentionRecord{CharacterID: "bo", Intention: "keep cooking", Fallback: true}}) {
		t.Errorf("second intention = %+v", i)
	}
	// Outputs in order of tick, then location: cellar before hall.
	if o := got.Outputs[0]; o.Tick != 2 || o.LocationID != "cellar" || !o.Fallback {
		t.Errorf("first output = %+v", o)
	}
	if m := got.Memories[1]; m != (MemoryRecord{Tick: 3, CharacterID: "ada", Entry: "memory 3"}) {
		t.Errorf("second memory = %+v", m)
	}
	if a := got.ApplyErrors[0]; a.Tick != 2 || a.CharacterID != "ada" || a.LocationID != "hall" {
		t.Errorf("first apply error = %+v", a)
	}

	none, err := s.Story(t.Context(), 4, 9)
	if err != nil || len(none.Intentions)+len(none.Outputs)+len(none.Memories)+len(none.ApplyErrors) != 0 {
		t.Errorf("Story past the last tick = %+v, %v", none, err)
	}
}

func TestUsageRows(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	empty, err := s.UsageRows(t.Context())
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("UsageRows of a new store = %#v, %v; want an empty slice", empty, err)
	}
	commit(t, s, record(1), record(2))
	got, err := s.UsageRows(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []CallUsage{}
	for tick := 1; tick <= 2; tick++ {
		want = append(want,
			CallUsage{tick, "intention", "intention:ada", "small", Usage{Calls: 1, PromptTokens: 100, CompletionTokens: 20, CachedTokens: 50, LatencyMS: 120}},
			CallUsage{tick, "intention", "intention:bo", "small", Usage{Calls: 1, FailedCalls: 1, LatencyMS: 3000}},
			CallUsage{tick, "resolution", "resolution:hall", "large", Usage{Calls: 1, Repairs: 1, PromptTokens: 300, CompletionTokens: 80, LatencyMS: 400}},
		)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("UsageRows =\n %+v\nwant\n %+v", got, want)
	}
}
