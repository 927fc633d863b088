package phases

import (
	"bytes"
	"encoding/json"
	"maps"
	"slices"
	"testing"

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
