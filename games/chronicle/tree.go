package chronicle

import (
	"fmt"
	"strings"
)

// Tree renders the timeline as an indented tree: phase, palette, then the
// periods in order with their events in order, each with its tone and
// description.
func (t Timeline) Tree() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Phase: %s\n", t.stage())
	b.WriteString("Palette:\n")
	if len(t.Palette.Yes)+len(t.Palette.No) == 0 {
		b.WriteString("  (empty)\n")
	}
	for _, it := range t.Palette.Yes {
		fmt.Fprintf(&b, "  YES: %s\n", it)
	}
	for _, it := range t.Palette.No {
		fmt.Fprintf(&b, "  NO: %s\n", it)
	}
	b.WriteString("Periods:\n")
	if len(t.Periods) == 0 {
		b.WriteString("  (none yet)\n")
	}
	for i, p := range t.Periods {
		label := string(p.Tone)
		if p.Bookend != "" {
			label += ", " + strings.ToUpper(p.Bookend) + " bookend"
		}
		fmt.Fprintf(&b, "  %d. %s (%s)\n", i+1, p.Name, label)
		if p.Description != "" {
			fmt.Fprintf(&b, "       %s\n", p.Description)
		}
		for _, e := range p.Events {
			fmt.Fprintf(&b, "       - %s (%s)\n", e.Name, e.Tone)
			if e.Description != "" {
				fmt.Fprintf(&b, "           %s\n", e.Description)
			}
		}
	}
	return b.String()
}
