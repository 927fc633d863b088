package phases

import (
	"fmt"
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
	var b strings.Builder
	place(&b, d.Simulation.Tick, d.Location)
	if len(d.Others) == 0 {
		b.WriteString(" No one else was here.")
		return b.String()
	}
	b.WriteString(" Here:")
	for i, o := range d.Others {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(" " + o.Name)
	}
	b.WriteByte('.')
	return b.String()
}

// resolutionRecord is what a location's arbiter history keeps of its prompt
// at a tick: the place as it was and what each character present intended.
func resolutionRecord(d prompts.ResolutionData) string {
	var b strings.Builder
	place(&b, d.Simulation.Tick, d.Location)
	if len(d.Characters) == 0 {
		b.WriteString(" No one was here.")
		return b.String()
	}
	b.WriteString(" Intentions:")
	for i, c := range d.Characters {
		if i > 0 {
			b.WriteByte(';')
		}
		fmt.Fprintf(&b, " %s (%s): %s", c.Name, c.ID, c.Intention)
	}
	b.WriteByte('.')
	return b.String()
}

func place(b *strings.Builder, tick int, l prompts.LocationData) {
	fmt.Fprintf(b, "Tick %d in %s.", tick, l.Name)
	if l.Moment != "" {
		b.WriteString(" Right now: " + l.Moment)
		if !strings.HasSuffix(l.Moment, ".") {
			b.WriteByte('.')
		}
	}
}
