package phases

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/world"
)

// FuzzEncodeState: the state a commit stores is json.Marshal of the state
// without its memories, byte for byte, whatever the model wrote into it.
func FuzzEncodeState(f *testing.F) {
	f.Add("ada", "hall", "<calm> & \"sure\"", "\u2028\xff", 3)
	f.Add("", "", "", "", 0)
	f.Fuzz(func(t *testing.T, id, loc, inner, outer string, size int) {
		st := &world.State{Tick: 2, Characters: map[string]world.CharacterState{
			id:       {Location: loc, InternalState: inner, ExternalIntent: outer, Memory: []world.MemoryEntry{{Tick: 2, Entry: inner}}},
			id + "b": {Location: outer, InternalState: loc},
		}, Locations: map[string]world.LocationState{loc: {Moment: inner}}}
		bare := &world.State{Tick: st.Tick, Characters: map[string]world.CharacterState{}, Locations: st.Locations}
		for k, cs := range st.Characters {
			cs.Memory = nil
			bare.Characters[k] = cs
		}
		want, err := json.Marshal(bare)
		if err != nil {
			t.Fatal(err)
		}
		got, err := encodeState(st, slices.Sorted(maps.Keys(st.Characters)), max(0, size%4096))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("encodeState = %s, %v\nwant %s", got, err, want)
		}
	})
}

// The encoded state is held until its tick's commit ends: its buffer holds
// little room beyond it, whether the size it was given was none (the first
// tick's: the buffer grew by doubling) or that of a larger state before.
func TestEncodeStateHoldsLittleRoom(t *testing.T) {
	sim := grid(5000, 500)
	st := sim.InitialState()
	ids := slices.Sorted(maps.Keys(st.Characters))
	exact, err := encodeState(st, ids, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, len(exact), 10 * len(exact)} {
		b, err := encodeState(st, ids, size)
		if err != nil || !bytes.Equal(b, exact) {
			t.Fatalf("size %d: encodeState = %d bytes, %v; want the same %d bytes", size, len(b), err, len(exact))
		}
		if room := cap(b) - len(b); room > len(b)/4 {
			t.Errorf("size %d: %d bytes held empty beside a state of %d, want at most a quarter", size, room, len(b))
		}
	}
}

// TestCallsPointAtTheOutcomes: the runner's view of a phase's calls points
// at the results its outcomes hold, a crowd's parts each, in order, rather
// than copying them.
func TestCallsPointAtTheOutcomes(t *testing.T) {
	t.Parallel()
	intents := []*Outcome[string]{{ID: "ada", Call: llm.Result{Raw: "a"}}, {ID: "bo", Fallback: true, Call: llm.Result{Raw: "b"}}}
	cs := callsOf(intents)
	if len(cs) != 2 {
		t.Fatalf("callsOf gave %d calls, want 2", len(cs))
	}
	for i, c := range cs {
		if c.Result != &intents[i].Call || c.Fallback != intents[i].Fallback {
			t.Errorf("call %d = %p (fallback %v), want the outcome's own %p (%v)", i, c.Result, c.Fallback, &intents[i].Call, intents[i].Fallback)
		}
	}
	outs := []Outcome[MasterOutput]{
		{ID: "hall", Call: llm.Result{Raw: "merged"}, Parts: []Outcome[MasterOutput]{{ID: "hall", Call: llm.Result{Raw: "1"}}, {ID: "hall", Fallback: true, Call: llm.Result{Raw: "2"}}}},
		{ID: "yard", Call: llm.Result{Raw: "y"}},
	}
	cs = calls(outs)
	want := []*llm.Result{&outs[0].Parts[0].Call, &outs[0].Parts[1].Call, &outs[1].Call}
	if len(cs) != len(want) {
		t.Fatalf("calls gave %d calls, want %d", len(cs), len(want))
	}
	for i, c := range cs {
		if c.Result != want[i] {
			t.Errorf("call %d is %q at %p, want %q at %p", i, c.Result.Raw, c.Result, want[i].Raw, want[i])
		}
	}
	if !cs[1].Fallback || cs[0].Fallback || cs[2].Fallback {
		t.Errorf("fallbacks %v %v %v, want the second part's alone", cs[0].Fallback, cs[1].Fallback, cs[2].Fallback)
	}
}
