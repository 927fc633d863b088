package chronicle

import "github.com/arbiter-sim/arbiter/command"

// tones are the values of TONE.
var tones = []string{string(Light), string(Dark)}

// grammar is the chronicle's commands, read by the shared reader.
var grammar = command.MustGrammar(
	command.Spec{
		Name:   "period",
		Phrase: "CREATE PERIOD",
		Fields: []command.Field{
			{Key: "name", Type: command.Name, Required: true, Label: "period name"},
			{Key: First, Keyword: "FIRST", Type: command.Flag, Group: "position"},
			{Key: Last, Keyword: "LAST", Type: command.Flag, Group: "position"},
			{Key: "after", Keyword: "AFTER", Type: command.Name, Group: "position", Label: "period name"},
			{Key: "before", Keyword: "BEFORE", Type: command.Name, Group: "position", Label: "period name"},
			{Key: "tone", Keyword: "TONE", Type: command.Enum, Values: tones, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Type: command.Text, Required: true},
		},
		Groups: []command.Group{{Name: "position", Required: true,
			Label: "position (FIRST or LAST during setup, AFTER <period> or BEFORE <period> during play)"}},
	},
	command.Spec{
		Name:   "event",
		Phrase: "CREATE EVENT",
		Fields: []command.Field{
			{Key: "name", Type: command.Name, Required: true, Label: "event name"},
			{Key: "period", Keyword: "IN", Type: command.Name, Required: true, Label: "period name"},
			{Key: "after", Keyword: "AFTER", Type: command.Name, Group: "position", Label: "event name"},
			{Key: "before", Keyword: "BEFORE", Type: command.Name, Group: "position", Label: "event name"},
			{Key: "tone", Keyword: "TONE", Type: command.Enum, Values: tones, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Type: command.Text, Required: true},
		},
		Groups: []command.Group{{Name: "position"}},
	},
	command.Spec{
		Name:   "palette",
		Phrase: "CREATE PALETTE",
		Items:  &command.Items{Noun: "palette item", Kinds: []string{"YES", "NO"}, Required: true},
	},
)
