package command

// testGrammar has the shape of the chronicle's commands and of a conquest
// order, so that the engine is tested without a game.
var testGrammar = MustGrammar(
	Spec{
		Name:   "period",
		Phrase: "CREATE PERIOD",
		Fields: []Field{
			{Key: "name", Kind: Name, Required: true, Label: "period name"},
			{Key: "first", Keyword: "FIRST", Kind: Flag, Group: "position"},
			{Key: "last", Keyword: "LAST", Kind: Flag, Group: "position"},
			{Key: "after", Keyword: "AFTER", Kind: Name, Group: "position", Label: "period name"},
			{Key: "before", Keyword: "BEFORE", Kind: Name, Group: "position", Label: "period name"},
			{Key: "tone", Keyword: "TONE", Kind: Enum, Values: []string{"light", "dark"}, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Kind: Text, Required: true},
		},
		Groups: []Group{{Name: "position", Required: true, Label: "position (FIRST, LAST, AFTER <period> or BEFORE <period>)"}},
	},
	Spec{
		Name:   "event",
		Phrase: "CREATE EVENT",
		Fields: []Field{
			{Key: "name", Kind: Name, Required: true, Label: "event name"},
			{Key: "period", Keyword: "IN", Kind: Name, Required: true, Label: "period name"},
			{Key: "after", Keyword: "AFTER", Kind: Name, Group: "position", Label: "event name"},
			{Key: "before", Keyword: "BEFORE", Kind: Name, Group: "position", Label: "event name"},
			{Key: "tone", Keyword: "TONE", Kind: Enum, Values: []string{"light", "dark"}, Required: true},
			{Key: "description", Keyword: "DESCRIPTION", Kind: Text, Required: true},
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
		Fields: []Field{{Key: "name", Kind: Name, Required: true}},
		Items:  &Items{Kinds: []string{"ADD", "DROP"}},
	},
	Spec{
		Name:   "move",
		Phrase: "MOVE",
		Fields: []Field{
			{Key: "ships", Kind: Number, Required: true, Label: "number of ships"},
			{Key: "from", Keyword: "SHIPS FROM", Kind: Name, Required: true, Label: "star"},
			{Key: "to", Keyword: "TO", Kind: Name, Required: true, Label: "star"},
		},
	},
)
