package conquest

import "math"

// BotOrders is the bot's strategy, deterministic and always valid: from
// each of its stars, in id order, it keeps as many ships as the star
// produces (so the star does not rebel) and sends the rest to the nearest
// star it does not own whose defenders they outnumber (ties: the first
// id). A star with no such target waits and grows.
func BotOrders(s *State, player string) []Order {
	orders := []Order{}
	for i := range s.Stars {
		from := &s.Stars[i]
		if from.Owner != player {
			continue
		}
		spare := from.Ships[player] - from.Production
		if spare <= 0 {
			continue
		}
		var target *Star
		best := math.Inf(1)
		for j := range s.Stars {
			to := &s.Stars[j]
			if to.Owner == player || defenders(to, player) >= spare {
				continue
			}
			if d := math.Hypot(float64(from.X-to.X), float64(from.Y-to.Y)); d < best {
				best, target = d, to
			}
		}
		if target != nil {
			orders = append(orders, Order{From: from.ID, To: target.ID, Ships: N(spare)})
		}
	}
	return orders
}

// defenders counts the ships at st that are not player's.
func defenders(st *Star, player string) int {
	n := st.Garrison
	for p, k := range st.Ships {
		if p != player {
			n += k
		}
	}
	return n
}
