package command

import (
	"errors"
	"maps"
	"strings"
	"testing"
	"time"
)

// one parses msg, wants exactly one statement and returns it.
func one(t *testing.T, msg string) Statement {
	t.Helper()
	sts := testGrammar.Parse(msg)
	if len(sts) != 1 {
		t.Fatalf("Parse(%q) = %d statements, want 1: %+v", msg, len(sts), sts)
	}
	return sts[0]
}

// only parses msg and wants exactly one statement with exactly one reading.
func only(t *testing.T, msg string) Command {
	t.Helper()
	st := one(t, msg)
	if st.Err != nil {
		t.Fatalf("Parse(%q): %v", msg, st.Err)
	}
	if len(st.Readings) != 1 {
		t.Fatalf("Parse(%q) = %d readings, want 1: %+v", msg, len(st.Readings), st.Readings)
	}
	return st.Readings[0]
}

var golden = map[string]string{
	"name": "The Golden Age", "first": "FIRST", "tone": "light", "description": "An era of prosperity",
}

func TestParseLenientForms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg string }{
		{"plain", "CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"lower case", "create period The Golden Age first tone light description An era of prosperity"},
		{"mixed case", "Create Period The Golden Age First Tone Light Description An era of prosperity"},
		{"value case", "CREATE PERIOD The Golden Age FIRST TONE LIGHT DESCRIPTION An era of prosperity"},
		{"extra spaces", "  CREATE   PERIOD\tThe   Golden Age  FIRST   TONE  light   DESCRIPTION   An era   of prosperity  "},
		{"colons", "CREATE PERIOD: The Golden Age FIRST TONE: light DESCRIPTION: An era of prosperity"},
		{"colons unspaced", "CREATE PERIOD:The Golden Age FIRST TONE:light DESCRIPTION:An era of prosperity"},
		{"equals", "CREATE PERIOD The Golden Age FIRST TONE=light DESCRIPTION = An era of prosperity"},
		{"dashes", "CREATE PERIOD The Golden Age FIRST Tone - light Description - An era of prosperity"},
		{"en dash", "CREATE PERIOD The Golden Age FIRST TONE – light DESCRIPTION — An era of prosperity"},
		{"double quotes", `CREATE PERIOD "The Golden Age" FIRST TONE "light" DESCRIPTION "An era of prosperity"`},
		{"single quotes", `CREATE PERIOD 'The Golden Age' FIRST TONE light DESCRIPTION An era of prosperity`},
		{"curly quotes", `CREATE PERIOD “The Golden Age” FIRST TONE light DESCRIPTION An era of prosperity`},
		{"bold command", "**CREATE PERIOD** The Golden Age **FIRST** **TONE:** light **DESCRIPTION:** An era of prosperity"},
		{"bold name", "CREATE PERIOD **The Golden Age** FIRST TONE light DESCRIPTION An era of prosperity"},
		{"italic keywords", "CREATE PERIOD The Golden Age *FIRST* _TONE_ light DESCRIPTION An era of prosperity"},
		{"backticks", "`CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity`"},
		{"dash bullet", "- CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"star bullet", "* CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"dot bullet", "• CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"numbered", "1. CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"numbered paren", "2) CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"heading", "### CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"block quote", "> CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
		{"code fence", "```\nCREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity\n```"},
		{"code fence with language", "```text\nCREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity\n```"},
		{"crlf", "CREATE PERIOD The Golden Age FIRST\r\nTONE light\r\nDESCRIPTION An era of prosperity\r\n"},
		{"comma after name", "CREATE PERIOD The Golden Age, FIRST, TONE light, DESCRIPTION An era of prosperity"},
		{"punctuated tone", "CREATE PERIOD The Golden Age FIRST TONE light. DESCRIPTION An era of prosperity"},
		{"clauses reordered", "CREATE PERIOD The Golden Age TONE light FIRST DESCRIPTION An era of prosperity"},
		{"one clause per line", "CREATE PERIOD The Golden Age\nFIRST\nTONE: light\nDESCRIPTION: An era of prosperity"},
		{"description over lines", "CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era\nof prosperity"},
		{"tone under description", "CREATE PERIOD The Golden Age FIRST DESCRIPTION An era of prosperity\nTONE: light"},
		{"quoted description", `CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION: "An era of prosperity"`},
		{"nbsp", "CREATE PERIOD\u00a0The Golden Age FIRST TONE light DESCRIPTION An era of prosperity"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := only(t, tc.msg)
			if got.Spec.Name != "period" || !maps.Equal(got.Fields, golden) {
				t.Errorf("Fields = %q, want %q", got.Fields, golden)
			}
		})
	}
}

func TestParseKeepsDescriptionAsWritten(t *testing.T) {
	t.Parallel()
	got := only(t, `CREATE PERIOD X FIRST TONE dark DESCRIPTION The first kings fell: "never again", they said -- after the flood, before the war; IN short = ruin.`)
	want := `The first kings fell: "never again", they said -- after the flood, before the war; IN short = ruin.`
	if got.Get("description") != want {
		t.Errorf("description = %q, want %q", got.Get("description"), want)
	}
}

func TestParseProse(t *testing.T) {
	t.Parallel()
	msg := `What a lovely idea! Let's begin at the very start.

CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity

I think the end should be bleak. Let me create period pieces later.
We could also CREATE PERIOD something in the middle, but not now.

- **CREATE PERIOD** The Long Dusk LAST TONE dark DESCRIPTION Everything fades.

What do you think?`
	sts := testGrammar.Parse(msg)
	if len(sts) != 2 {
		t.Fatalf("%d statements, want 2: %+v", len(sts), sts)
	}
	if sts[0].Line != 3 || sts[0].EndLine != 3 || sts[1].Line != 8 || sts[1].EndLine != 8 {
		t.Errorf("lines = %d-%d and %d-%d, want 3-3 and 8-8", sts[0].Line, sts[0].EndLine, sts[1].Line, sts[1].EndLine)
	}
	if got := sts[1].Readings[0].Get("description"); got != "Everything fades." {
		t.Errorf("description = %q", got)
	}
	if n := len(testGrammar.Parse("Nothing to do here.\nCreate a mood of dread, perhaps.\n")); n != 0 {
		t.Errorf("prose gave %d statements", n)
	}
}

func TestParseDescriptionEndsAtParagraphOrCommand(t *testing.T) {
	t.Parallel()
	msg := "CREATE PERIOD A FIRST TONE light DESCRIPTION Dawn\nof all things.\nCREATE PERIOD B LAST TONE dark DESCRIPTION Dusk.\n\nAnd that is my proposal."
	sts := testGrammar.Parse(msg)
	if len(sts) != 2 {
		t.Fatalf("%d statements, want 2", len(sts))
	}
	if d := sts[0].Readings[0].Get("description"); d != "Dawn of all things." {
		t.Errorf("first description = %q", d)
	}
	if d := sts[1].Readings[0].Get("description"); d != "Dusk." {
		t.Errorf("second description = %q", d)
	}
}

func TestParseNamesWithKeywordWords(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg    string
		fields map[string]string
	}{
		{"CREATE PERIOD The First Age FIRST TONE light DESCRIPTION x",
			map[string]string{"name": "The First Age", "first": "FIRST", "tone": "light", "description": "x"}},
		{"CREATE PERIOD Before the Flood FIRST TONE light DESCRIPTION x",
			map[string]string{"name": "Before the Flood", "first": "FIRST", "tone": "light", "description": "x"}},
		{"CREATE PERIOD Last Light LAST TONE dark DESCRIPTION x",
			map[string]string{"name": "Last Light", "last": "LAST", "tone": "dark", "description": "x"}},
		{"CREATE PERIOD First Light AFTER The Fall TONE dark DESCRIPTION x",
			map[string]string{"name": "First Light", "after": "The Fall", "tone": "dark", "description": "x"}},
		{"CREATE PERIOD A Tone Poem LAST TONE dark DESCRIPTION x",
			map[string]string{"name": "A Tone Poem", "last": "LAST", "tone": "dark", "description": "x"}},
		{"CREATE PERIOD The Description of Things LAST TONE dark DESCRIPTION x",
			map[string]string{"name": "The Description of Things", "last": "LAST", "tone": "dark", "description": "x"}},
		{`CREATE PERIOD "The Long Night AFTER Dawn" LAST TONE dark DESCRIPTION x`,
			map[string]string{"name": "The Long Night AFTER Dawn", "last": "LAST", "tone": "dark", "description": "x"}},
		{`CREATE EVENT "FIRST BLOOD" IN "BEFORE THE FLOOD" TONE dark DESCRIPTION x`,
			map[string]string{"name": "FIRST BLOOD", "period": "BEFORE THE FLOOD", "tone": "dark", "description": "x"}},
		{"CREATE EVENT The Siege IN Before the Flood AFTER The Fall TONE dark DESCRIPTION x",
			map[string]string{"name": "The Siege", "period": "Before the Flood", "after": "The Fall", "tone": "dark", "description": "x"}},
	} {
		got := only(t, tc.msg)
		if !maps.Equal(got.Fields, tc.fields) {
			t.Errorf("%s\n Fields = %q\n want     %q", tc.msg, got.Fields, tc.fields)
		}
	}
}

func TestParseKeepsEveryReading(t *testing.T) {
	t.Parallel()
	st := one(t, "CREATE EVENT The Raid IN The Long Night After Dawn TONE dark DESCRIPTION x")
	var names []string
	for _, r := range st.Readings {
		names = append(names, r.Get("period")+" | "+r.Get("after"))
	}
	want := []string{"The Long Night After Dawn | ", "The Long Night | Dawn"}
	if strings.Join(names, ", ") != strings.Join(want, ", ") {
		t.Errorf("readings = %q, want %q (keeping the command's capitals first)", names, want)
	}
}

func TestParseCapitalKeywordsAreKeywords(t *testing.T) {
	t.Parallel()
	// Read as a name, AFTER would make "The Interlude AFTER The Dawn" a
	// period placed before The Dusk; in capitals it is a keyword, so the
	// command has two positions.
	st := one(t, "CREATE PERIOD The Interlude AFTER The Dawn BEFORE The Dusk TONE light DESCRIPTION y")
	if !errors.Is(st.Err, ErrMalformed) || st.Err.Error() != "AFTER and BEFORE cannot be used together (give one position; a name that holds BEFORE goes in quotes)" {
		t.Errorf("Err = %v", st.Err)
	}
	// A command not written in capitals keeps both readings of its keyword words.
	st = one(t, "create event fall in winter in the long night tone dark description x")
	if len(st.Readings) != 2 {
		t.Errorf("lower-case command: %d readings, want 2", len(st.Readings))
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg    string
		kind   error
		reason string
	}{
		// The seed's examples.
		{"CREATE PERIOD The Golden Age FIRST DESCRIPTION An era of prosperity", ErrMissing,
			"Missing required field TONE"},
		{"CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel", ErrInvalid,
			`Invalid palette item type "MAYBE" (must be YES or NO)`},
		// Missing fields.
		{"CREATE PERIOD The Golden Age FIRST TONE light", ErrMissing, "Missing required field DESCRIPTION"},
		{"CREATE PERIOD The Golden Age FIRST", ErrMissing, "Missing required fields TONE and DESCRIPTION"},
		{"CREATE PERIOD The Golden Age TONE light DESCRIPTION x", ErrMissing,
			"Missing required position (FIRST, LAST, AFTER <period> or BEFORE <period>)"},
		{"CREATE EVENT The Battle TONE dark DESCRIPTION x", ErrMissing, "Missing required field IN"},
		{"CREATE PERIOD", ErrMissing, "Missing period name after CREATE PERIOD"},
		{"CREATE PERIOD FIRST TONE light DESCRIPTION x", ErrMissing, "Missing period name after CREATE PERIOD"},
		{"CREATE PERIOD X FIRST TONE light DESCRIPTION", ErrMissing, "Missing text after DESCRIPTION"},
		{"CREATE PERIOD X FIRST TONE DESCRIPTION y", ErrMissing, "Missing value after TONE (must be light or dark)"},
		{"CREATE PERIOD X AFTER TONE light DESCRIPTION y", ErrMissing, "Missing period name after AFTER"},
		{"CREATE EVENT X IN TONE light DESCRIPTION y", ErrMissing, "Missing period name after IN"},
		{"CREATE PALETTE", ErrMissing, `CREATE PALETTE has no palette items (add lines such as "- YES: <palette item>" or "- NO: <palette item>")`},
		{"CREATE PALETTE\n- YES:", ErrMissing, "Palette item YES has no text"},
		{"CREATE PALETTE\n- Time travel", ErrMissing, `Palette item "Time travel" has no type (start it with YES: or NO:)`},
		// Invalid values.
		{"CREATE PERIOD X FIRST TONE purple DESCRIPTION y", ErrInvalid, `Invalid TONE "purple" (must be light or dark)`},
		{"CREATE PERIOD X FIRST TONE dark and stormy DESCRIPTION y", ErrInvalid, `Invalid TONE "dark and stormy" (must be light or dark)`},
		{"CREATE PALETTE\n- Not sure: Time travel", ErrInvalid, `Invalid palette item type "Not sure" (must be YES or NO)`},
		{"MOVE seven SHIPS FROM Alpha TO Beta", ErrInvalid, `Invalid number of ships "seven" (must be a whole number)`},
		// Malformed.
		{"CREATE ERA The Golden Age", ErrMalformed, `Unknown command "CREATE ERA" (use CREATE PERIOD, CREATE EVENT or CREATE PALETTE)`},
		{"CREATE", ErrMalformed, `Unknown command "CREATE" (use CREATE PERIOD, CREATE EVENT or CREATE PALETTE)`},
		{"CREATE PERIOD X FIRST LAST TONE light DESCRIPTION y", ErrMalformed, "FIRST and LAST cannot be used together (give one position; a name that holds LAST goes in quotes)"},
		{"CREATE PERIOD X FIRST TONE light TONE dark DESCRIPTION y", ErrMalformed, "TONE is given twice (if one is part of a name, put that name in quotes)"},
		{"CREATE PERIOD THE FIRST AGE FIRST TONE light DESCRIPTION y", ErrMalformed,
			`Unexpected "AGE" after FIRST (put a name that holds keyword words in quotes)`},
	} {
		st := one(t, tc.msg)
		if !errors.Is(st.Err, tc.kind) || st.Err.Error() != tc.reason {
			t.Errorf("%q\n Err = %v (%v)\n want %q (%v)", tc.msg, st.Err, kindOf(st.Err), tc.reason, tc.kind)
		}
		if len(st.Readings) != 0 {
			t.Errorf("%q: readings %+v beside an error", tc.msg, st.Readings)
		}
		if e, ok := errors.AsType[*Error](st.Err); ok && (e.Line < st.Line || e.Line > st.EndLine) {
			t.Errorf("%q: error line %d, statement lines %d-%d", tc.msg, e.Line, st.Line, st.EndLine)
		}
	}
}

func kindOf(err error) ErrorKind {
	if e, ok := errors.AsType[*Error](err); ok {
		return e.Kind
	}
	return 0
}

func TestParseMentionsOfCommandsInProseAreNotCommands(t *testing.T) {
	t.Parallel()
	// "Create" in prose and a quoted CREATE are conversation; a command in
	// capitals inside a line with its fields is reported (fidelity_test.go).
	for _, msg := range []string{
		"Create a sense of dread.",
		"I could CREATE PERIOD X, if you like.",
		`"CREATE PERIOD X" is how I would write it.`,
	} {
		if sts := testGrammar.Parse(msg); len(sts) != 0 {
			t.Errorf("%q gave statements %+v", msg, sts)
		}
	}
}

func TestParsePalette(t *testing.T) {
	t.Parallel()
	want := []Item{{"YES", "Magic exists", 2}, {"NO", "Space travel", 3}, {"YES", "Dragons, but only one", 4}}
	for _, tc := range []struct{ name, msg string }{
		{"dash bullets", "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- YES: Dragons, but only one"},
		{"star bullets", "CREATE PALETTE\n* YES: Magic exists\n* NO: Space travel\n* YES: Dragons, but only one"},
		{"no bullets", "CREATE PALETTE\nYES: Magic exists\nNO: Space travel\nYES: Dragons, but only one"},
		{"lower case", "create palette\n- yes: Magic exists\n- no: Space travel\n- Yes: Dragons, but only one"},
		{"separators", "CREATE PALETTE:\n- YES = Magic exists\n- NO - Space travel\n- YES Dragons, but only one"},
		{"bold", "**CREATE PALETTE**\n- **YES:** Magic exists\n- **NO:** Space travel\n- **YES:** Dragons, but only one"},
		{"quoted", "CREATE PALETTE\n- YES: \"Magic exists\"\n- NO: 'Space travel'\n- YES: Dragons, but only one"},
		{"numbered", "CREATE PALETTE\n1. YES: Magic exists\n2. NO: Space travel\n3. YES: Dragons, but only one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := only(t, tc.msg)
			if len(got.Items) != len(want) {
				t.Fatalf("Items = %+v", got.Items)
			}
			for i := range want {
				if got.Items[i] != want[i] {
					t.Errorf("Items[%d] = %+v, want %+v", i, got.Items[i], want[i])
				}
			}
		})
	}
}

func TestParsePaletteBlocks(t *testing.T) {
	t.Parallel()
	// Items may follow a blank line; prose after the list ends it; an item on
	// the command line counts.
	msg := "Here is my palette:\n\nCREATE PALETTE\n\n- YES: Magic exists\n\n- NO: Space travel\nThat should do.\n- not an item, a separate list\n\nCREATE PALETTE YES: Ghosts"
	sts := testGrammar.Parse(msg)
	if len(sts) != 2 {
		t.Fatalf("%d statements: %+v", len(sts), sts)
	}
	if sts[0].Err != nil || len(sts[0].Readings[0].Items) != 2 || sts[0].Line != 3 || sts[0].EndLine != 7 {
		t.Errorf("first palette = %+v", sts[0])
	}
	if sts[1].Err != nil || len(sts[1].Readings[0].Items) != 1 || sts[1].Readings[0].Items[0].Text != "Ghosts" {
		t.Errorf("second palette = %+v", sts[1])
	}
}

func TestParseConquestShape(t *testing.T) {
	t.Parallel()
	// A numeric subject and a two-word keyword, for conquest's text orders;
	// one statement per line, each with its own verdict.
	sts := testGrammar.Parse("MOVE 7 SHIPS FROM Alpha TO Beta\nmove 3 ships from Gamma Prime to Delta\nMOVE -2 SHIPS FROM A TO B")
	if len(sts) != 3 {
		t.Fatalf("%d statements", len(sts))
	}
	want := []map[string]string{{"ships": "7", "from": "Alpha", "to": "Beta"}, {"ships": "3", "from": "Gamma Prime", "to": "Delta"}}
	for i, w := range want {
		if sts[i].Err != nil || !maps.Equal(sts[i].Readings[0].Fields, w) {
			t.Errorf("order %d = %+v, want %v", i, sts[i], w)
		}
	}
	if !errors.Is(sts[2].Err, ErrInvalid) {
		t.Errorf("negative ships: Err = %v", sts[2].Err)
	}
}

func TestCommandAccessors(t *testing.T) {
	t.Parallel()
	c := only(t, "CREATE PERIOD X AFTER Y TONE dark DESCRIPTION z")
	if k, v := c.Choice("position"); k != "after" || v != "Y" {
		t.Errorf("Choice = %q, %q", k, v)
	}
	if !c.Has("tone") || c.Has("first") || c.Get("first") != "" {
		t.Errorf("Has/Get wrong: %v", c.Fields)
	}
	if k, v := (Command{}).Choice("position"); k != "" || v != "" {
		t.Errorf("zero Choice = %q, %q", k, v)
	}
}

func TestTooAmbiguous(t *testing.T) {
	t.Parallel()
	// Every lower-case keyword word may be a keyword or a name word; past a
	// bound the search stops with an error instead of running for long.
	st := one(t, "create event "+strings.Repeat("after in before ", 40)+"tone dark description x")
	if !errors.Is(st.Err, ErrAmbiguous) || st.Err.Error() != "Too many ways to read this command: put its names in quotes" {
		t.Errorf("Err = %v", st.Err)
	}
	st = one(t, "create event "+strings.Repeat("after in before ", 5)+"tone dark description x")
	if st.Err != nil || len(st.Readings) < 2 {
		t.Errorf("five repeats: Err = %v, %d readings", st.Err, len(st.Readings))
	}
}

// TestParseIsBounded: however a message is built, reading it takes bounded
// work: each statement and the whole message have a step budget, and lone
// quotes are not searched again for each.
func TestParseIsBounded(t *testing.T) {
	t.Parallel()
	bad := "create event " + strings.Repeat("after in before ", 40) + "tone dark description x\n\n"
	// A hang detector, not a speed target: a parse without its budget
	// would not finish in any test's time; with it, it ends at once.
	done := make(chan struct{})
	go func() {
		defer close(done)
		sts := testGrammar.Parse(strings.Repeat(bad, 200) + "CREATE PERIOD X FIRST TONE light DESCRIPTION y")
		if len(sts) != 201 {
			t.Errorf("%d statements", len(sts))
			return
		}
		for i, st := range sts {
			if !errors.Is(st.Err, ErrAmbiguous) {
				t.Errorf("statement %d: Err = %v; want the budget spent", i, st.Err)
				return
			}
		}
		if sts := testGrammar.Parse("CREATE PERIOD " + strings.Repeat(`"a “b 'c `, 30000)); len(sts) != 1 {
			t.Errorf("lone quotes: %d statements", len(sts))
		}
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		t.Fatal("the parse did not end within 2 minutes: its budget does not bound it")
	}
}

func TestParseFieldsUnderText(t *testing.T) {
	t.Parallel()
	// A line under DESCRIPTION starts a field only with a separator or in
	// capitals; otherwise it is more description.
	c := only(t, "CREATE PERIOD X FIRST DESCRIPTION It was grey.\nTone was never its strength.\nTONE dark")
	if c.Get("description") != "It was grey. Tone was never its strength." || c.Get("tone") != "dark" {
		t.Errorf("Fields = %q", c.Fields)
	}
	st := one(t, "CREATE PERIOD X FIRST DESCRIPTION\nTONE: light")
	if !errors.Is(st.Err, ErrMissing) || st.Err.Error() != "Missing text after DESCRIPTION" {
		t.Errorf("Err = %v", st.Err)
	}
	// DESCRIPTION again under DESCRIPTION is text, not a second field.
	c = only(t, "CREATE PERIOD X FIRST TONE light DESCRIPTION a\nDESCRIPTION: b")
	if c.Get("description") != "a DESCRIPTION: b" {
		t.Errorf("description = %q", c.Get("description"))
	}
}

func TestParseItemsAfterFields(t *testing.T) {
	t.Parallel()
	c := only(t, "LIST Groceries\n- ADD: eggs\n- drop milk")
	if c.Get("name") != "Groceries" || len(c.Items) != 2 || c.Items[1] != (Item{Kind: "DROP", Text: "milk", Line: 3}) {
		t.Errorf("LIST = %+v", c)
	}
	st := one(t, "LIST\n- ADD: eggs")
	if !errors.Is(st.Err, ErrMissing) || st.Err.Error() != "Missing name after LIST" {
		t.Errorf("Err = %v", st.Err)
	}
	// Items are optional for LIST; the item noun defaults to "item".
	if c := only(t, "LIST Empty"); len(c.Items) != 0 {
		t.Errorf("Items = %+v", c.Items)
	}
	st = one(t, "LIST Groceries\n- eggs")
	if st.Err == nil || st.Err.Error() != `Item "eggs" has no type (start it with ADD: or DROP:)` {
		t.Errorf("Err = %v", st.Err)
	}
}
