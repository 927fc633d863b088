package phases

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/prompts"
)

// The history of an entity keeps, for each past tick, a record of what its
// prompt told it that was new (llm.Request.Record) and its answer, not the
// whole prompt: the premise, the instructions, the memories and the
// entity's own state are in every prompt anyway, so a past exchange that
// repeated them would make the prompt grow with the depth for nothing.

// intentionRecord is what a character's history keeps of its intention
// prompt at a tick: where it was, what was happening and who was there
// (what came of it is in the character's memories, which every prompt
// shows).
func intentionRecord(d prompts.IntentionData) string {
	names := make([]string, len(d.Others))
	for i, o := range d.Others {
		names[i] = o.Name
	}
	return record(d.Simulation.Tick, d.Location, "No one else was here.", "Here: ", ", ", names)
}

// resolutionRecord is what a location's game master history keeps of its prompt
// at a tick: the place as it was and what each character present intended.
func resolutionRecord(d prompts.ResolutionData) string {
	intents := make([]string, len(d.Characters))
	for i, c := range d.Characters {
		intents[i] = fmt.Sprintf("%s (%s): %s", c.Name, c.ID, c.Intention)
	}
	return record(d.Simulation.Tick, d.Location, "No one was here.", "Intentions: ", "; ", intents)
}

// resolutionAnswerRecord is what a location's game master history keeps of its
// answer at a tick: the tick, the place, what each character lived through
// and where they ended up, and how the place changed. Each character's
// internal state and external intent are left out: they are states of that
// tick, and every prompt shows each present character's current ones, so
// past answers that repeated them would grow the prompt with what the next
// message restates. An answer that cannot be read so
// (its envelope was validated, but an update that is not an object, which
// the phase skips, can be in it) is kept whole.
func resolutionAnswerRecord(answer json.RawMessage) string {
	// Decoded in one pass into what the record keeps, the fields left out
	// skipped as it reads. That fails where the characters' object repeats
	// an id whose first update is not an object, which the envelope lets
	// by (the last one counts): those are read each on its own.
	var rec answerRecord
	if json.Unmarshal(answer, &rec) != nil && !rec.readEach(answer) {
		return string(answer)
	}
	if rec.Characters == nil {
		rec.Characters = map[string]lived{}
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return string(answer)
	}
	return string(b)
}

type answerRecord struct {
	Tick       int              `json:"tick"`
	LocationID string           `json:"location_id"`
	Characters map[string]lived `json:"characters"`
	Location   json.RawMessage  `json:"location,omitempty"`
}

type lived struct {
	MemoryEntry string `json:"memory_entry"`
	Location    string `json:"location"`
}

// readEach reads answer into r with each character's update read on its
// own, the last of an id repeated, and reports whether it could.
func (r *answerRecord) readEach(answer json.RawMessage) bool {
	var a struct {
		Tick       int                        `json:"tick"`
		LocationID string                     `json:"location_id"`
		Characters map[string]json.RawMessage `json:"characters"`
		Location   json.RawMessage            `json:"location"`
	}
	if json.Unmarshal(answer, &a) != nil {
		return false
	}
	*r = answerRecord{Tick: a.Tick, LocationID: a.LocationID, Characters: make(map[string]lived, len(a.Characters)), Location: a.Location}
	for id, raw := range a.Characters {
		var c lived
		if json.Unmarshal(raw, &c) != nil {
			return false
		}
		r.Characters[id] = c
	}
	return true
}

// record is the place at tick, then label and items joined by sep, or none
// when there are no items.
func record(tick int, l prompts.LocationData, none, label, sep string, items []string) string {
	var b strings.Builder
	place(&b, tick, l)
	if len(items) == 0 {
		return b.String() + " " + none
	}
	return b.String() + " " + label + strings.Join(items, sep) + "."
}

func place(b *strings.Builder, tick int, l prompts.LocationData) {
	b.WriteString("Tick ") // not fmt: a record is made for every call
	b.WriteString(strconv.Itoa(tick))
	b.WriteString(" in " + l.Name + ".")
	if l.Moment != "" {
		b.WriteString(" Right now: " + l.Moment)
		if !strings.HasSuffix(l.Moment, ".") {
			b.WriteByte('.')
		}
	}
}
