package phases

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// TestJudgeResolutionAsApplyDoes: a game master's answer is read with the checks
// apply makes, on the part of the world it touches: a move to where the
// location does not lead, an update for a character in another location
// and one for no one are problems naming them; what applies is told.
func TestJudgeResolutionAsApplyDoes(t *testing.T) {
	sim := testWorld()
	n := &Narrative{Sim: sim}
	st := sim.InitialState()
	out := `{"tick": 1, "location_id": "hall", "location": {"moment": "dusk", "description": null},
		"characters": {
			"ada": {"memory_entry": "I cooked.", "location": "garden", "internal_state": "proud", "external_intent": "rest"},
			"bo": {"memory_entry": "I hid.", "location": "cellar", "internal_state": "sly", "external_intent": "wait"},
			"cy": {"memory_entry": "I dug.", "location": "hall", "internal_state": "tired", "external_intent": "dig"},
			"zed": {"memory_entry": "?", "location": "hall", "internal_state": "", "external_intent": ""}}}`
	v := n.Judge(session.RequestQuery{Phase: PhaseResolution, Entity: "hall", State: st}, llm.Result{Output: json.RawMessage(out)})
	problems := strings.Join(v.Problems, "\n")
	for _, want := range []string{
		`character bo: destination "cellar" is not reachable from "hall"`,
		`character cy: character is in "garden", not in this location`,
		"character zed: no such character",
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("problems lack %q:\n%s", want, problems)
		}
	}
	changes := strings.Join(v.Changes, "\n")
	for _, want := range []string{"ada moves from hall to garden", "ada remembers: I cooked.", "hall now: dusk"} {
		if !strings.Contains(changes, want) {
			t.Errorf("changes lack %q:\n%s", want, changes)
		}
	}
	if strings.Contains(changes, "bo moves") || v.Fallback {
		t.Errorf("a skipped update was told as a change, or the answer as a fallback: %+v", v)
	}
}
