package conquest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Validation follows seed 000: the whole order set of a player is checked
// first for over-commitment (the ships ordered out of a star add up to more
// than are stationed there), which rejects the whole set; then each order
// is checked alone, when it executes, and an invalid one is skipped.

// overCommitment is one star whose orders ask for more ships than it has.
type overCommitment struct {
	star      string
	total     int
	available int
	first     int     // index of the first order from the star
	orders    []Order // the orders from the star, in order
}

// message is the seed's text: "Total ships from A (12) exceeds available (10)".
func (c overCommitment) message() string {
	return fmt.Sprintf("Total ships from %s (%d) exceeds available (%d)", c.star, c.total, c.available)
}

// rejection is the recorded whole-set error, as the seed shows it:
// "Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]".
func rejection(over []overCommitment) string {
	parts := make([]string, len(over))
	for i, c := range over {
		list := make([]string, len(c.orders))
		for j, o := range c.orders {
			list[j] = fmt.Sprintf("%s to %s", o.Ships, o.To)
		}
		parts[i] = fmt.Sprintf("%s. Orders from %s: [%s]", c.message(), c.star, strings.Join(list, ", "))
	}
	return "Invalid orders: " + strings.Join(parts, "; ")
}

// overCommitted returns the stars from which two or more of player's
// orders together ask for more ships than are there, in the order their
// first order appears: the seed's over-commitment, which rejects the whole
// set. A single order asking for too many is not over-commitment: it is
// skipped alone ("Not enough ships at A: have 5, need 7", the seed's
// display example).
func overCommitted(s *State, player string, orders []Order) []overCommitment {
	return slices.DeleteFunc(ordered(s, player, orders), func(c overCommitment) bool { return len(c.orders) < 2 })
}

// ordered sums the ships player's orders ask of each star it controls and
// returns the stars asked for more than they have, however many orders ask.
// Only the orders that would execute are counted: an order skipped for a
// reason of its own (an unknown star, a star the player does not control,
// a count that is not a positive whole number, the same star twice, an
// element that is not an order) adds nothing, so a typo does not cost the
// whole turn (seed 000: "Typo/confusion - don't penalize entire turn").
// Whether the star has enough ships is what the sum decides, so an order
// asking for more than the star has on its own still counts.
func ordered(s *State, player string, orders []Order) []overCommitment {
	var out []overCommitment
	idx := map[string]int{}
	for i, o := range orders {
		if ownProblem(s, player, o).kind != "" {
			continue
		}
		from := s.orderStar(o.From)
		k, ok := idx[from.ID]
		if !ok {
			k = len(out)
			idx[from.ID] = k
			out = append(out, overCommitment{star: from.ID, available: from.Ships[player], first: i})
		}
		out[k].total += o.Ships.Count
		out[k].orders = append(out[k].orders, o)
	}
	return slices.DeleteFunc(out, func(c overCommitment) bool { return c.total <= c.available })
}

// The kinds of order errors, as OrderError.Kind records them.
const (
	KindInvalidOrder   = "invalid_order"       // an element that is not an order object
	KindUnknownOrigin  = "unknown_origin"      // Origin star X does not exist
	KindUnknownDest    = "unknown_destination" // Destination star X does not exist
	KindNotOwner       = "not_owner"           // Player p1 does not control origin star X
	KindNotWhole       = "not_whole"           // Ships must be a whole number, got 7.5
	KindTooLarge       = "too_large"           // Ships must be at most 2147483647, got 1e20
	KindNotPositive    = "not_positive"        // Ships must be positive, got 0
	KindSameStar       = "same_star"           // Cannot send fleet to same star
	KindNotEnough      = "not_enough_ships"    // Not enough ships at A: have 5, need 7
	KindOverCommitment = "over_commitment"     // the whole set rejected
)

// problem is why an order cannot execute: its kind and the seed's reason;
// the zero problem means it can.
type problem struct {
	kind, reason string
}

// orderProblem says why order o of player cannot execute in s now, the zero
// problem when it can.
func orderProblem(s *State, player string, o Order) problem {
	if p := ownProblem(s, player, o); p.kind != "" {
		return p
	}
	if have := s.orderStar(o.From).Ships[player]; have < o.Ships.Count {
		return problem{KindNotEnough, fmt.Sprintf("Not enough ships at %s: have %d, need %d", o.From, have, o.Ships.Count)}
	}
	return problem{}
}

// ownProblem is what is wrong with order o whatever the other orders and
// the ships at its origin: everything orderProblem checks but whether the
// star has the ships.
func ownProblem(s *State, player string, o Order) problem {
	from, to := s.orderStar(o.From), s.orderStar(o.To)
	switch {
	case o.invalid != "":
		return problem{KindInvalidOrder, o.invalid}
	case from == nil:
		return problem{KindUnknownOrigin, fmt.Sprintf("Origin star %s does not exist", shown(o.From))}
	case to == nil:
		return problem{KindUnknownDest, fmt.Sprintf("Destination star %s does not exist", shown(o.To))}
	case from.Owner != player:
		return problem{KindNotOwner, fmt.Sprintf("Player %s does not control origin star %s", player, o.From)}
	case o.Ships.problem().kind != "":
		return o.Ships.problem()
	case from == to:
		return problem{KindSameStar, "Cannot send fleet to same star"}
	}
	return problem{}
}

func shown(id string) string {
	if id == "" {
		return `""`
	}
	return id
}

// orderError renders an order's error as recorded:
// "Order {index}: {from} -> {to} with {ships} ships: {reason}", and an
// element that is not an order object as "Order {index}: {reason}" (the
// reason shows it as written).
func orderError(i int, o Order, reason string) string {
	if o.invalid != "" {
		return fmt.Sprintf("Order %d: %s", i, reason)
	}
	return fmt.Sprintf("Order %d: %s: %s", i, o, reason)
}

// Shown is the error as a person reads it in the turn's log and the
// report: the recorded error with its order numbered from 1 ("Order 1: A
// -> B with 7 ships: ..."), or the whole set's rejection as recorded.
func (e OrderError) Shown() string {
	if e.All() || e.Order == nil || e.Reason == "" {
		return shownError(e.Error)
	}
	return orderError(e.Index+1, *e.Order, e.Reason)
}

// shownError renumbers a recorded error from 1 ("Order 0: ..." is "Order
// 1: ..."), for the story and the report, which read the records; a
// whole set's rejection, which names no order, is left as it is.
func shownError(recorded string) string {
	rest, ok := strings.CutPrefix(recorded, "Order ")
	n, tail, found := strings.Cut(rest, ": ")
	i, err := strconv.Atoi(n)
	if !ok || !found || err != nil || i < 0 {
		return recorded
	}
	return fmt.Sprintf("Order %d: %s", i+1, tail)
}

// Check validates player's orders against s without executing them, as
// propose_orders does: every problem found, each "Order {index}: {reason}"
// as seed 000's example answer reads. Over-commitment is reported on the
// first order from the star ("Order 0: Total ships from A (12) exceeds
// available (10)"); each order is then checked alone against s ("Order 2:
// Destination star Z does not exist"). No errors means the orders are valid
// now (the state may still change before they execute). An empty list is
// valid: it passes the turn.
func Check(s *State, player string, orders []Order) []string {
	var errs []string
	if !s.HasPlayer(player) {
		return []string{fmt.Sprintf("Player %s is not in this game (players: %s)", player, strings.Join(s.Players, ", "))}
	}
	over := overCommitted(s, player, orders)
	for i, o := range orders {
		for _, c := range over {
			if c.first == i {
				errs = append(errs, fmt.Sprintf("Order %d: %s", i, c.message()))
			}
		}
		if p := orderProblem(s, player, o); p.kind != "" {
			errs = append(errs, fmt.Sprintf("Order %d: %s", i, p.reason))
		}
	}
	return errs
}

// Warnings are what a person sees before submitting: the seed's
// over-commitment and opponent-star warnings, and every other problem an
// order has now, its order numbered from 1 as the person typed it ("Order
// 1: ..."; the records and a model's tool answers count from 0, as seed
// 000 writes them). Submitting anyway is allowed.
func Warnings(s *State, player string, orders []Order) []string {
	var out []string
	for _, c := range ordered(s, player, orders) {
		out = append(out, fmt.Sprintf("Over-commitment at %s: %d ships ordered but only %d available", c.star, c.total, c.available))
	}
	for i, o := range orders {
		if st := s.orderStar(o.From); st != nil && st.Owner != player && st.Owner != "" {
			out = append(out, fmt.Sprintf("Star %s is controlled by opponent (may change by execution)", o.From))
			continue
		}
		if p := orderProblem(s, player, o); p.kind != "" && p.kind != KindNotEnough {
			out = append(out, orderError(i+1, o, p.reason))
		}
	}
	return out
}

// execute carries out player's orders in s at turn, as seed 000's turn
// executor does, and returns the errors to record: the whole set rejected
// for over-commitment, or each invalid order skipped (checked at the moment
// it executes, after the orders before it) while the valid ones launch
// their fleets.
func execute(s *State, player string, orders []Order) []OrderError {
	turn := s.Turn
	if over := overCommitted(s, player, orders); len(over) > 0 {
		msg := rejection(over)
		return []OrderError{{Turn: turn, Player: player, Index: -1, Kind: KindOverCommitment, Reason: msg, Error: msg,
			Suggestion: overSuggestion(over)}}
	}
	var errs []OrderError
	for i, o := range orders {
		if p := orderProblem(s, player, o); p.kind != "" {
			o := o
			errs = append(errs, OrderError{Turn: turn, Player: player, Index: i, Order: &o, Kind: p.kind, Reason: p.reason,
				Error: orderError(i, o, p.reason), Suggestion: suggestion(s, player, o, p.kind)})
			continue
		}
		from, to := s.orderStar(o.From), s.orderStar(o.To)
		from.Ships[player] -= o.Ships.Count
		f := Fleet{Owner: player, From: from.ID, To: to.ID, Ships: o.Ships.Count, Sent: turn, Arrives: turn + travelTurns(from, to)}
		s.Fleets = append(s.Fleets, f)
		// Seed 000: a person sees which orders executed as well as which
		// failed; the log is for people, so its orders count from 1.
		s.logf("Order %d of %s executed: %d ships %s -> %s, arriving turn %d", i+1, player, f.Ships, f.From, f.To, f.Arrives)
	}
	return errs
}

// suggestion is the seed's "Suggestion:" for an order skipped for kind: how
// to write it so it executes, from the state it failed in.
func suggestion(s *State, player string, o Order, kind string) string {
	switch kind {
	case KindInvalidOrder:
		return `Write each order as {"from": "A", "to": "B", "ships": 7} (a person: SEND 7 FROM A TO B)`
	case KindUnknownOrigin, KindUnknownDest:
		return "Check the star id: the stars are " + strings.Join(starIDs(s, ""), ", ")
	case KindNotOwner:
		if own := starIDs(s, player); len(own) > 0 {
			return "Send fleets only from stars you control: " + strings.Join(own, ", ")
		}
		return "You control no star now: you cannot send fleets until you take one"
	case KindNotWhole:
		return "Give the number of ships as a whole number, e.g. 7"
	case KindNotPositive:
		return "Send at least 1 ship, or leave the order out"
	case KindTooLarge:
		from := s.orderStar(o.From)
		return fmt.Sprintf("Send at most the ships stationed at %s (%d now)", from.ID, from.Ships[player])
	case KindSameStar:
		return "Choose a destination other than " + s.orderStar(o.From).ID
	case KindNotEnough:
		// The seed's example: "Reduce ships to 5 or split across multiple turns".
		return fmt.Sprintf("Reduce ships to %d or split across multiple turns", s.orderStar(o.From).Ships[player])
	}
	return ""
}

// overSuggestion says how to avoid over-commitment at each star.
func overSuggestion(over []overCommitment) string {
	parts := make([]string, len(over))
	for i, c := range over {
		parts[i] = fmt.Sprintf("at most %d ships from %s", c.available, c.star)
	}
	return "Order " + andList(parts) + " in total: over-commitment rejects every order of the turn"
}

// starIDs returns the ids of the stars owner controls, or of every star
// when owner is "".
func starIDs(s *State, owner string) []string {
	var ids []string
	for _, st := range s.Stars {
		if owner == "" || st.Owner == owner {
			ids = append(ids, st.ID)
		}
	}
	return ids
}
