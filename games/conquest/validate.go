package conquest

import (
	"fmt"
	"slices"
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
// display example). Ownership is checked before ships are counted: an
// order from a star the player does not control, or with a count that is
// not a positive whole number, is left to the checks of each order and adds
// nothing here.
func overCommitted(s *State, player string, orders []Order) []overCommitment {
	return slices.DeleteFunc(ordered(s, player, orders), func(c overCommitment) bool { return len(c.orders) < 2 })
}

// ordered sums the ships player's orders ask of each star it controls and
// returns the stars asked for more than they have, however many orders ask.
func ordered(s *State, player string, orders []Order) []overCommitment {
	var out []overCommitment
	idx := map[string]int{}
	for i, o := range orders {
		st := s.Star(o.From)
		if st == nil || st.Owner != player || o.Ships.problem() != "" {
			continue
		}
		k, ok := idx[o.From]
		if !ok {
			k = len(out)
			idx[o.From] = k
			out = append(out, overCommitment{star: o.From, available: st.Ships[player], first: i})
		}
		out[k].total += o.Ships.Count
		out[k].orders = append(out[k].orders, o)
	}
	return slices.DeleteFunc(out, func(c overCommitment) bool { return c.total <= c.available })
}

// orderProblem says why order o of player cannot execute in s now, "" when
// it can.
func orderProblem(s *State, player string, o Order) string {
	from, to := s.Star(o.From), s.Star(o.To)
	switch {
	case from == nil:
		return fmt.Sprintf("Origin star %s does not exist", shown(o.From))
	case to == nil:
		return fmt.Sprintf("Destination star %s does not exist", shown(o.To))
	case from.Owner != player:
		return fmt.Sprintf("Player %s does not control origin star %s", player, o.From)
	case o.Ships.problem() != "":
		return o.Ships.problem()
	case o.From == o.To:
		return "Cannot send fleet to same star"
	case from.Ships[player] < o.Ships.Count:
		return fmt.Sprintf("Not enough ships at %s: have %d, need %d", o.From, from.Ships[player], o.Ships.Count)
	}
	return ""
}

func shown(id string) string {
	if id == "" {
		return `""`
	}
	return id
}

// orderError renders an order's error as recorded:
// "Order {index}: {from} -> {to} with {ships} ships: {reason}".
func orderError(i int, o Order, reason string) string {
	return fmt.Sprintf("Order %d: %s: %s", i, o, reason)
}

// Check validates player's orders against s without executing them, as
// propose_orders does: every problem found, each starting with
// "Order {index}: ". Over-commitment is reported on the first order from
// the star, in the seed's words ("Order 0: Total ships from A (12) exceeds
// available (10)"); each order is then checked alone against s. No errors
// means the orders are valid now (the state may still change before they
// execute). An empty list is valid: it passes the turn.
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
		if p := orderProblem(s, player, o); p != "" {
			errs = append(errs, orderError(i, o, p))
		}
	}
	return errs
}

// Warnings are what a person sees before submitting: the seed's
// over-commitment and opponent-star warnings, and every other problem an
// order has now. Submitting anyway is allowed.
func Warnings(s *State, player string, orders []Order) []string {
	var out []string
	for _, c := range ordered(s, player, orders) {
		out = append(out, fmt.Sprintf("Over-commitment at %s: %d ships ordered but only %d available", c.star, c.total, c.available))
	}
	for i, o := range orders {
		if st := s.Star(o.From); st != nil && st.Owner != player && st.Owner != "" {
			out = append(out, fmt.Sprintf("Star %s is controlled by opponent (may change by execution)", o.From))
			continue
		}
		if p := orderProblem(s, player, o); p != "" && !strings.HasPrefix(p, "Not enough ships") {
			out = append(out, orderError(i, o, p))
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
		return []OrderError{{Turn: turn, Player: player, Index: -1, Reason: msg, Error: msg}}
	}
	var errs []OrderError
	for i, o := range orders {
		if p := orderProblem(s, player, o); p != "" {
			o := o
			errs = append(errs, OrderError{Turn: turn, Player: player, Index: i, Order: &o, Reason: p, Error: orderError(i, o, p)})
			continue
		}
		from, to := s.Star(o.From), s.Star(o.To)
		from.Ships[player] -= o.Ships.Count
		f := Fleet{Owner: player, From: o.From, To: o.To, Ships: o.Ships.Count, Sent: turn, Arrives: turn + travelTurns(from, to)}
		s.Fleets = append(s.Fleets, f)
		// Seed 000: a person sees which orders executed as well as which failed.
		s.logf("Order %d of %s executed: %d ships %s -> %s, arriving turn %d", i, player, f.Ships, f.From, f.To, f.Arrives)
	}
	return errs
}
