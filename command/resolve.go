package command

import (
	"fmt"
	"strings"
)

// Resolve returns the reading of the statement that check accepts. check
// tells whether the game can carry out a reading (its references exist, its
// rules allow it) and returns an error saying why not; a nil check accepts
// every reading.
//
// With one accepted reading, that reading is the command. With none, the
// error is check's verdict on the likeliest reading (the first). With more
// than one, the command is ambiguous: the error names two of the readings
// and says to quote the names.
func (s Statement) Resolve(check func(Command) error) (Command, error) {
	if s.Err != nil {
		return Command{}, s.Err
	}
	if len(s.Readings) == 0 {
		return Command{}, &Error{Kind: Malformed, Line: s.Line, Reason: "Cannot read this command"}
	}
	var (
		ok       []Command
		firstErr error
	)
	for _, c := range s.Readings {
		if check != nil {
			if err := check(c); err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
		}
		ok = append(ok, c)
	}
	switch len(ok) {
	case 0:
		return Command{}, firstErr
	case 1:
		return ok[0], nil
	}
	return Command{}, &Error{Kind: Ambiguous, Line: s.Line, Reason: fmt.Sprintf(
		"Ambiguous command: it reads as %s or as %s; put the names in quotes", describe(ok[0], ok[1]), describe(ok[1], ok[0]))}
}

// describe renders the fields of c that differ from other, e.g.
// `IN "The Long Night" AFTER "Dawn"`.
// Two readings of one statement always differ in some value: the tokens
// one reads into a field the other reads into another.
func describe(c, other Command) string {
	var parts []string
	for _, f := range c.Spec.Fields {
		v, has := c.Fields[f.Key]
		ov, otherHas := other.Fields[f.Key]
		if !has || (otherHas && ov == v) {
			continue
		}
		switch {
		case f.Type == Flag:
			parts = append(parts, f.name())
		case f.Keyword == "":
			parts = append(parts, fmt.Sprintf("%s %q", f.label(), v))
		default:
			parts = append(parts, fmt.Sprintf("%s %q", f.name(), v))
		}
	}
	return strings.Join(parts, " ")
}
