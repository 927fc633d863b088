package conquest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/arbiter-sim/arbiter/command"
)

// grammar is how a person writes orders at the terminal, read by the shared
// command reader: "SEND 7 FROM A TO B", lenient on case, separators and
// markdown, strict on structure.
var grammar = command.MustGrammar(command.Spec{
	Name:   "send",
	Phrase: "SEND",
	Fields: []command.Field{
		{Key: "ships", Kind: command.Number, Required: true, Label: "number of ships"},
		{Key: "from", Keyword: "FROM", Kind: command.Name, Required: true, Label: "origin star"},
		{Key: "to", Keyword: "TO", Kind: command.Name, Required: true, Label: "destination star"},
	},
})

// shipsWord is "7 ships" (or "1 ship") as people write it, read as 7.
var shipsWord = regexp.MustCompile(`(?i)\b(\d+)\s+ships?\b`)

// ParseOrderText reads a person's orders, one SEND command per line; blank
// lines are ignored, and "SEND 7 ships FROM A TO B" is read as 7. Any line that is not an order is an error naming it,
// and then no order is returned: a person's order list is read whole or
// not at all, as a model's message is.
func ParseOrderText(text string) ([]Order, error) {
	var orders []Order
	stmts := grammar.Parse(shipsWord.ReplaceAllString(text, "$1"))
	covered := map[int]bool{}
	for _, st := range stmts {
		for l := st.Line; l <= st.EndLine; l++ {
			covered[l] = true
		}
		c, err := st.Resolve(nil)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w (write SEND <ships> FROM <star> TO <star>)", st.Line, err)
		}
		n, err := strconv.Atoi(c.Get("ships"))
		if err != nil {
			return nil, fmt.Errorf("line %d: %q is not a number of ships", st.Line, c.Get("ships"))
		}
		for _, id := range []string{c.Get("from"), c.Get("to")} {
			if strings.ContainsFunc(id, unicode.IsSpace) {
				return nil, fmt.Errorf("line %d: %q is not a star id (write SEND <ships> FROM <star> TO <star>, one order a line)", st.Line, id)
			}
		}
		orders = append(orders, Order{From: strings.ToUpper(c.Get("from")), To: strings.ToUpper(c.Get("to")), Ships: N(n)})
	}
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimSpace(line) != "" && !covered[i+1] {
			return nil, fmt.Errorf("line %d: %q is not an order (write SEND <ships> FROM <star> TO <star>)", i+1, strings.TrimSpace(line))
		}
	}
	return orders, nil
}
