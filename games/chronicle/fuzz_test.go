package chronicle

import (
	"errors"
	"reflect"
	"testing"

	"github.com/arbiter-sim/arbiter/command"
)

// FuzzParse feeds arbitrary model messages to the chronicle in both phases.
// It must never panic, and never apply part of a message: a rejected message
// returns no command and leaves the timeline exactly as it was; an accepted
// one applies every command it holds, and replaying those commands one by
// one gives the same timeline.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"CREATE PERIOD The Golden Age FIRST DESCRIPTION An era of prosperity",
		"CREATE EVENT The Battle IN The Dark Times AFTER The Uprising TONE dark DESCRIPTION ...",
		"CREATE PERIOD The Renaissance FIRST TONE light DESCRIPTION ...",
		"CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel\n- MAYBE: Time travel",
		"CREATE PALETTE\n- YES: Magic exists\n- NO: Space travel",
		"CREATE PERIOD A FIRST TONE light DESCRIPTION a\n\nCREATE PERIOD B LAST TONE dark DESCRIPTION b\n\nCREATE PALETTE\n- YES: x",
		"CREATE EVENT The Fire IN The Uprising Years AFTER The Uprising TONE dark DESCRIPTION Smoke.",
		"CREATE PERIOD Middle AFTER The Golden Age TONE light DESCRIPTION m",
		`Sure! **CREATE PERIOD** "Before the Flood" BEFORE The Long Dusk TONE: dark DESCRIPTION: Rain.`,
		"create event x in the golden age tone light description y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, msg string) {
		for _, tl := range []Timeline{{}, playTimeline()} {
			before := tl.Clone()
			cmds, after, err := Interpret(tl, msg)
			if !reflect.DeepEqual(tl, before) {
				t.Fatalf("Interpret changed its input timeline")
			}
			if err != nil {
				var e *command.Error
				if !errors.As(err, &e) || e.Reason == "" {
					t.Fatalf("error %v is not a *command.Error with a reason", err)
				}
				if cmds != nil || !reflect.DeepEqual(after, before) {
					t.Fatalf("rejected message applied something: %+v", cmds)
				}
				continue
			}
			if n := len(grammar.Parse(msg)); len(cmds) != n {
				t.Fatalf("%d commands applied of %d statements", len(cmds), n)
			}
			replayed := before.Clone()
			for _, c := range cmds {
				if _, err := replayed.Apply(c); err != nil {
					t.Fatalf("applied command %+v does not replay: %v", c, err)
				}
			}
			if !reflect.DeepEqual(replayed, after) {
				t.Fatalf("replay differs:\n%+v\n%+v", replayed, after)
			}
		}
	})
}
