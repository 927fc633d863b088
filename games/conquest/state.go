package conquest

import (
	"cmp"
	"encoding/json"
	"maps"
	"slices"
	"strings"
)

// Star is a star of the map. Owner is a player id, "" when neutral. Ships
// are the ships stationed there per player; Garrison the neutral defenders.
type Star struct {
	ID         string         `json:"id"`
	Name       string         `json:"name,omitempty"`
	X          int            `json:"x"`
	Y          int            `json:"y"`
	Production int            `json:"production"`
	Owner      string         `json:"owner"`
	Ships      map[string]int `json:"ships"`
	Garrison   int            `json:"garrison"`
}

// Fleet is a fleet in flight: it left From on turn Sent and reaches To at
// the movement step of turn Arrives.
type Fleet struct {
	Owner   string `json:"owner"`
	From    string `json:"from"`
	To      string `json:"to"`
	Ships   int    `json:"ships"`
	Sent    int    `json:"sent"`
	Arrives int    `json:"arrives"`
}

// OrderError is one recorded order failure of a turn: Index is the order's
// place in the player's list, or -1 when the whole set was rejected
// (Order is then nil, and the record's JSON says "order": "ALL", as seed
// 000 logs a player's order failure).
type OrderError struct {
	Turn   int    `json:"turn"`
	Player string `json:"player"`
	Index  int    `json:"index"`
	Order  *Order `json:"order"`
	// Kind is what went wrong (KindNotEnough, KindOverCommitment, ...);
	// "" in records written before kinds were recorded.
	Kind   string `json:"kind,omitempty"`
	Reason string `json:"reason"` // the problem alone, e.g. "Not enough ships at A: have 5, need 7"
	Error  string `json:"error"`  // as recorded: "Order 0: A -> B with 7 ships: Not enough ships at A: have 5, need 7"
	// Suggestion says how to write the order so it executes (seed 000's
	// "Suggestion:"), e.g. "Reduce ships to 5 or split across multiple turns".
	Suggestion string `json:"suggestion,omitempty"`
}

// allOrders is the order of a record of the whole set rejected, as seed
// 000's _log_player_order_failure writes it.
const allOrders = "ALL"

// All reports whether the error rejected the player's whole order set.
func (e OrderError) All() bool { return e.Index < 0 }

// orderErrorJSON is OrderError as stored and exported: its order an order,
// or "ALL" for the whole set.
type orderErrorJSON struct {
	Turn       int             `json:"turn"`
	Player     string          `json:"player"`
	Index      int             `json:"index"`
	Order      json.RawMessage `json:"order"`
	Kind       string          `json:"kind,omitempty"`
	Reason     string          `json:"reason"`
	Error      string          `json:"error"`
	Suggestion string          `json:"suggestion,omitempty"`
}

// MarshalJSON writes the record with "order": "ALL" when the whole set was
// rejected; "<", ">" and "&" are written as they are ("A -> B").
func (e OrderError) MarshalJSON() ([]byte, error) {
	order := json.RawMessage(`"` + allOrders + `"`)
	if !e.All() {
		b, err := plainJSON(e.Order)
		if err != nil {
			return nil, err
		}
		order = b
	}
	return plainJSON(orderErrorJSON{Turn: e.Turn, Player: e.Player, Index: e.Index, Order: order, Kind: e.Kind,
		Reason: e.Reason, Error: e.Error, Suggestion: e.Suggestion})
}

// UnmarshalJSON reads a record back. The index says whose it is: a record
// of one order (Index >= 0) has that order, even one written as null or
// "ALL" (an element that is not an order object); a record of the whole set
// has none, whether it says "ALL" or, written before, null.
func (e *OrderError) UnmarshalJSON(b []byte) error {
	var p orderErrorJSON
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = OrderError{Turn: p.Turn, Player: p.Player, Index: p.Index, Kind: p.Kind, Reason: p.Reason, Error: p.Error, Suggestion: p.Suggestion}
	if p.Index >= 0 {
		raw := p.Order
		if len(raw) == 0 {
			raw = json.RawMessage("null")
		}
		o := parseOrder(raw)
		e.Order = &o
	}
	return nil
}

// Result is how a finished game ended: Winner is "" for a draw.
type Result struct {
	Turn   int    `json:"turn"`
	Winner string `json:"winner"`
	Reason string `json:"reason"`
}

// State is a game after Turn turns (0: the start). Its JSON is what
// `arbiter export` prints and what `arbiter conquest check-orders` reads.
type State struct {
	Turn     int      `json:"turn"`
	MaxTurns int      `json:"max_turns"`
	Players  []string `json:"players"`
	// Width and Height are the map's, as the setup gives them (0 in a game
	// saved before they were kept: the map is then as wide and high as its
	// stars reach).
	Width  int     `json:"width,omitempty"`
	Height int     `json:"height,omitempty"`
	Stars  []Star  `json:"stars"`
	Fleets []Fleet `json:"fleets"`
	// Errors are the order errors of every turn so far, in order.
	Errors []OrderError `json:"order_errors"`
	// Passed lists, per turn, the model seats whose turn passed because
	// they used every tool iteration without submitting.
	Passed []Pass   `json:"passed_turns"`
	Result *Result  `json:"result"`
	Rand   Rand     `json:"rand"`
	Log    []string `json:"log"` // what happened in the last turn, for people
	// People are the players a person has played in this game at the
	// terminal (arbiter play), over their configured seats: they read
	// "person" in status, the story and the report.
	People []string `json:"people,omitempty"`
}

// Pass records a model seat that did not submit its orders in time.
type Pass struct {
	Turn   int    `json:"turn"`
	Player string `json:"player"`
	Reason string `json:"reason"`
}

// Star returns the star with id, or nil.
func (s *State) Star(id string) *Star {
	for i := range s.Stars {
		if s.Stars[i].ID == id {
			return &s.Stars[i]
		}
	}
	return nil
}

// orderStar returns the star an order names: the star of that id, else the
// one whose id differs from it only in case ("a" is A, as a person or a
// model may write it); nil when there is none. The order keeps the id as
// written, and its errors echo it so.
func (s *State) orderStar(id string) *Star {
	if st := s.Star(id); st != nil {
		return st
	}
	for i := range s.Stars {
		if strings.EqualFold(s.Stars[i].ID, id) {
			return &s.Stars[i]
		}
	}
	return nil
}

// HasPlayer reports whether p plays this game.
func (s *State) HasPlayer(p string) bool { return slices.Contains(s.Players, p) }

// Over reports whether the game has ended.
func (s *State) Over() bool { return s.Result != nil }

// clone returns a deep copy that a turn may change.
func (s *State) clone() *State {
	c := *s
	c.Players = slices.Clone(s.Players)
	c.Stars = make([]Star, len(s.Stars))
	for i, st := range s.Stars {
		st.Ships = maps.Clone(st.Ships)
		if st.Ships == nil {
			st.Ships = map[string]int{}
		}
		c.Stars[i] = st
	}
	c.Fleets = slices.Clone(s.Fleets)
	c.People = slices.Clone(s.People)
	c.Errors = slices.Clone(s.Errors)
	c.Passed = slices.Clone(s.Passed)
	c.Log = nil
	c.Rand = s.Rand.clone()
	if s.Result != nil {
		r := *s.Result
		c.Result = &r
	}
	return &c
}

// ErrorsOf returns the order errors of player at turn.
func (s *State) ErrorsOf(player string, turn int) []OrderError {
	var out []OrderError
	for _, e := range s.Errors {
		if e.Player == player && e.Turn == turn {
			out = append(out, e)
		}
	}
	return out
}

// Score is what a player holds: stars owned and ships (stationed and in
// flight).
type Score struct {
	Player string `json:"player"`
	Stars  int    `json:"stars"`
	Ships  int    `json:"ships"`
	Errors int    `json:"order_errors"`
}

// Scores returns every player's score, in player order.
func (s *State) Scores() []Score {
	out := make([]Score, len(s.Players))
	for i, p := range s.Players {
		out[i].Player = p
		for _, st := range s.Stars {
			if st.Owner == p {
				out[i].Stars++
			}
			out[i].Ships += st.Ships[p]
		}
		for _, f := range s.Fleets {
			if f.Owner == p {
				out[i].Ships += f.Ships
			}
		}
		for _, e := range s.Errors {
			if e.Player == p {
				out[i].Errors++
			}
		}
	}
	return out
}

// Size is the map's width and height: the setup's, and at least as far as
// the stars reach.
func (s *State) Size() (w, h int) {
	w, h = s.Width, s.Height
	for _, st := range s.Stars {
		w, h = max(w, st.X+1), max(h, st.Y+1)
	}
	return w, h
}

// sortStars keeps the stars in id order.
func sortStars(stars []Star) {
	slices.SortFunc(stars, func(a, b Star) int { return cmp.Compare(a.ID, b.ID) })
}
