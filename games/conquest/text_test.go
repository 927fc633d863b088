package conquest

import (
	"slices"
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
		{"lower case, blank lines, indent", "send 7 from a to b\n\n  SEND 3 FROM D TO C\n", `[{"from":"a","to":"b","ships":7},{"from":"D","to":"C","ships":3}]`, ""},
		{"markdown", "**SEND** 7 FROM A TO B\n- SEND 1 FROM D TO C", `[{"from":"A","to":"B","ships":7},{"from":"D","to":"C","ships":1}]`, ""},
		{"ships written out", "send 7 ships from A to B\nSEND 1 ship FROM D TO C", `[{"from":"A","to":"B","ships":7},{"from":"D","to":"C","ships":1}]`, ""},
		{"keywords in another order", "SEND 7 TO B FROM A", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"zero ships is left to validation", "SEND 0 FROM A TO B", `[{"from":"A","to":"B","ships":0}]`, ""},
		{"nothing passes", "  \n", `[]`, ""},
		{"not an order", "attack!\nSEND 7 FROM A TO B", "", `line 1: "attack!" is not an order (write SEND <ships> FROM <star> TO <star>)`},
		{"words after an order", "SEND 7 FROM A TO B\nattack!", "", `line 1: "B attack!" is not a star id`},
		{"two orders on a line", "SEND 7 FROM A TO B SEND 2 FROM D TO C", "", "line 1:"},
		{"missing destination", "SEND 7 FROM A", "", "line 1: Missing required field TO"},
		{"a misspelt FROM", "SEND 4 FORM C TO B", "", `line 1: Missing required field FROM: expected FROM after "SEND 4", found "FORM"`},
		{"a misspelt TO", "SEND 4 ships FROM C\nSEND 4 FROM C TOO B", "", `line 1: Missing required field TO: expected TO after "SEND 4 ships FROM C", found the end of the line`},
		{"no FROM", "- SEND 4 C TO B", "", `line 1: Missing required field FROM: expected FROM after "SEND 4", found "C"`},
		{"a word for ships is kept as written", "SEND seven FROM A TO B", `[{"from":"A","to":"B","ships":"seven"}]`, ""},
		{"a fraction is kept as written", "SEND 7.5 ships FROM A TO B", `[{"from":"A","to":"B","ships":7.5}]`, ""},
		{"a negative count is kept", "SEND -3 FROM A TO B", `[{"from":"A","to":"B","ships":-3}]`, ""},
		{"a sign and zeros", "SEND +007 FROM A TO B", `[{"from":"A","to":"B","ships":7}]`, ""},
		{"beyond an int", "SEND 2147483648 FROM A TO B\nSEND 1e20 FROM D TO C", `[{"from":"A","to":"B","ships":2147483648},{"from":"D","to":"C","ships":1e20}]`, ""},
		{"a count of two words", "SEND 7 8 FROM A TO B", "", `line 1: "7 8" is not a number of ships`},
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

// issue 21 item 6: the same rules for people and models. A person's
// "SEND -3 FROM A TO B" or "SEND 7.5 FROM A TO B" is not refused at the
// prompt: it is read as an order whose count is kept as written (as a
// model's JSON is), warned about before submission, and if submitted
// anyway skipped and recorded exactly as the same order from a model is.
// The warning numbers the order from 1, as the person typed it; the record
// from 0, as the seed writes it.
func TestPersonOrdersFollowModelRules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		text, json string // a person's order and a model's same order
		warning    string
		recorded   string
	}{
		{"SEND -3 FROM A TO B", `[{"from":"A","to":"B","ships":-3}]`,
			"Order 1: A -> B with -3 ships: Ships must be positive, got -3",
			"Order 0: A -> B with -3 ships: Ships must be positive, got -3"},
		{"SEND 7.5 FROM A TO B", `[{"from":"A","to":"B","ships":7.5}]`,
			"Order 1: A -> B with 7.5 ships: Ships must be a whole number, got 7.5",
			"Order 0: A -> B with 7.5 ships: Ships must be a whole number, got 7.5"},
		{"send 2147483648 from a to b", `[{"from":"a","to":"b","ships":2147483648}]`,
			"Order 1: a -> b with 2147483648 ships: Ships must be at most 2147483647, got 2147483648",
			"Order 0: a -> b with 2147483648 ships: Ships must be at most 2147483647, got 2147483648"},
		{"SEND seven FROM A TO B", `[{"from":"A","to":"B","ships":"seven"}]`,
			`Order 1: A -> B with "seven" ships: Ships must be a whole number, got "seven"`,
			`Order 0: A -> B with "seven" ships: Ships must be a whole number, got "seven"`},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			t.Parallel()
			person, err := ParseOrderText(tt.text + "\nSEND 2 FROM D TO C")
			if err != nil {
				t.Fatalf("refused at the prompt: %v", err)
			}
			model := append(orders(t, tt.json), Order{From: "D", To: "C", Ships: N(2)})
			if jsonOf(t, person) != jsonOf(t, model) {
				t.Errorf("the person's orders %s, the model's %s", jsonOf(t, person), jsonOf(t, model))
			}
			if got := Warnings(board(), "p1", person); !slices.Equal(got, []string{tt.warning}) {
				t.Errorf("warnings %q, want [%q]", got, tt.warning)
			}
			s := board()
			got := next(t, s, map[string][]Order{"p1": person})
			want := next(t, board(), map[string][]Order{"p1": model})
			if texts := errorTexts(got.ErrorsOf("p1", 4)); !slices.Equal(texts, []string{tt.recorded}) {
				t.Errorf("recorded %q, want [%q]", texts, tt.recorded)
			}
			if jsonOf(t, got) != jsonOf(t, want) {
				t.Errorf("the person's turn\n%s\nthe model's\n%s", jsonOf(t, got), jsonOf(t, want))
			}
			if f := fleetsOf(got, "p1"); len(f) != 1 || f[0].From != "D" || f[0].Ships != 2 {
				t.Errorf("fleets %+v, want the valid D -> C alone", f)
			}
		})
	}
}

// FuzzParseOrderText: no text a person types makes the reader panic, and
// what it reads checks and executes.
// TestParseOrderTextInvalidUTF8: a byte that is not UTF-8 is read as
// U+FFFD, what JSON stores, so the order's record reads back as it was made.
func TestParseOrderTextInvalidUTF8(t *testing.T) {
	o, err := ParseOrderText("SEND 0 FROM \xff TO 0")
	if err != nil || len(o) != 1 || o[0].From != "\uFFFD" {
		t.Fatalf("got %+v, %v; want one order from U+FFFD", o, err)
	}
	checkOrders(t, o)
}

func FuzzParseOrderText(f *testing.F) {
	for _, s := range []string{"SEND 7 FROM A TO B", "send 7 ships from a to b\nSEND 3 FROM D TO C", "**SEND** 0 FROM A TO A", "SEND 7 FROM", "FROM TO SEND", "SEND \"A B\" FROM A TO B",
		"SEND -3 FROM A TO B", "SEND 7.5 FROM A TO B", "SEND 2147483648 FROM A TO B", "SEND 1e20 FROM A TO B", "SEND +007 ships FROM A TO B", "SEND seven FROM A TO Z", "SEND \"\x1b]0;x\x07\" FROM A TO B", "SEND 0 FROM \xff TO 0"} {
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
