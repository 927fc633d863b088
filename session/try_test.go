package session

import (
	"encoding/json"
	"testing"
)

func TestMergePatch(t *testing.T) {
	doc := map[string]any{"a": map[string]any{"b": 1.0, "c": 2.0}, "d": "x"}
	patch := map[string]any{"a": map[string]any{"b": nil, "e": 3.0}, "d": []any{"y"}, "f": map[string]any{"g": true}}
	got, _ := json.Marshal(mergePatch(doc, patch))
	if want := `{"a":{"c":2,"e":3},"d":["y"],"f":{"g":true}}`; string(got) != want {
		t.Errorf("mergePatch = %s, want %s", got, want)
	}
	if b, _ := json.Marshal(doc); string(b) != `{"a":{"b":1,"c":2},"d":"x"}` {
		t.Errorf("mergePatch changed its doc: %s", b)
	}
	var none map[string]any
	if got, _ := json.Marshal(mergePatch(none, patch)); string(got) != `{"a":{"e":3},"d":["y"],"f":{"g":true}}` {
		t.Errorf("mergePatch over nothing = %s", got)
	}
}

func TestPatchedRefusesWhatDoesNotFit(t *testing.T) {
	type state struct {
		Tick int `json:"tick"`
	}
	if _, err := patched(&state{Tick: 1}, json.RawMessage(`{"tick": "two"}`)); err == nil {
		t.Error("a patch of the wrong type was accepted")
	}
	if _, err := patched(&state{Tick: 1}, json.RawMessage(`{"tock": 2}`)); err == nil {
		t.Error("a patch of an unknown field was accepted")
	}
	got, err := patched(&state{Tick: 1}, json.RawMessage(`{"tick": 2}`))
	if err != nil || got.(*state).Tick != 2 {
		t.Errorf("patched = %+v, %v", got, err)
	}
}
