package command

import (
	"strings"
	"testing"
)

// Seed 001, all-or-nothing: every way a palette can be written is read whole
// or rejected whole.
func TestParsePaletteAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg, want string }{
		{"no bullets", "CREATE PALETTE\nYES: Magic exists\nNO: Space travel\nMAYBE: Time travel", `Invalid palette item type "MAYBE"`},
		{"one line", "CREATE PALETTE YES: Magic exists NO: Space travel MAYBE: Time travel", `Invalid palette item type "MAYBE"`},
		{"after prose", "CREATE PALETTE\n- YES: Magic exists\nAnd one more thing:\n- MAYBE: Time travel", `not under CREATE PALETTE`},
		{"after prose, no bullet", "CREATE PALETTE\n- YES: Magic exists\nAnd one more thing:\nNO: Space travel", `not under CREATE PALETTE`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := one(t, tc.msg)
			if st.Err == nil || !strings.Contains(st.Err.Error(), tc.want) {
				t.Errorf("Err = %v, want one containing %s; readings %+v", st.Err, tc.want, st.Readings)
			}
		})
	}
	// Written on one line, a palette of valid items is read whole, item by item.
	got := only(t, "CREATE PALETTE YES: Magic exists NO: Space travel YES: Dragons")
	if len(got.Items) != 3 || got.Items[1] != (Item{"NO", "Space travel", 1}) {
		t.Errorf("Items = %+v, want three", got.Items)
	}
	// Lenient on tokens: capitals and colons inside one item's text are
	// that item's text, not a second item.
	for _, msg := range []string{"CREATE PALETTE\n- YES: The USA: a superpower", "CREATE PALETTE YES: The USA: a superpower"} {
		got := only(t, msg)
		if len(got.Items) != 1 || got.Items[0].Text != "The USA: a superpower" {
			t.Errorf("%q: Items = %+v, want one item with its colon", msg, got.Items)
		}
	}
}

// Seed 001: a line that looks like a command is read or reported, never
// taken for conversation; plain prose stays prose.
func TestParseCommandShapedLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg, want string }{
		{"misspelt verb", "CRATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity", `"CRATE PERIOD"`},
		{"unknown verb", "MAKE EVENT The Battle IN Dusk TONE dark DESCRIPTION Swords.", `"MAKE EVENT"`},
		{"after prose", "Here it is: CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity", "start its own line"},
		{"mid-line, flag", "I could CREATE PERIOD X FIRST, if you like.", "start its own line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := one(t, tc.msg)
			if st.Err == nil || !strings.Contains(st.Err.Error(), tc.want) {
				t.Errorf("Err = %v, want one containing %s", st.Err, tc.want)
			}
		})
	}
	for _, msg := range []string{
		"Create a sense of dread.",
		`"CREATE PERIOD X" is how I would write it.`,
		"The TONE should be DARK, I think.",
		"OK. Your turn.",
		"I LOVE the description you gave.",
	} {
		if sts := testGrammar.Parse(msg); len(sts) != 0 {
			t.Errorf("prose %q gave statements %+v", msg, sts)
		}
	}
}

// Seed 001: a question to the other player after a DESCRIPTION is not part
// of it.
func TestParseDescriptionStopsAtQuestion(t *testing.T) {
	t.Parallel()
	sts := testGrammar.Parse("CREATE PERIOD A FIRST TONE light DESCRIPTION Dawn\nof all things.\nWhat do you think?")
	if len(sts) != 1 || sts[0].Err != nil {
		t.Fatalf("statements = %+v", sts)
	}
	if d := sts[0].Readings[0].Get("description"); d != "Dawn of all things." {
		t.Errorf("description = %q, want the question left out", d)
	}
	if sts[0].EndLine != 2 {
		t.Errorf("EndLine = %d, want 2", sts[0].EndLine)
	}
}
