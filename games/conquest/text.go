package conquest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/arbiter-sim/arbiter/command"
)

// grammar is how a person writes orders at the terminal, read by the shared
// command reader: "SEND 7 FROM A TO B", lenient on case, separators and
// markdown, strict on structure. The ship count is read as a name (the word
// as written), not as the reader's Number, which refuses -3 and 7.5: a
// person's count is kept as written, as a model's is, and the validation
// says what is wrong with it (seed 000: the same rules for people and
// models).
var grammar = command.MustGrammar(command.Spec{
	Name:   "send",
	Phrase: "SEND",
	Fields: []command.Field{
		{Key: "ships", Type: command.Name, Required: true, Label: "number of ships"},
		{Key: "from", Keyword: "FROM", Type: command.Name, Required: true, Label: "origin star"},
		{Key: "to", Keyword: "TO", Type: command.Name, Required: true, Label: "destination star"},
	},
})

const orderForm = "write SEND <ships> FROM <star> TO <star>, one order a line"

// ParseOrderText reads a person's orders, one SEND command per line; blank
// lines are ignored, and "SEND 7 ships FROM A TO B" is read as 7. The count
// is kept as written, as a model's JSON is: "SEND -3 FROM A TO B", "SEND
// 7.5 ...", "SEND 2147483648 ..." or "SEND seven ..." give an order whose
// Ships is -3, 7.5, 2147483648 or "seven", which Warnings flags and the
// turn's validation skips and records. A line that is not an order (no
// SEND, a missing FROM or TO, a star id or a count of several words) is an
// error naming it, and then no order is returned: a person's order list is
// read whole or not at all, as a model's message is. Bytes that are not
// UTF-8 become U+FFFD here, so an order holds what state.db and an export
// will hold (JSON cannot carry them) and reads back the same.
func ParseOrderText(text string) ([]Order, error) {
	text = strings.ToValidUTF8(text, "\uFFFD")
	var orders []Order
	lines := strings.Split(text, "\n")
	stmts := grammar.Parse(text)
	covered := map[int]bool{}
	for _, st := range stmts {
		for l := st.Line; l <= st.EndLine; l++ {
			covered[l] = true
		}
		c, err := st.Resolve(nil)
		var missing *command.Error
		if errors.As(err, &missing) && missing.Kind == command.Missing && missing.Field != "" {
			return nil, fmt.Errorf("line %d: %w: %s (%s)", st.Line, err, expected(lineAt(lines, st.Line), strings.ToUpper(missing.Field)), orderForm)
		}
		if err != nil {
			return nil, fmt.Errorf("line %d: %w (%s)", st.Line, err, orderForm)
		}
		count := strings.Fields(c.Get("ships"))
		if len(count) == 2 && (strings.EqualFold(count[1], "ships") || strings.EqualFold(count[1], "ship")) {
			count = count[:1]
		}
		if len(count) != 1 {
			return nil, fmt.Errorf("line %d: %q is not a number of ships (%s)", st.Line, c.Get("ships"), orderForm)
		}
		for _, id := range []string{c.Get("from"), c.Get("to")} {
			if strings.ContainsFunc(id, unicode.IsSpace) {
				return nil, fmt.Errorf("line %d: %q is not a star id (%s)", st.Line, id, orderForm)
			}
		}
		orders = append(orders, Order{From: c.Get("from"), To: c.Get("to"), Ships: shipsFromText(count[0])})
	}
	for i, line := range lines {
		if strings.TrimSpace(line) != "" && !covered[i+1] {
			return nil, fmt.Errorf("line %d: %q is not an order (write SEND <ships> FROM <star> TO <star>)", i+1, strings.TrimSpace(line))
		}
	}
	return orders, nil
}

// expected says where a SEND line leaves its form for the keyword kw (FROM
// or TO) the reader missed: `expected FROM after "SEND 4", found "FORM"`.
func expected(line, kw string) string {
	words := strings.Fields(line)
	p := slices.IndexFunc(words, func(w string) bool {
		return strings.EqualFold(strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }), "SEND")
	})
	start := max(0, p)
	p = start + 2 // SEND and the count
	if p < len(words) && (strings.EqualFold(words[p], "ships") || strings.EqualFold(words[p], "ship")) {
		p++
	}
	if kw == "TO" && p < len(words) && strings.EqualFold(words[p], "FROM") {
		p += 2 // FROM and its star
	}
	p = min(p, len(words))
	found := "the end of the line"
	if p < len(words) {
		found = fmt.Sprintf("%q", words[p])
	}
	return fmt.Sprintf("expected %s after %q, found %s", kw, strings.Join(words[start:p], " "), found)
}

// lineAt is line n (1-based) of lines, "" past their end.
func lineAt(lines []string, n int) string {
	if n < 1 || n > len(lines) {
		return ""
	}
	return lines[n-1]
}
