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
type Order struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Ships Ships  `json:"ships"`
}

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
	// Kept as encoding/json writes it back (compact, HTML characters
	// escaped), so a count shows the same before and after a record is
	// stored and read.
	if norm, err := json.Marshal(json.RawMessage(b)); err == nil {
		*s = Ships{raw: string(norm)}
	} else {
		*s = Ships{raw: string(b)}
	}
	var f float64
	if string(b) == "null" || len(b) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, &f); err == nil && b[0] != '"' {
		if f == math.Trunc(f) && math.Abs(f) <= math.MaxInt32 {
			*s = Ships{Count: int(f), Whole: true}
		}
	}
	return nil
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

// problem says what is wrong with the count, "" when it is a positive whole
// number.
func (s Ships) problem() string {
	switch {
	case !s.Whole:
		return fmt.Sprintf("Ships must be a whole number, got %s", s)
	case s.Count <= 0:
		return fmt.Sprintf("Ships must be positive, got %d", s.Count)
	}
	return ""
}

// String renders the order as the error log does: "A -> B with 7 ships".
func (o Order) String() string { return fmt.Sprintf("%s -> %s with %s ships", o.From, o.To, o.Ships) }

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
		o, err := parseOrder(r)
		if err != nil {
			return nil, fmt.Errorf("order %d: %w", i, err)
		}
		out[i] = o
	}
	return out, nil
}

// parseOrder reads one order object; star ids may be JSON strings or
// numbers, and are upper-cased as the map spells them.
func parseOrder(r json.RawMessage) (Order, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r, &fields); err != nil || fields == nil {
		return Order{}, fmt.Errorf(`want an object {"from","to","ships"}, got %s`, clip(string(r)))
	}
	var o Order
	o.From, o.To = starID(fields["from"]), starID(fields["to"])
	if v, ok := fields["ships"]; ok {
		_ = o.Ships.UnmarshalJSON(v)
	}
	return o, nil
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
	return strings.ToUpper(strings.TrimSpace(s))
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
