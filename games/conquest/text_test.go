package conquest

import (
	"strings"
	"testing"
)

func TestParseOrderText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       string // the orders as JSON, when they parse
		err        string // part of the error, when they do not
	}{
		{"one order", "SEND 7 FROM A TO B", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"lower case, blank lines, indent", "send 7 from a to b\n\n  SEND 3 FROM D TO C\n", `[{"from":"A","to":"B","ships":7},{"from":"D","to":"C","ships":3}]`, ""},
		{"markdown", "**SEND** 7 FROM A TO B\n- SEND 1 FROM D TO C", `[{"from":"A","to":"B","ships":7},{"from":"D","to":"C","ships":1}]`, ""},
		{"ships written out", "send 7 ships from A to B\nSEND 1 ship FROM D TO C", `[{"from":"A","to":"B","ships":7},{"from":"D","to":"C","ships":1}]`, ""},
		{"keywords in another order", "SEND 7 TO B FROM A", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"zero ships is left to validation", "SEND 0 FROM A TO B", `[{"from":"A","to":"B","ships":0}]`, ""},
		{"nothing passes", "  \n", `[]`, ""},
		{"not an order", "attack!\nSEND 7 FROM A TO B", "", `line 1: "attack!" is not an order (write SEND <ships> FROM <star> TO <star>)`},
		{"words after an order", "SEND 7 FROM A TO B\nattack!", "", `line 1: "B attack!" is not a star id`},
		{"two orders on a line", "SEND 7 FROM A TO B SEND 2 FROM D TO C", "", "line 1:"},
		{"missing destination", "SEND 7 FROM A", "", "line 1: Missing required field TO"},
		{"a word for ships", "SEND seven FROM A TO B", "", `line 1: Invalid number of ships "seven"`},
		{"a fraction", "SEND 7.5 FROM A TO B", "", `line 1: Invalid number of ships "7.5"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o, err := ParseOrderText(tt.text)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || o != nil {
					t.Errorf("orders %v, error %v; want no orders and an error containing %q", o, err, tt.err)
				}
				return
			}
			if o == nil {
				o = []Order{}
			}
			if err != nil || jsonOf(t, o) != tt.want {
				t.Errorf("orders %s, error %v; want %s", jsonOf(t, o), err, tt.want)
			}
		})
	}
}

// FuzzParseOrderText: no text a person types makes the reader panic, and
// what it reads checks and executes.
func FuzzParseOrderText(f *testing.F) {
	for _, s := range []string{"SEND 7 FROM A TO B", "send 7 ships from a to b\nSEND 3 FROM D TO C", "**SEND** 0 FROM A TO A", "SEND 7 FROM", "FROM TO SEND", "SEND \"A B\" FROM A TO B"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		o, err := ParseOrderText(text)
		if err != nil {
			return
		}
		checkOrders(t, o)
	})
}
