package conquest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Order sends Ships ships of its player from star From to star To.
//
// An element of an order list that is not such an object (7, null,
// {"x": 1}, an object without "from", "to" or "ships") is still an order:
// an invalid one, kept as written, which validation skips and records
// ("Order 0: Invalid order object 7: ...") while the others execute.
type Order struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Ships Ships  `json:"ships"`

	written string // the element as written (compact JSON) when it is not an order object
	invalid string // what is wrong with it then
}

// maxShips is the largest ship count an order can give: the largest int of
// every platform, so a game plays the same on a 32-bit build.
const maxShips = math.MaxInt32

// Ships is the ship count of an order as it was written. Orders come from
// models as JSON, so a count may be "7", 7.5, null or "seven": it is kept as
// written and found wrong when the order is validated, never when it is
// read. Count is the whole number when Whole is set.
type Ships struct {
	Count int
	Whole bool
	raw   string // the JSON as written when not a whole number
}

// N returns ships as a whole number.
func N(n int) Ships { return Ships{Count: n, Whole: true} }

// String is the count as the error messages show it: the number, or what
// was written instead.
func (s Ships) String() string {
	if s.Whole {
		return strconv.Itoa(s.Count)
	}
	if s.raw == "" {
		return "null"
	}
	return s.raw
}

// UnmarshalJSON keeps any JSON value: a whole number (7 or 7.0) is a count,
// anything else is kept as written for the validation to report.
func (s *Ships) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	// Kept as encoding/json writes it back, so a count shows the same
	// before and after a record is stored and read.
	*s = Ships{raw: compact(b)}
	var f float64
	if string(b) == "null" || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, &f); err == nil && b[0] != '"' {
		if f == math.Trunc(f) && math.Abs(f) <= maxShips {
			*s = Ships{Count: int(f), Whole: true}
		}
	}
	return nil
}

// shipsFromText reads the ship count a person typed, kept as written as a
// model's JSON is: "7", "+7" or "007" are 7 ships, "-3" is -3 ships
// (positive is checked later), "7.5" or "1e20" a JSON number that is not a
// count, and a word ("seven") a JSON string. Nothing is refused here: the
// validation says what is wrong, to people and models alike.
func shipsFromText(text string) Ships {
	var s Ships
	if n, err := strconv.ParseInt(text, 10, 64); err == nil {
		_ = s.UnmarshalJSON([]byte(strconv.FormatInt(n, 10)))
		return s
	}
	if b := []byte(text); json.Valid(b) && strings.ContainsRune("-0123456789", rune(text[0])) {
		_ = s.UnmarshalJSON(b)
		return s
	}
	b, _ := json.Marshal(text)
	_ = s.UnmarshalJSON(b)
	return s
}

// MarshalJSON writes the count, or the value as it was written.
func (s Ships) MarshalJSON() ([]byte, error) {
	if s.Whole {
		return []byte(strconv.Itoa(s.Count)), nil
	}
	if s.raw == "" {
		return []byte("null"), nil
	}
	return []byte(s.raw), nil
}

// problem says what is wrong with the count, zero when it is a positive
// whole number of at most maxShips. A whole number beyond an int (2147483648,
// 1e20, 1e400) is too large, a negative one (-1e20) not positive; only what
// is not a whole number at all (7.5, "7", null) is "not a whole number".
func (s Ships) problem() problem {
	if s.Whole {
		if s.Count <= 0 {
			return problem{kind: KindNotPositive, reason: fmt.Sprintf("Ships must be positive, got %d", s.Count)}
		}
		return problem{}
	}
	if f, ok := s.number(); ok && (math.IsInf(f, 0) || f == math.Trunc(f)) {
		if f < 0 {
			return problem{kind: KindNotPositive, reason: fmt.Sprintf("Ships must be positive, got %s", s)}
		}
		return problem{kind: KindTooLarge, reason: fmt.Sprintf("Ships must be at most %d, got %s", maxShips, s)}
	}
	return problem{kind: KindNotWhole, reason: fmt.Sprintf("Ships must be a whole number, got %s", s)}
}

// number returns the count when it was written as a JSON number, ±Inf
// when the number is beyond a float64.
func (s Ships) number() (float64, bool) {
	if s.raw == "" || !strings.ContainsRune("-0123456789", rune(s.raw[0])) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s.raw, 64)
	if err != nil && !math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

// String renders the order as the error log does: "A -> B with 7 ships";
// an element that is not an order object, as it was written.
func (o Order) String() string {
	if o.invalid != "" {
		return o.written
	}
	return fmt.Sprintf("%s -> %s with %s ships", o.From, o.To, o.Ships)
}

// MarshalJSON writes the order as {"from","to","ships"}, or an element that
// is not an order object as it was written, so a record reads back the
// same.
func (o Order) MarshalJSON() ([]byte, error) {
	if o.invalid != "" {
		return []byte(o.written), nil
	}
	type plain Order
	return json.Marshal(plain(o))
}

// UnmarshalJSON reads an order as ParseOrders reads each element.
func (o *Order) UnmarshalJSON(b []byte) error {
	*o = parseOrder(b)
	return nil
}

// ParseOrders reads an order list: a JSON array of {"from","to","ships"}
// objects. A wrong ship count is not an error here (validation reports it
// against its order), nor is a missing from or to (an empty star id does
// not exist). Only a document that is not such an array is an error.
func ParseOrders(data []byte) ([]Order, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New(`no orders: want a JSON array of {"from","to","ships"} objects ([] passes the turn)`)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf(`orders are not a JSON array of {"from","to","ships"} objects: %w`, err)
	}
	if raw == nil {
		return nil, errors.New(`orders are null: want a JSON array of {"from","to","ships"} objects ([] passes the turn)`)
	}
	out := make([]Order, len(raw))
	for i, r := range raw {
		out[i] = parseOrder(r)
	}
	return out, nil
}

// parseOrder reads one element of an order list; star ids may be JSON
// strings or numbers, and are kept as written ("a" names the star A when
// the order is validated, and its errors say "a"). An
// element that is not an object with "from", "to" and "ships" is kept as
// an invalid order saying what is wrong with it.
func parseOrder(r json.RawMessage) Order {
	written := compact(r)
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
		return Order{written: written, invalid: fmt.Sprintf(`Invalid order object %s: want {"from": <star>, "to": <star>, "ships": <number>}`, clip(written))}
	}
	var missing []string
	for _, k := range []string{"from", "to", "ships"} {
		if _, ok := fields[k]; !ok {
			missing = append(missing, strconv.Quote(k))
		}
	}
	if len(missing) > 0 {
		return Order{written: written, invalid: fmt.Sprintf("Invalid order object %s: missing %s", clip(written), andList(missing))}
	}
	o := Order{From: starID(fields["from"]), To: starID(fields["to"])}
	switch {
	case o.From == "" && o.To == "":
		return Order{written: written, invalid: fmt.Sprintf(`Invalid order object %s: "from" and "to" are empty`, clip(written))}
	case o.From == "":
		return Order{written: written, invalid: fmt.Sprintf(`Invalid order object %s: "from" is empty`, clip(written))}
	case o.To == "":
		return Order{written: written, invalid: fmt.Sprintf(`Invalid order object %s: "to" is empty`, clip(written))}
	}
	_ = o.Ships.UnmarshalJSON(fields["ships"])
	return o
}

// compact is a JSON value as encoding/json writes it back (compact, HTML
// characters escaped), so an element shows the same before and after a
// record is stored and read.
// Invalid UTF-8 is written as U+FFFD, as encoding/json reads it back.
func compact(r json.RawMessage) string {
	b, err := json.Marshal(r)
	if err != nil {
		b = bytes.TrimSpace(r)
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

func starID(v json.RawMessage) string {
	if len(v) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		s = string(v) // a number or another value: kept as written
	}
	if s == "null" {
		s = ""
	}
	return strings.TrimSpace(s)
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
