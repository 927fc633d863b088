package chronicle

import (
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/command"
)

// Command is one parsed command, names resolved to the timeline's spelling.
// Its JSON form is what `arbiter chronicle parse` prints.
type Command struct {
	Type        string `json:"type"` // period | event | palette
	Name        string `json:"name"`
	Tone        Tone   `json:"tone"`
	Description string `json:"description"`
	// Position places a period (first, last, after, before) or an event
	// (after, before, or "" for the first event of its period).
	Position string `json:"position"`
	Anchor   string `json:"anchor"` // the period or event named by AFTER or BEFORE
	Period   string `json:"period"` // the period an event is IN
	Items    []Item `json:"items,omitempty"`
	Line     int    `json:"line"` // line of the message where the command starts
}

// Item is one palette item.
type Item struct {
	Kind string `json:"kind"` // YES | NO
	Text string `json:"text"`
}

// fromReading turns a reading of the grammar into a Command, unchecked.
func fromReading(c command.Command) Command {
	pos, anchor := c.Choice("position")
	cmd := Command{
		Type:        c.Spec.Name,
		Name:        c.Get("name"),
		Tone:        Tone(c.Get("tone")),
		Description: c.Get("description"),
		Position:    pos,
		Period:      c.Get("period"),
		Line:        c.Line,
	}
	if pos == "after" || pos == "before" {
		cmd.Anchor = anchor
	}
	for _, it := range c.Items {
		cmd.Items = append(cmd.Items, Item{Kind: it.Kind, Text: it.Text})
	}
	return cmd
}

// String writes the command back in the grammar, names quoted, e.g.
// `CREATE EVENT "The Battle" IN "The Dark Times" AFTER "The Uprising" TONE dark DESCRIPTION ...`.
func (c Command) String() string {
	var b strings.Builder
	switch c.Type {
	case "palette":
		b.WriteString("CREATE PALETTE")
		for _, it := range c.Items {
			fmt.Fprintf(&b, "\n- %s: %s", it.Kind, it.Text)
		}
		return b.String()
	case "event":
		fmt.Fprintf(&b, "CREATE EVENT %q IN %q", c.Name, c.Period)
	default:
		fmt.Fprintf(&b, "CREATE PERIOD %q", c.Name)
	}
	switch c.Position {
	case First, Last:
		b.WriteString(" " + strings.ToUpper(c.Position))
	case "after", "before":
		fmt.Fprintf(&b, " %s %q", strings.ToUpper(c.Position), c.Anchor)
	}
	fmt.Fprintf(&b, " TONE %s DESCRIPTION %s", c.Tone, c.Description)
	return b.String()
}

// Summary says in a few words what the command did, for the conversation.
func (c Command) Summary() string {
	switch c.Type {
	case "palette":
		items := make([]string, len(c.Items))
		for i, it := range c.Items {
			items[i] = fmt.Sprintf("%s %q", it.Kind, it.Text)
		}
		return "added to the palette " + strings.Join(items, ", ")
	case "event":
		s := fmt.Sprintf("created %s event %q in period %q", c.Tone, c.Name, c.Period)
		if c.Anchor != "" {
			s += fmt.Sprintf(", %s %q", c.Position, c.Anchor)
		}
		return s
	}
	switch c.Position {
	case First, Last:
		return fmt.Sprintf("created %s period %q as the %s bookend", c.Tone, c.Name, strings.ToUpper(c.Position))
	}
	return fmt.Sprintf("created %s period %q %s %q", c.Tone, c.Name, c.Position, c.Anchor)
}
