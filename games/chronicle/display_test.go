package chronicle

import "testing"

func TestDisplay(t *testing.T) {
	t.Parallel()
	applied := Command{Type: "palette", Items: []Item{{"YES", "a"}, {"NO", "b"}}}
	for _, tc := range []struct {
		m    Message
		want string
	}{
		{Message{Role: Model, Text: "Prose only.\n\n"}, "Prose only."},
		{Message{Role: Model, Text: "So:\n**CREATE PALETTE**\n- YES: a\n- no: b\nDone.", Applied: []Command{applied}},
			"So:\n▸ CREATE PALETTE\n  - YES: a\n  - NO: b\nDone."},
		{Message{Role: Model, Text: "CREATE PALETTE\n- YES: a", Applied: []Command{applied, applied}}, "CREATE PALETTE\n- YES: a"},
		{Message{Role: System, Text: "note", Applied: []Command{applied}}, "note"},
	} {
		if got := Display(tc.m); got != tc.want {
			t.Errorf("Display(%q) = %q, want %q", tc.m.Text, got, tc.want)
		}
	}
}
