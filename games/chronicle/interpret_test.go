package chronicle

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/command"
)

// playTimeline is a history in play: two bookends, one period between them
// with two events.
func playTimeline() Timeline {
	return Timeline{
		Stage: Play,
		Periods: []Period{
			{Name: "The Golden Age", Tone: Light, Description: "Prosperity.", Bookend: First, Events: []Event{}},
			{Name: "The Uprising Years", Tone: Dark, Description: "Revolt.", Events: []Event{
				{Name: "The Uprising", Tone: Dark, Description: "The mob rises."},
				{Name: "The Burning", Tone: Dark, Description: "The palace burns."},
			}},
			{Name: "The Long Dusk", Tone: Dark, Description: "Everything fades.", Bookend: Last, Events: []Event{}},
		},
		Palette: Palette{Yes: []string{"Magic exists"}, No: []string{"Space travel"}},
	}
}

// wantRejected runs Interpret and wants it to fail with reason and leave the
// timeline as it was.
func wantRejected(t *testing.T, tl Timeline, msg, reason string, kind error) {
	t.Helper()
	before := tl.Clone()
	cmds, after, err := Interpret(tl, msg)
	if err == nil {
		t.Fatalf("%q: accepted: %+v", msg, cmds)
	}
	if err.Error() != reason {
		t.Errorf("%q\n reason %q\n want   %q", msg, err.Error(), reason)
	}
	if kind != nil && !errors.Is(err, kind) {
		t.Errorf("%q: error %v is not %v", msg, err, kind)
	}
	if cmds != nil || !reflect.DeepEqual(after, before) || !reflect.DeepEqual(tl, before) {
		t.Errorf("%q: rejected message changed something: cmds %+v, timeline %+v", msg, cmds, after)
	}
}

func accept(t *testing.T, tl Timeline, msg string) ([]Command, Timeline) {
	t.Helper()
	cmds, after, err := Interpret(tl, msg)
	if err != nil {
		t.Fatalf("%q: %v", msg, err)
	}
	return cmds, after
}

// TestSeedExamples are the four examples of seed 001, word for word.
func TestSeedExamples(t *testing.T) {
	t.Parallel()
	t.Run("1 missing required field", func(t *testing.T) {
		wantRejected(t, Timeline{}, "CREATE PERIOD The Golden Age FIRST DESCRIPTION An era of prosperity",
			"Missing required field TONE", command.ErrMissing)
	})
	t.Run("2 invalid reference", func(t *testing.T) {
		wantRejected(t, playTimeline(), "CREATE EVENT The Battle IN The Dark Times AFTER The Uprising TONE dark DESCRIPTION ...",
			`Parent period "The Dark Times" not found`, command.ErrReference)
	})
	t.Run("3 invalid positioning for phase", func(t *testing.T) {
		wantRejected(t, playTimeline(), "CREATE PERIOD The Renaissance FIRST TONE light DESCRIPTION ...",
			"FIRST/LAST positioning only available during setup phase. Use AFTER or BEFORE.", command.ErrRule)
	})
	t.Run("4 partial palette failure", func(t *testing.T) {
		wantRejected(t, Timeline{}, "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel",
			`Invalid palette item type "MAYBE" (must be YES or NO). No palette items were added.`, command.ErrInvalid)
	})
}

// TestSeedErrorConditions covers the five error conditions of the seed.
func TestSeedErrorConditions(t *testing.T) {
	t.Parallel()
	setup, play := Timeline{}, playTimeline()
	for _, tc := range []struct {
		name   string
		tl     Timeline
		msg    string
		kind   error
		reason string
	}{
		// 1. Malformed syntax.
		{"unknown command", setup, "CREATE ERA The Golden Age FIRST TONE light DESCRIPTION x", command.ErrMalformed,
			`Unknown command "CREATE ERA" (use CREATE PERIOD, CREATE EVENT or CREATE PALETTE)`},
		{"stray text", setup, "CREATE PERIOD THE GOLDEN AGE FIRST ERA TONE light DESCRIPTION x", command.ErrMalformed,
			`Unexpected "ERA" after FIRST (put a name that holds keyword words in quotes)`},
		{"palette item after prose", setup, "CREATE PALETTE\n- YES: Magic exists\nAnd one more thing:\n- NO: Space travel", command.ErrMalformed,
			"The palette item on line 4 is not under CREATE PALETTE: other text comes between (put every palette item directly below it). No palette items were added."},
		{"clause twice", setup, "CREATE PERIOD X FIRST TONE light TONE dark DESCRIPTION x", command.ErrMalformed, "TONE is given twice (if one is part of a name, put that name in quotes)"},
		{"two positions", play, "CREATE PERIOD X AFTER The Golden Age BEFORE The Long Dusk TONE light DESCRIPTION x", command.ErrMalformed,
			"AFTER and BEFORE cannot be used together (give one position; a name that holds BEFORE goes in quotes)"},
		// 2. Missing required fields.
		{"no tone", setup, "CREATE PERIOD X FIRST DESCRIPTION x", command.ErrMissing, "Missing required field TONE"},
		{"no description", setup, "CREATE PERIOD X FIRST TONE dark", command.ErrMissing, "Missing required field DESCRIPTION"},
		{"no tone nor description", setup, "CREATE PERIOD X FIRST", command.ErrMissing, "Missing required fields TONE and DESCRIPTION"},
		{"no name", setup, "CREATE PERIOD FIRST TONE dark DESCRIPTION x", command.ErrMissing, "Missing period name after CREATE PERIOD"},
		{"no period of event", play, "CREATE EVENT The Battle TONE dark DESCRIPTION x", command.ErrMissing, "Missing required field IN"},
		{"no position in setup", setup, "CREATE PERIOD X TONE dark DESCRIPTION x", command.ErrMissing,
			"Missing position: during setup a period is a bookend, FIRST or LAST"},
		{"no position in play", play, "CREATE PERIOD X TONE dark DESCRIPTION x", command.ErrMissing,
			"Missing position: place the period AFTER <period> or BEFORE <period>"},
		{"no position for a later event", play, "CREATE EVENT The Fire IN The Uprising Years TONE dark DESCRIPTION x", command.ErrMissing,
			`Missing position: period "The Uprising Years" already has events, so place "The Fire" AFTER <event> or BEFORE <event> (its events: "The Uprising", "The Burning")`},
		{"empty palette", setup, "CREATE PALETTE\n\nNothing yet.", command.ErrMissing,
			`CREATE PALETTE has no palette items (add lines such as "- YES: <palette item>" or "- NO: <palette item>"). No palette items were added.`},
		{"palette item without type", setup, "CREATE PALETTE\n- Dragons", command.ErrMissing,
			`Palette item "Dragons" has no type (start it with YES: or NO:). No palette items were added.`},
		// 3. Invalid references.
		{"period after unknown", play, "CREATE PERIOD The Thaw AFTER The Ice Age TONE light DESCRIPTION x", command.ErrReference,
			`Period "The Ice Age" not found`},
		{"event in unknown period", play, "CREATE EVENT X IN Period of X TONE light DESCRIPTION x", command.ErrReference,
			`Parent period "Period of X" not found`},
		{"event after unknown event", play, "CREATE EVENT X IN The Uprising Years AFTER The Flood TONE light DESCRIPTION x", command.ErrReference,
			`Event "The Flood" not found in period "The Uprising Years"`},
		// 4. Invalid positioning for the phase.
		{"LAST in play", play, "CREATE PERIOD X LAST TONE light DESCRIPTION x", command.ErrRule,
			"FIRST/LAST positioning only available during setup phase. Use AFTER or BEFORE."},
		{"AFTER in setup", setup, "CREATE PERIOD X AFTER Y TONE light DESCRIPTION x", command.ErrRule,
			"AFTER/BEFORE positioning only available during play phase. Use FIRST or LAST."},
		{"BEFORE in setup", setup, "CREATE PERIOD X BEFORE Y TONE light DESCRIPTION x", command.ErrRule,
			"AFTER/BEFORE positioning only available during play phase. Use FIRST or LAST."},
		{"event in setup", setup, "CREATE EVENT X IN Y TONE light DESCRIPTION x", command.ErrRule,
			"Events can only be created during play phase. During setup, create the FIRST and LAST bookend periods and the palette."},
		{"after the last bookend", play, "CREATE PERIOD X AFTER The Long Dusk TONE light DESCRIPTION x", command.ErrRule,
			`Cannot place a period after the LAST bookend "The Long Dusk": periods go between the bookends`},
		{"before the first bookend", play, "CREATE PERIOD X BEFORE the golden age TONE light DESCRIPTION x", command.ErrRule,
			`Cannot place a period before the FIRST bookend "The Golden Age": periods go between the bookends`},
		// 5. Invalid enum values.
		{"tone purple", setup, "CREATE PERIOD X FIRST TONE purple DESCRIPTION x", command.ErrInvalid,
			`Invalid TONE "purple" (must be light or dark)`},
		{"tone grey event", play, "CREATE EVENT X IN The Golden Age TONE grey DESCRIPTION x", command.ErrInvalid,
			`Invalid TONE "grey" (must be light or dark)`},
		// Rules of the timeline.
		{"period exists", play, "CREATE PERIOD the uprising years AFTER The Golden Age TONE dark DESCRIPTION x", command.ErrRule,
			`A period named "The Uprising Years" already exists`},
		{"bookend exists", Timeline{Periods: []Period{{Name: "Dawn", Tone: Light, Bookend: First}}},
			"CREATE PERIOD Another Dawn FIRST TONE light DESCRIPTION x", command.ErrRule, `The FIRST bookend already exists: "Dawn"`},
		{"event exists", play, "CREATE EVENT The Burning IN The Uprising Years AFTER The Uprising TONE dark DESCRIPTION x", command.ErrRule,
			`An event named "The Burning" already exists in period "The Uprising Years"`},
		{"palette item exists", setup.withPalette("Magic exists"), "CREATE PALETTE\n- NO: magic exists", command.ErrRule,
			`"magic exists" is already in the palette as YES. No palette items were added.`},
		{"palette item twice", setup, "CREATE PALETTE\n- YES: Dragons\n- NO: Dragons", command.ErrRule,
			`"Dragons" is listed twice (YES and NO). No palette items were added.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRejected(t, tc.tl, tc.msg, tc.reason, tc.kind)
		})
	}
}

func (t Timeline) withPalette(yes ...string) Timeline {
	t = t.Clone()
	t.Palette.Yes = append(t.Palette.Yes, yes...)
	return t
}

func TestMultipleCommandsAllowed(t *testing.T) {
	t.Parallel()
	palette := "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- YES: Dragons"
	bookends := "CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION Prosperity.\n\nCREATE PERIOD The Long Dusk LAST TONE dark DESCRIPTION Everything fades."
	for _, tc := range []struct {
		name  string
		msg   string
		types []string
	}{
		{"palette with several items", palette, []string{"palette"}},
		{"two bookends", bookends, []string{"period", "period"}},
		{"both", "Here is my proposal.\n\n" + bookends + "\n\n" + palette + "\n\nWhat do you think?", []string{"period", "period", "palette"}},
		{"last bookend before first", "CREATE PERIOD B LAST TONE dark DESCRIPTION b\nCREATE PERIOD A FIRST TONE light DESCRIPTION a", []string{"period", "period"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmds, after := accept(t, Timeline{}, tc.msg)
			var types []string
			for _, c := range cmds {
				types = append(types, c.Type)
			}
			if strings.Join(types, ",") != strings.Join(tc.types, ",") {
				t.Errorf("types = %v, want %v", types, tc.types)
			}
			if len(tc.types) >= 2 && tc.types[0] == "period" {
				if len(after.Periods) != 2 || after.Periods[0].Bookend != First || after.Periods[1].Bookend != Last {
					t.Errorf("periods = %+v", after.Periods)
				}
			}
		})
	}
}

func TestMultipleCommandsRejected(t *testing.T) {
	t.Parallel()
	play := playTimeline()
	for _, tc := range []struct {
		name   string
		tl     Timeline
		msg    string
		reason string
	}{
		{"two commands in play", play,
			"CREATE PERIOD A AFTER The Golden Age TONE light DESCRIPTION a\nCREATE EVENT B IN The Golden Age TONE dark DESCRIPTION b",
			"Only one command per message during play phase (this message has 2: CREATE PERIOD, CREATE EVENT). None of the 2 commands in this message were applied."},
		{"palette of several items in play", play, "CREATE PALETTE\n- YES: Ghosts\n- NO: Gods",
			"Only one palette item per message during play phase (this CREATE PALETTE has 2); several items at once are for setup. No palette items were added."},
		{"three periods in setup", Timeline{},
			"CREATE PERIOD A FIRST TONE light DESCRIPTION a\nCREATE PERIOD B LAST TONE light DESCRIPTION b\nCREATE PERIOD C LAST TONE light DESCRIPTION c",
			"At most two CREATE PERIOD commands per message during setup phase, the FIRST and LAST bookends (this message has 3). None of the 3 commands in this message were applied."},
		{"two palettes", Timeline{}, "CREATE PALETTE\n- YES: a\n\nCREATE PALETTE\n- NO: b",
			"Only one CREATE PALETTE per message (this message has 2); list all the items under one. No palette items were added. None of the 2 commands in this message were applied."},
		{"two FIRST bookends", Timeline{},
			"CREATE PERIOD A FIRST TONE light DESCRIPTION a\nCREATE PERIOD B FIRST TONE light DESCRIPTION b",
			`The FIRST bookend already exists: "A". None of the 2 commands in this message were applied.`},
		{"bookends and an event in setup", Timeline{},
			"CREATE PERIOD A FIRST TONE light DESCRIPTION a\nCREATE EVENT E IN A TONE light DESCRIPTION e",
			"Events can only be created during play phase. During setup, create the FIRST and LAST bookend periods and the palette. None of the 2 commands in this message were applied."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRejected(t, tc.tl, tc.msg, tc.reason, command.ErrRule)
		})
	}
}

// TestAllOrNothing: valid commands before and after a bad one, and valid
// palette items beside a bad one, are not applied.
func TestAllOrNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg, reason string }{
		{"bad item last", "CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel",
			`Invalid palette item type "MAYBE" (must be YES or NO). No palette items were added.`},
		{"bad item first", "CREATE PALETTE\n- PERHAPS: Time travel\n- YES: Magic exists\n- NO: Space travel",
			`Invalid palette item type "PERHAPS" (must be YES or NO). No palette items were added.`},
		{"item without text among good ones", "CREATE PALETTE\n- YES: Magic exists\n- NO:\n- NO: Space travel",
			"Palette item NO has no text. No palette items were added."},
		{"good bookends, bad palette item", "CREATE PERIOD A FIRST TONE light DESCRIPTION a\n\nCREATE PERIOD B LAST TONE dark DESCRIPTION b\n\nCREATE PALETTE\n- YES: Magic\n- SOMETIMES: Ghosts",
			`Invalid palette item type "SOMETIMES" (must be YES or NO). No palette items were added. None of the 3 commands in this message were applied.`},
		{"good palette, bad bookend", "CREATE PALETTE\n- YES: Magic\n- NO: Ghosts\n\nCREATE PERIOD A FIRST TONE light DESCRIPTION a\n\nCREATE PERIOD B LAST TONE grim DESCRIPTION b",
			`Invalid TONE "grim" (must be light or dark). No palette items were added. None of the 3 commands in this message were applied.`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantRejected(t, Timeline{}, tc.msg, tc.reason, nil)
		})
	}
}

func TestInterpretResolvesNames(t *testing.T) {
	t.Parallel()
	tl := playTimeline()
	cmds, after := accept(t, tl, "CREATE EVENT The Fire IN the uprising   YEARS after THE UPRISING TONE Dark DESCRIPTION Smoke.")
	want := Command{Type: "event", Name: "The Fire", Tone: Dark, Description: "Smoke.", Position: "after",
		Anchor: "The Uprising", Period: "The Uprising Years", Line: 1}
	if !reflect.DeepEqual(cmds, []Command{want}) {
		t.Errorf("cmds = %+v\n want %+v", cmds, want)
	}
	events := after.Periods[1].Events
	if len(events) != 3 || events[1].Name != "The Fire" {
		t.Errorf("events = %+v", events)
	}
}

// TestNamesWithKeywordWords: unquoted names holding keyword words are read
// the way that resolves; quoted ones always work; a truly ambiguous one is
// an error saying so.
func TestNamesWithKeywordWords(t *testing.T) {
	t.Parallel()
	tl := playTimeline()
	tl.Periods = append(tl.Periods[:2:2], Period{Name: "Before the Flood", Tone: Dark, Description: "Rain.", Events: []Event{
		{Name: "First Light", Tone: Light, Description: "Dawn."},
	}}, tl.Periods[2])

	for _, tc := range []struct {
		name, msg        string
		cmdName, period  string
		position, anchor string
	}{
		{"period named with FIRST", "CREATE PERIOD The First Age AFTER The Golden Age TONE light DESCRIPTION x",
			"The First Age", "", "after", "The Golden Age"},
		{"period after a name with Before", "CREATE PERIOD Last Light AFTER Before the Flood TONE dark DESCRIPTION x",
			"Last Light", "", "after", "Before the Flood"},
		{"event in a period named with Before", "CREATE EVENT The Siege IN Before the Flood AFTER First Light TONE dark DESCRIPTION x",
			"The Siege", "Before the Flood", "after", "First Light"},
		{"quoted names", `CREATE EVENT "In the Beginning" IN "Before the Flood" BEFORE "First Light" TONE light DESCRIPTION x`,
			"In the Beginning", "Before the Flood", "before", "First Light"},
		{"lower-case command", "create period the last stand before the long dusk tone dark description x",
			"the last stand", "", "before", "The Long Dusk"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cmds, _ := accept(t, tl, tc.msg)
			c := cmds[0]
			if c.Name != tc.cmdName || c.Period != tc.period || c.Position != tc.position || c.Anchor != tc.anchor {
				t.Errorf("got name %q period %q %s %q", c.Name, c.Period, c.Position, c.Anchor)
			}
		})
	}

	// Both "The Long Night After Dawn" and event "Dawn" of "The Long Night" exist.
	amb := playTimeline()
	amb.Periods = append(amb.Periods[:2:2],
		Period{Name: "The Long Night", Tone: Dark, Description: "x", Events: []Event{{Name: "Dawn", Tone: Light, Description: "x"}}},
		Period{Name: "The Long Night After Dawn", Tone: Dark, Description: "x", Events: []Event{}},
		amb.Periods[2])
	wantRejected(t, amb, "CREATE EVENT The Raid IN The Long Night After Dawn TONE dark DESCRIPTION x",
		`Ambiguous command: it reads as IN "The Long Night After Dawn" or as IN "The Long Night" AFTER "Dawn"; put the names in quotes`,
		command.ErrAmbiguous)
	cmds, _ := accept(t, amb, `CREATE EVENT The Raid IN "The Long Night" After "Dawn" TONE dark DESCRIPTION x`)
	if cmds[0].Period != "The Long Night" || cmds[0].Anchor != "Dawn" {
		t.Errorf("quoted: %+v", cmds[0])
	}
}

func TestInterpretProseOnly(t *testing.T) {
	t.Parallel()
	tl := playTimeline()
	cmds, after, err := Interpret(tl, "I love this history. Shall we create period pieces next?")
	if err != nil || cmds != nil || !reflect.DeepEqual(after, tl) {
		t.Errorf("prose: %v, %v", cmds, err)
	}
}

func TestInterpretPaletteDuringPlay(t *testing.T) {
	t.Parallel()
	cmds, after := accept(t, playTimeline(), "CREATE PALETTE\n- NO: Ghosts")
	if len(cmds) != 1 || !reflect.DeepEqual(after.Palette.No, []string{"Space travel", "Ghosts"}) {
		t.Errorf("palette = %+v", after.Palette)
	}
}

// Seed 001 through the chronicle's grammar: every hole of issue 10 rejects
// the whole message with the seed's error and leaves the timeline as it was.
func TestInterpretAllOrNothingHoles(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, msg, want string }{
		{"palette without bullets", "CREATE PALETTE\nYES: Magic exists\nMAYBE: Time travel", `Invalid palette item type "MAYBE" (must be YES or NO)`},
		{"palette on one line", "CREATE PALETTE YES: Magic exists NO: Space travel MAYBE: Time travel", `Invalid palette item type "MAYBE"`},
		{"item after prose", "CREATE PALETTE\n- YES: Magic exists\nAlso:\nNO: Space travel", "not under CREATE PALETTE"},
		{"misspelt verb", "CRATE PERIOD Dusk AFTER The Golden Age TONE dark DESCRIPTION The end.", `Unknown command "CRATE PERIOD"`},
		{"after prose", "Here: CREATE PERIOD Dusk AFTER The Golden Age TONE dark DESCRIPTION The end.", "must start its own line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tl := playTimeline()
			cmds, after, err := Interpret(tl, tc.msg)
			if err == nil || !strings.Contains(err.Error(), tc.want) || cmds != nil || !reflect.DeepEqual(after, tl) {
				t.Errorf("Interpret = %v, %v; want nothing applied and an error containing %q", cmds, err, tc.want)
			}
		})
	}
}
