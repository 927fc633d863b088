package command

import (
	"errors"
	"strings"
	"testing"
)

// FuzzParse feeds the reader arbitrary messages: it must never panic, and
// every statement must either carry one *Error or complete readings that
// give every required field.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CREATE PERIOD The Golden Age FIRST TONE light DESCRIPTION An era of prosperity",
		"CREATE EVENT The Battle IN The Dark Times AFTER The Uprising TONE dark DESCRIPTION ...",
		"CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel",
		"**CREATE PERIOD**: \"The First Age\" FIRST\nTONE: light\nDESCRIPTION: An era",
		"create event fall in winter in the long night tone dark description x",
		"MOVE 7 SHIPS FROM Alpha TO Beta",
		"CREATE PERIOD \"unclosed FIRST TONE light DESCRIPTION “x",
		"```\nCREATE PALETTE YES\n\n\nNO:\n```",
		"CREATE",
		"> 1. - CREATE PERIOD : = - FIRST",
		"CREATE PALETTE YES: Magic NO: Space MAYBE: Time",
		"CREATE PALETTE\nYES: a\nAB CD: b\nprose\nNO: c",
		"CRATE PERIOD X FIRST TONE light DESCRIPTION y",
		"Here: CREATE PERIOD X FIRST TONE light\nDESCRIPTION y\nWhy?",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		lines := strings.Count(msg, "\n") + 1
		for _, st := range testGrammar.Parse(msg) {
			if st.Line < 1 || st.EndLine < st.Line || st.EndLine > lines {
				t.Fatalf("lines %d-%d of a %d-line message", st.Line, st.EndLine, lines)
			}
			if (st.Err == nil) == (len(st.Readings) == 0) {
				t.Fatalf("statement %+v: want an error or readings, not both or neither", st)
			}
			if st.Err != nil {
				var e *Error
				if !errors.As(st.Err, &e) || e.Reason == "" {
					t.Fatalf("error %v is not a *command.Error with a reason", st.Err)
				}
				continue
			}
			for _, c := range st.Readings {
				for _, fd := range c.Spec.Fields {
					if fd.Required && c.Get(fd.Key) == "" {
						t.Fatalf("reading %v lacks required %s", c.Fields, fd.Key)
					}
				}
				if it := c.Spec.Items; it != nil && it.Required && len(c.Items) == 0 {
					t.Fatalf("reading of %s without items", c.Spec.Name)
				}
			}
			if _, err := st.Resolve(nil); err == nil && len(st.Readings) != 1 {
				t.Fatalf("Resolve accepted one of %d readings without a check", len(st.Readings))
			}
		}
	})
}
