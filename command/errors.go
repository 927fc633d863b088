package command

import "strconv"

// ErrorKind says what is wrong with a command.
type ErrorKind int

// Kinds of Error. Malformed, Missing, Invalid and Ambiguous are found by
// reading; Reference and Rule are for the games that check what a command
// names and whether the rules allow it.
const (
	Malformed ErrorKind = iota + 1 // an unknown command, stray text, a clause twice, two of one group
	Missing                        // a required field, value or item is absent
	Invalid                        // a value outside its enum, not a number
	Ambiguous                      // more than one reading is acceptable
	Reference                      // a name that names nothing (game)
	Rule                           // a rule of the game forbids it (game): phase, count, duplicate
)

var errorKindNames = [...]string{
	Malformed: "malformed",
	Missing:   "missing",
	Invalid:   "invalid",
	Ambiguous: "ambiguous",
	Reference: "reference",
	Rule:      "rule",
}

func (k ErrorKind) String() string {
	if k <= 0 || int(k) >= len(errorKindNames) {
		return "kind(" + strconv.Itoa(int(k)) + ")"
	}
	return errorKindNames[k]
}

// Error is what is wrong with a command. Reason is a complete, specific
// sentence for the person and the model, e.g. "Missing required field TONE".
type Error struct {
	Kind   ErrorKind
	Reason string
	Line   int    // 1-based line of the message at fault (the command's, or the item's); 0 when unknown
	Field  string // key of the field or name of the group at fault, "" when none
}

func (e *Error) Error() string { return e.Reason }

// Is matches any *Error of the same kind, so errors.Is(err, ErrMissing)
// holds for every missing field.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind
}

// Sentinels for errors.Is, one per kind.
var (
	ErrMalformed = &Error{Kind: Malformed, Reason: "malformed command"}
	ErrMissing   = &Error{Kind: Missing, Reason: "missing part of a command"}
	ErrInvalid   = &Error{Kind: Invalid, Reason: "invalid value in a command"}
	ErrAmbiguous = &Error{Kind: Ambiguous, Reason: "ambiguous command"}
	ErrReference = &Error{Kind: Reference, Reason: "command names nothing known"}
	ErrRule      = &Error{Kind: Rule, Reason: "command not allowed"}
)
