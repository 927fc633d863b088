package command

// testGrammar has the shape of the chronicle's commands and of a conquest
// order, so that the engine is tested without a game.
var testGrammar = MustGrammar(
	Spec{
		Name:   "period",
		Phrase: "CREATE PERIOD",
		Fields: []Field{
			{Key: "name", Type: Name, Required: true, Label: "period name"},
			{Key: "first", Keyword: "FIRST", Type: Flag, Group: "position"},
			{Key: "last", Keyword: "LAST", Type: Flag, Group: "position"},
			{Key: "after", Keyword: "AFTER", Type: Name, Group: "position", Label: "period name"},
			{Key: "before", Keyword: "BEFORE", Type: Name, Group: "position", Label: "period name"},
			{Key: "tone", Keyword: "TONE", Type: Enum, Values: []string{"light", "dark"}, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Type: Text, Required: true},
		},
		Groups: []Group{{Name: "position", Required: true, Label: "position (FIRST, LAST, AFTER <period> or BEFORE <period>)"}},
	},
	Spec{
		Name:   "event",
		Phrase: "CREATE EVENT",
		Fields: []Field{
			{Key: "name", Type: Name, Required: true, Label: "event name"},
			{Key: "period", Keyword: "IN", Type: Name, Required: true, Label: "period name"},
			{Key: "after", Keyword: "AFTER", Type: Name, Group: "position", Label: "event name"},
			{Key: "before", Keyword: "BEFORE", Type: Name, Group: "position", Label: "event name"},
			{Key: "tone", Keyword: "TONE", Type: Enum, Values: []string{"light", "dark"}, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Type: Text, Required: true},
		},
		Groups: []Group{{Name: "position"}},
	},
	Spec{
		Name:   "palette",
		Phrase: "CREATE PALETTE",
		Items:  &Items{Noun: "palette item", Kinds: []string{"YES", "NO"}, Required: true},
	},
	Spec{
		Name:   "list",
		Phrase: "LIST",
		Fields: []Field{{Key: "name", Type: Name, Required: true}},
		Items:  &Items{Kinds: []string{"ADD", "DROP"}},
	},
	Spec{
		Name:   "move",
		Phrase: "MOVE",
		Fields: []Field{
			{Key: "ships", Type: Number, Required: true, Label: "number of ships"},
			{Key: "from", Keyword: "SHIPS FROM", Type: Name, Required: true, Label: "star"},
			{Key: "to", Keyword: "TO", Type: Name, Required: true, Label: "star"},
		},
	},
)
