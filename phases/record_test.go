package phases

import (
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// TestRecordsKeepWhatWasNew: what the history keeps of a prompt names the
// tick, the place, its moment and who was there doing or intending what,
// and leaves out what every prompt repeats (the premise, the instructions,
// the memories), so it is a small part of the prompt it stands for.
func TestRecordsKeepWhatWasNew(t *testing.T) {
	t.Parallel()
	env, _, _ := testEnv(t, nil)
	st := env.Sim.InitialState()
	st.Tick = 6
	for id, cs := range st.Characters {
		for k := range 10 {
			cs.Memory = append(cs.Memory, world.MemoryEntry{Tick: k + 1, Entry: strings.Repeat("a long remembered afternoon ", 8)})
		}
		st.Characters[id] = cs
	}
	w := prompts.NewSnapshot(env.Sim, st)

	in, err := IntentionRequest(env, w, "ada")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tick 7 in Hall.", "Right now: noon.", "Here: Bo."} {
		if !strings.Contains(in.Record, want) {
			t.Errorf("intention record %q does not say %q", in.Record, want)
		}
	}
	res, err := ResolutionRequest(env, w, env.Sim.Location("hall"), map[string]string{"ada": "I cook soup.", "bo": "I steal the spoon."})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tick 7 in Hall.", "Ada (ada): I cook soup.", "Bo (bo): I steal the spoon."} {
		if !strings.Contains(res.Record, want) {
			t.Errorf("resolution record %q does not say %q", res.Record, want)
		}
	}
	empty, err := ResolutionRequest(env, w, env.Sim.Location("cellar"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(empty.Record, "No one was here.") {
		t.Errorf("empty location record %q", empty.Record)
	}
	for _, r := range []struct{ name, record, user string }{{"intention", in.Record, in.User}, {"resolution", res.Record, res.User}} {
		if strings.Contains(r.record, env.Sim.Premise) || strings.Contains(r.record, "remembered") {
			t.Errorf("%s record repeats the premise or the memories: %q", r.name, r.record)
		}
		if 4*len(r.record) > len(r.user) {
			t.Errorf("%s record is %d bytes for a %d-byte prompt; want under a quarter", r.name, len(r.record), len(r.user))
		}
	}
}

// TestAnswerRecordKeepsWhatHappened: the game master's history keeps, of each
// answer, the tick, the place, each character's memory entry and where they
// ended up, and the place's change, and drops the states the next prompt
// restates; an answer it cannot read is kept whole, never lost.
func TestAnswerRecordKeepsWhatHappened(t *testing.T) {
	t.Parallel()
	env, _, _ := testEnv(t, nil)
	st := env.Sim.InitialState()
	res, err := ResolutionRequest(env, prompts.NewSnapshot(env.Sim, st), env.Sim.Location("hall"), map[string]string{"ada": "I cook soup."})
	if err != nil {
		t.Fatal(err)
	}
	if res.RecordAnswer == nil {
		t.Fatal("the game master's request keeps its whole answer in history")
	}
	answer := `{"tick": 7, "location_id": "hall",
	  "characters": {"bo": {"memory_entry": "I took the spoon.", "location": "cellar", "internal_state": "Smug.", "external_intent": "Hiding."},
	                 "ada": {"memory_entry": "I cooked.", "location": "hall", "internal_state": "Tired.", "external_intent": "Stirring."}},
	  "location": {"moment": "Steam rises.", "description": null}}`
	want := `{"tick":7,"location_id":"hall","characters":{"ada":{"memory_entry":"I cooked.","location":"hall"},"bo":{"memory_entry":"I took the spoon.","location":"cellar"}},"location":{"moment":"Steam rises.","description":null}}`
	if got := res.RecordAnswer([]byte(answer)); got != want {
		t.Errorf("record of the answer\n got %s\nwant %s", got, want)
	}
	if got := res.RecordAnswer([]byte(`{"tick":7,"location_id":"hall","characters":{},"location":{"moment":null,"description":null}}`)); got != `{"tick":7,"location_id":"hall","characters":{},"location":{"moment":null,"description":null}}` {
		t.Errorf("record of an empty place's answer: %s", got)
	}
	for _, odd := range []string{`not json`, `{"tick":7,"characters":{"ada":"a string, not an update"}}`} {
		if got := res.RecordAnswer([]byte(odd)); got != odd {
			t.Errorf("an answer the record cannot read became %q, want it whole", got)
		}
	}
}
