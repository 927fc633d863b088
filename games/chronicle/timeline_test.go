package chronicle

import (
	"reflect"
	"strings"
	"testing"
)

func names(ps []Period) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return out
}

func TestApplyPlacesInOrder(t *testing.T) {
	t.Parallel()
	var tl Timeline
	steps := []string{
		"CREATE PERIOD Z LAST TONE dark DESCRIPTION end",
		"CREATE PERIOD A FIRST TONE light DESCRIPTION start",
		"CREATE PALETTE\n- YES: Magic\n- NO: Robots",
	}
	for _, s := range steps {
		_, tl = accept(t, tl, s)
	}
	tl.Stage = Play
	for _, s := range []string{
		"CREATE PERIOD M AFTER A TONE light DESCRIPTION middle",
		"CREATE PERIOD L BEFORE M TONE dark DESCRIPTION before middle",
		"CREATE PERIOD N AFTER M TONE dark DESCRIPTION after middle",
		"CREATE EVENT e2 IN M TONE dark DESCRIPTION x",
		"CREATE EVENT e1 IN M BEFORE e2 TONE dark DESCRIPTION x",
		"CREATE EVENT e3 IN M AFTER e2 TONE light DESCRIPTION x",
		"CREATE EVENT e1.5 IN M AFTER e1 TONE light DESCRIPTION x",
	} {
		_, tl = accept(t, tl, s)
	}
	if got := names(tl.Periods); strings.Join(got, " ") != "A L M N Z" {
		t.Errorf("periods = %v", got)
	}
	var events []string
	for _, e := range tl.Periods[2].Events {
		events = append(events, e.Name)
	}
	if strings.Join(events, " ") != "e1 e1.5 e2 e3" {
		t.Errorf("events = %v", events)
	}
	if tl.Periods[0].Bookend != First || tl.Periods[4].Bookend != Last {
		t.Errorf("bookends moved: %+v", tl.Periods)
	}
	if !reflect.DeepEqual(tl.Palette, Palette{Yes: []string{"Magic"}, No: []string{"Robots"}}) {
		t.Errorf("palette = %+v", tl.Palette)
	}
}

func TestApplyRejectsBadTypedCommands(t *testing.T) {
	t.Parallel()
	tl := playTimeline()
	for _, tc := range []struct {
		cmd    Command
		reason string
	}{
		{Command{Type: "era"}, `Unknown command type "era"`},
		{Command{Type: "period", Name: "X", Tone: "grey", Description: "d", Position: "after", Anchor: "The Golden Age"}, `Invalid TONE "grey" (must be light or dark)`},
		{Command{Type: "period", Name: " ", Tone: Light, Description: "d", Position: "after", Anchor: "The Golden Age"}, "A period needs a name and a DESCRIPTION"},
		{Command{Type: "period", Name: "X", Tone: Light, Description: "d", Position: "sideways"}, "Missing position: place the period AFTER <period> or BEFORE <period>"},
		{Command{Type: "event", Name: "X", Tone: Light, Description: "d", Period: "The Golden Age", Position: First}, "An event goes AFTER or BEFORE another event, not FIRST"},
		{Command{Type: "palette"}, "CREATE PALETTE has no palette items"},
		{Command{Type: "palette", Items: []Item{{Kind: "MAYBE", Text: "x"}}}, `Invalid palette item type "MAYBE" (must be YES or NO)`},
		{Command{Type: "palette", Items: []Item{{Kind: "YES", Text: ""}}}, "Palette item YES has no text"},
	} {
		before := tl.Clone()
		if _, err := tl.Apply(tc.cmd); err == nil || err.Error() != tc.reason {
			t.Errorf("Apply(%+v) = %v, want %q", tc.cmd, err, tc.reason)
		}
		if !reflect.DeepEqual(tl, before) {
			t.Errorf("Apply(%+v) changed the timeline", tc.cmd)
		}
	}
}

func TestReadTimeline(t *testing.T) {
	t.Parallel()
	tl, err := ReadTimeline(strings.NewReader(`{"periods":[{"name":"A","tone":"light","events":[{"name":"E","tone":"dark"}]},{"name":"B"}],"palette":{"yes":["Magic"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := Timeline{Stage: Setup, Periods: []Period{
		{Name: "A", Tone: Light, Events: []Event{{Name: "E", Tone: Dark}}},
		{Name: "B", Events: []Event{}},
	}, Palette: Palette{Yes: []string{"Magic"}, No: []string{}}}
	if !reflect.DeepEqual(tl, want) {
		t.Errorf("ReadTimeline = %+v\n want %+v", tl, want)
	}
	if tl, err := ReadTimeline(strings.NewReader(`{}`)); err != nil || tl.Stage != Setup || tl.Periods == nil {
		t.Errorf("empty object: %+v, %v", tl, err)
	}
}

func TestReadTimelineErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ json, want string }{
		{``, "empty file: want a JSON object"},
		{`{"periods": [`, "unexpected EOF"},
		{`{"periods": nope}`, "invalid JSON at byte"},
		{`{"periods": []} {}`, "unexpected data after the JSON object"},
		{`{"periodz": []}`, `unknown field "periodz"`},
		{`{"periods": [{"name": 3}]}`, "cannot unmarshal number"},
		{`{"phase": "endgame"}`, `phase "endgame" must be setup or play`},
		{`{"periods": [{"name": ""}]}`, "periods[0].name is empty"},
		{`{"periods": [{"name": "A", "tone": "grey"}]}`, `periods[0].tone "grey" must be light or dark`},
		{`{"periods": [{"name": "A"}, {"name": "a"}]}`, `periods[1].name "a" repeats periods[0]`},
		{`{"periods": [{"name": "A"}, {"name": "B", "bookend": "first"}]}`, "periods[1].bookend first: only the first period"},
		{`{"periods": [{"name": "A", "bookend": "last"}, {"name": "B"}]}`, "periods[0].bookend last: only the last period"},
		{`{"periods": [{"name": "A", "bookend": "middle"}]}`, `periods[0].bookend "middle" must be first, last or left out`},
		{`{"periods": [{"name": "A", "events": [{"name": "E"}, {"name": "e"}]}]}`, `periods[0].events[1].name "e" repeats periods[0].events[0]`},
		{`{"periods": [{"name": "A", "events": [{"name": ""}]}]}`, "periods[0].events[0].name is empty"},
		{`{"palette": {"yes": ["Magic"], "no": ["magic"]}}`, `palette.no[0] "magic" repeats palette.yes[0]`},
		{`{"palette": {"yes": [" "]}}`, "palette.yes[0] is empty"},
	} {
		_, err := ReadTimeline(strings.NewReader(tc.json))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ReadTimeline(%s) = %v, want it to contain %q", tc.json, err, tc.want)
		}
	}
}

func TestParsePhase(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]Stage{"setup": Setup, " PLAY ": Play} {
		if got, err := ParseStage(in); err != nil || got != want {
			t.Errorf("ParsePhase(%q) = %q, %v", in, got, err)
		}
	}
	if _, err := ParseStage("end"); err == nil || err.Error() != `phase "end" must be setup or play` {
		t.Errorf("ParsePhase(end) = %v", err)
	}
}

func TestTree(t *testing.T) {
	t.Parallel()
	got := playTimeline().Tree()
	want := `Phase: play
Palette:
  YES: Magic exists
  NO: Space travel
Periods:
  1. The Golden Age (light, FIRST bookend)
       Prosperity.
  2. The Uprising Years (dark)
       Revolt.
       - The Uprising (dark)
           The mob rises.
       - The Burning (dark)
           The palace burns.
  3. The Long Dusk (dark, LAST bookend)
       Everything fades.
`
	if got != want {
		t.Errorf("Tree =\n%s\nwant\n%s", got, want)
	}
	if got := (Timeline{}).Tree(); got != "Phase: setup\nPalette:\n  (empty)\nPeriods:\n  (none yet)\n" {
		t.Errorf("empty Tree = %q", got)
	}
}

func TestCommandString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cmd  Command
		want string
	}{
		{Command{Type: "period", Name: "The First Age", Tone: Light, Description: "d", Position: First},
			`CREATE PERIOD "The First Age" FIRST TONE light DESCRIPTION d`},
		{Command{Type: "period", Name: "X", Tone: Dark, Description: "d", Position: "before", Anchor: "Y"},
			`CREATE PERIOD "X" BEFORE "Y" TONE dark DESCRIPTION d`},
		{Command{Type: "event", Name: "E", Tone: Dark, Description: "d", Period: "P", Position: "after", Anchor: "F"},
			`CREATE EVENT "E" IN "P" AFTER "F" TONE dark DESCRIPTION d`},
		{Command{Type: "event", Name: "E", Tone: Dark, Description: "d", Period: "P"},
			`CREATE EVENT "E" IN "P" TONE dark DESCRIPTION d`},
		{Command{Type: "palette", Items: []Item{{"YES", "a"}, {"NO", "b"}}}, "CREATE PALETTE\n- YES: a\n- NO: b"},
	} {
		if got := tc.cmd.String(); got != tc.want {
			t.Errorf("String = %q, want %q", got, tc.want)
		}
		// What String writes reads back as the same command.
		tl := playTimeline()
		events := []Event{}
		if tc.cmd.Anchor == "F" {
			events = []Event{{Name: "F", Tone: Dark}}
		}
		tl.Periods = append(tl.Periods, Period{Name: "P", Tone: Dark, Events: events}, Period{Name: "Y", Tone: Dark})
		tl.Stage = Setup
		if tc.cmd.Type == "event" || tc.cmd.Position == "before" {
			tl.Stage = Play
		}
		if tc.cmd.Position == First {
			tl.Periods = nil
		}
		cmds, _, err := Interpret(tl, tc.cmd.String())
		if err != nil || len(cmds) != 1 {
			t.Errorf("reading back %q: %v", tc.cmd.String(), err)
			continue
		}
		cmds[0].Line = 0
		if !reflect.DeepEqual(cmds[0], tc.cmd) {
			t.Errorf("read back %+v, want %+v", cmds[0], tc.cmd)
		}
	}
}
