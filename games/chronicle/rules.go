package chronicle

import (
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/command"
)

// Apply checks cmd against the timeline and the rules of its phase and, when
// it passes, adds it. It returns the command with its references spelled as
// the timeline spells them. On error the timeline is unchanged and the error
// is a *command.Error whose Reason is meant for the person and the model.
func (t *Timeline) Apply(cmd Command) (Command, error) {
	cmd, err := t.check(cmd)
	if err != nil {
		return cmd, err
	}
	t.insert(cmd)
	return cmd, nil
}

// check is Apply without the change.
func (t *Timeline) check(cmd Command) (Command, *command.Error) {
	var err *command.Error
	switch cmd.Type {
	case "period":
		cmd, err = t.checkPeriod(cmd)
	case "event":
		cmd, err = t.checkEvent(cmd)
	case "palette":
		cmd, err = t.checkPalette(cmd)
	default:
		err = &command.Error{Kind: command.Malformed, Reason: fmt.Sprintf("Unknown command type %q", cmd.Type)}
	}
	if err != nil {
		if err.Line == 0 {
			err.Line = cmd.Line
		}
	}
	return cmd, err
}

func rule(format string, args ...any) *command.Error {
	return &command.Error{Kind: command.Rule, Reason: fmt.Sprintf(format, args...)}
}

func reference(format string, args ...any) *command.Error {
	return &command.Error{Kind: command.Reference, Reason: fmt.Sprintf(format, args...)}
}

func checkTone(cmd Command) *command.Error {
	if cmd.Tone != Light && cmd.Tone != Dark {
		return &command.Error{Kind: command.Invalid, Field: "tone",
			Reason: fmt.Sprintf("Invalid TONE %q (must be light or dark)", cmd.Tone)}
	}
	if strings.TrimSpace(cmd.Name) == "" || strings.TrimSpace(cmd.Description) == "" {
		return &command.Error{Kind: command.Missing, Reason: fmt.Sprintf("A %s needs a name and a DESCRIPTION", cmd.Type)}
	}
	return nil
}

func (t *Timeline) checkPeriod(cmd Command) (Command, *command.Error) {
	if err := checkTone(cmd); err != nil {
		return cmd, err
	}
	switch phase := t.stage(); {
	case phase == Play && (cmd.Position == First || cmd.Position == Last):
		return cmd, rule("FIRST/LAST positioning only available during setup phase. Use AFTER or BEFORE.")
	case phase == Setup && (cmd.Position == "after" || cmd.Position == "before"):
		return cmd, rule("AFTER/BEFORE positioning only available during play phase. Use FIRST or LAST.")
	case cmd.Position != First && cmd.Position != Last && cmd.Position != "after" && cmd.Position != "before":
		return cmd, &command.Error{Kind: command.Missing, Field: "position", Reason: missingPosition(phase)}
	}
	if i := t.period(cmd.Name); i >= 0 {
		return cmd, rule("A period named %q already exists", t.Periods[i].Name)
	}
	switch cmd.Position {
	case First, Last:
		if i := t.bookend(cmd.Position); i >= 0 {
			return cmd, rule("The %s bookend already exists: %q", strings.ToUpper(cmd.Position), t.Periods[i].Name)
		}
		cmd.Anchor = ""
		return cmd, nil
	}
	i := t.period(cmd.Anchor)
	if i < 0 {
		return cmd, reference("Period %q not found", cmd.Anchor)
	}
	p := t.Periods[i]
	cmd.Anchor = p.Name
	switch {
	case cmd.Position == "after" && p.Bookend == Last:
		return cmd, rule("Cannot place a period after the LAST bookend %q: periods go between the bookends", p.Name)
	case cmd.Position == "before" && p.Bookend == First:
		return cmd, rule("Cannot place a period before the FIRST bookend %q: periods go between the bookends", p.Name)
	}
	return cmd, nil
}

// missingPosition says which positions the phase allows.
func missingPosition(phase Stage) string {
	if phase == Play {
		return "Missing position: place the period AFTER <period> or BEFORE <period>"
	}
	return "Missing position: during setup a period is a bookend, FIRST or LAST"
}

func (t *Timeline) checkEvent(cmd Command) (Command, *command.Error) {
	if err := checkTone(cmd); err != nil {
		return cmd, err
	}
	if t.stage() == Setup {
		return cmd, rule("Events can only be created during play phase. During setup, create the FIRST and LAST bookend periods and the palette.")
	}
	i := t.period(cmd.Period)
	if i < 0 {
		return cmd, reference("Parent period %q not found", cmd.Period)
	}
	p := &t.Periods[i]
	cmd.Period = p.Name
	if j := p.event(cmd.Name); j >= 0 {
		return cmd, rule("An event named %q already exists in period %q", p.Events[j].Name, p.Name)
	}
	switch cmd.Position {
	case "":
		cmd.Anchor = ""
		if len(p.Events) > 0 {
			return cmd, &command.Error{Kind: command.Missing, Field: "position", Reason: fmt.Sprintf(
				"Missing position: period %q already has events, so place %q AFTER <event> or BEFORE <event>%s",
				p.Name, cmd.Name, eventList(p))}
		}
		return cmd, nil
	case "after", "before":
	default:
		return cmd, rule("An event goes AFTER or BEFORE another event, not %s", strings.ToUpper(cmd.Position))
	}
	j := p.event(cmd.Anchor)
	if j < 0 {
		return cmd, reference("Event %q not found in period %q", cmd.Anchor, p.Name)
	}
	cmd.Anchor = p.Events[j].Name
	return cmd, nil
}

func (t *Timeline) checkPalette(cmd Command) (Command, *command.Error) {
	if len(cmd.Items) == 0 {
		return cmd, &command.Error{Kind: command.Missing, Reason: "CREATE PALETTE has no palette items"}
	}
	if t.stage() == Play && len(cmd.Items) > 1 {
		return cmd, rule("Only one palette item per message during play phase (this CREATE PALETTE has %d); several items at once are for setup", len(cmd.Items))
	}
	seen := map[string]string{}
	for _, it := range cmd.Items {
		switch {
		case it.Kind != "YES" && it.Kind != "NO":
			return cmd, &command.Error{Kind: command.Invalid,
				Reason: fmt.Sprintf("Invalid palette item type %q (must be YES or NO)", it.Kind)}
		case strings.TrimSpace(it.Text) == "":
			return cmd, &command.Error{Kind: command.Missing, Reason: fmt.Sprintf("Palette item %s has no text", it.Kind)}
		}
		if was := t.inPalette(it.Text); was != "" {
			return cmd, rule("%q is already in the palette as %s", it.Text, was)
		}
		if was, dup := seen[key(it.Text)]; dup {
			return cmd, rule("%q is listed twice (%s and %s)", it.Text, was, it.Kind)
		}
		seen[key(it.Text)] = it.Kind
	}
	return cmd, nil
}

// insert adds a checked command to the timeline.
func (t *Timeline) insert(cmd Command) {
	switch cmd.Type {
	case "palette":
		for _, it := range cmd.Items {
			if it.Kind == "YES" {
				t.Palette.Yes = append(t.Palette.Yes, it.Text)
			} else {
				t.Palette.No = append(t.Palette.No, it.Text)
			}
		}
	case "period":
		p := Period{Name: cmd.Name, Tone: cmd.Tone, Description: cmd.Description, Events: []Event{}}
		at := len(t.Periods)
		switch cmd.Position {
		case First:
			p.Bookend, at = First, 0
		case Last:
			p.Bookend = Last
		case "after":
			at = t.period(cmd.Anchor) + 1
		case "before":
			at = t.period(cmd.Anchor)
		}
		t.Periods = slices.Insert(t.Periods, at, p)
	case "event":
		p := &t.Periods[t.period(cmd.Period)]
		e := Event{Name: cmd.Name, Tone: cmd.Tone, Description: cmd.Description}
		at := len(p.Events)
		switch cmd.Position {
		case "after":
			at = p.event(cmd.Anchor) + 1
		case "before":
			at = p.event(cmd.Anchor)
		}
		p.Events = slices.Insert(p.Events, at, e)
	}
}

// eventList names the events of a period.
func eventList(p *Period) string {
	names := make([]string, len(p.Events))
	for i, e := range p.Events {
		names[i] = fmt.Sprintf("%q", e.Name)
	}
	return " (its events: " + strings.Join(names, ", ") + ")"
}
