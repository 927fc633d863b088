package conquest

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Rules of the game (RULES.md says them in words).
const (
	// Speed is how far a fleet travels in one turn, in map units.
	Speed = 3.0
	// HomeProduction and HomeShips are what each player starts with.
	HomeProduction = 4
	HomeShips      = 10
	// neutral names the neutral garrisons as a party in combat.
	neutral = ""
)

// MaxShips is the most ships a player keeps at one star, a fleet carries,
// or a garrison holds: an order's largest count. A sum that would pass it
// (a fleet landing, production, rebels joining) stops there, so no count
// wraps; a stored state holding more is damaged.
const MaxShips = math.MaxInt32

// addShips is a + b for counts of at least 0, at most MaxShips.
func addShips(a, b int) int { return min(MaxShips, max(0, a)+max(0, min(b, MaxShips))) }

// travelTurns is how many turns a fleet takes from a to b: the distance
// divided by Speed, rounded up, at least 1.
func travelTurns(a, b *Star) int {
	d := math.Hypot(float64(a.X-b.X), float64(a.Y-b.Y))
	return max(1, int(math.Ceil(d/Speed)))
}

// resolve plays the turn's steps after the orders are in: movement,
// combat, rebellion, then the orders of each player (validated now, as the
// state has changed), then production and the victory check. It returns the
// order errors recorded.
func (s *State) resolve(orders map[string][]Order) []OrderError {
	s.move()
	s.combat()
	s.rebellion()
	var errs []OrderError
	for _, p := range s.Players {
		errs = append(errs, execute(s, p, orders[p])...)
	}
	for _, e := range errs {
		s.logf("%s", e.Shown())
	}
	s.Errors = append(s.Errors, errs...)
	s.produce()
	s.checkVictory()
	return errs
}

func (s *State) logf(format string, args ...any) { s.Log = append(s.Log, fmt.Sprintf(format, args...)) }

// move lands every fleet due this turn at its destination.
func (s *State) move() {
	kept := s.Fleets[:0]
	for _, f := range s.Fleets {
		if f.Arrives > s.Turn {
			kept = append(kept, f)
			continue
		}
		st := s.Star(f.To)
		st.Ships[f.Owner] = addShips(st.Ships[f.Owner], f.Ships)
		s.logf("%s's fleet of %d from %s arrived at %s", f.Owner, f.Ships, f.From, f.To)
	}
	s.Fleets = kept
}

// combat resolves every star where more than one party has ships, then
// gives each star held by one player's ships alone to that player.
func (s *State) combat() {
	for i := range s.Stars {
		st := &s.Stars[i]
		if parties := s.parties(st); len(parties) > 1 {
			s.battle(st, parties)
		}
		var holders []string
		for _, p := range s.Players {
			if st.Ships[p] > 0 {
				holders = append(holders, p)
			}
		}
		if len(holders) == 1 && st.Garrison == 0 && st.Owner != holders[0] {
			if st.Owner == "" {
				s.logf("%s took %s", holders[0], st.ID)
			} else {
				s.logf("%s took %s from %s", holders[0], st.ID, st.Owner)
			}
			st.Owner = holders[0]
		}
		if len(holders) == 0 && st.Garrison > 0 && st.Owner != "" {
			s.logf("%s lost %s to its neutral defenders", st.Owner, st.ID)
			st.Owner = ""
		}
	}
}

// parties lists who has ships at st: players in order, then the neutral
// garrison.
func (s *State) parties(st *Star) []string {
	var out []string
	for _, p := range s.Players {
		if st.Ships[p] > 0 {
			out = append(out, p)
		}
	}
	if st.Garrison > 0 {
		out = append(out, neutral)
	}
	return out
}

func (s *State) forces(st *Star, party string) int {
	if party == neutral {
		return st.Garrison
	}
	return st.Ships[party]
}

func (s *State) lose(st *Star, party string, n int) {
	if party == neutral {
		st.Garrison = max(0, st.Garrison-n)
		return
	}
	st.Ships[party] = max(0, st.Ships[party]-n)
}

// battle fights rounds at st until one party (or none) has ships left. In
// a round every ship rolls a die and hits on 4 or more; a party's hits all
// fall on its strongest enemy (the first in order on a tie), and all hits of
// a round land at once. The star's owner defends: its ships hit on 3 or more.
// A party of more than exactDice ships draws its hits at once (Rand.hits),
// so a round takes bounded time whatever the counts.
func (s *State) battle(st *Star, parties []string) {
	before := make([]string, len(parties))
	for i, p := range parties {
		before[i] = fmt.Sprintf("%s %d", partyName(p), s.forces(st, p))
	}
	for round := 0; len(parties) > 1 && round < 10000; round++ {
		hits := make([]int, len(parties))
		for i, p := range parties {
			need := 4
			if p == st.Owner {
				need = 3
			}
			hits[i] = s.Rand.hits(s.forces(st, p), need)
		}
		targets := make([]string, len(parties))
		for i, p := range parties {
			best := -1
			for j, q := range parties {
				if q != p && (best < 0 || s.forces(st, q) > s.forces(st, parties[best])) {
					best = j
				}
			}
			targets[i] = parties[best]
		}
		for i := range parties {
			s.lose(st, targets[i], hits[i])
		}
		parties = slices.DeleteFunc(parties, func(p string) bool { return s.forces(st, p) == 0 })
	}
	after := "nobody survived"
	if len(parties) == 1 {
		after = fmt.Sprintf("%s survived with %d", partyName(parties[0]), s.forces(st, parties[0]))
	}
	s.logf("Battle at %s (%s): %s", st.ID, strings.Join(before, " vs "), after)
}

func partyName(p string) string {
	if p == neutral {
		return "neutral"
	}
	return p
}

// rebellion: a star whose owner keeps fewer ships there than it produces
// rebels on a roll of 1 on a die; it turns neutral, and the owner's ships
// there join the rebels, who add the star's production to them. A home
// star rebels like any other.
func (s *State) rebellion() {
	for i := range s.Stars {
		st := &s.Stars[i]
		if st.Owner == "" || st.Ships[st.Owner] >= st.Production {
			continue
		}
		if s.Rand.d6() != 1 {
			continue
		}
		owner := st.Owner
		st.Garrison = addShips(st.Garrison, addShips(st.Ships[owner], st.Production))
		delete(st.Ships, owner)
		st.Owner = ""
		s.logf("Rebellion at %s: %s lost it; %d rebels hold it", st.ID, owner, st.Garrison)
	}
}

// produce adds each owned star's production to its owner's ships there.
func (s *State) produce() {
	for i := range s.Stars {
		if st := &s.Stars[i]; st.Owner != "" {
			st.Ships[st.Owner] = addShips(st.Ships[st.Owner], st.Production)
		}
	}
}

// checkVictory ends the game when one player is left holding stars or
// ships, or when the turn limit is reached: most stars wins, then most
// ships; equal on both is a draw.
func (s *State) checkVictory() {
	scores := s.Scores()
	var alive []Score
	for _, sc := range scores {
		if sc.Stars > 0 || sc.Ships > 0 {
			alive = append(alive, sc)
		}
	}
	switch {
	case len(alive) == 1 && len(s.Players) > 1:
		s.Result = &Result{Turn: s.Turn, Winner: alive[0].Player, Reason: "last player holding stars or ships"}
	case len(alive) == 0:
		s.Result = &Result{Turn: s.Turn, Reason: "no player holds stars or ships"}
	case s.MaxTurns > 0 && s.Turn >= s.MaxTurns:
		slices.SortStableFunc(alive, func(a, b Score) int {
			if a.Stars != b.Stars {
				return b.Stars - a.Stars
			}
			return b.Ships - a.Ships
		})
		r := &Result{Turn: s.Turn, Reason: fmt.Sprintf("turn limit %d reached", s.MaxTurns)}
		if len(alive) == 1 || alive[0].Stars != alive[1].Stars || alive[0].Ships != alive[1].Ships {
			r.Winner = alive[0].Player
			r.Reason += fmt.Sprintf(": most stars, then ships (%d stars, %d ships)", alive[0].Stars, alive[0].Ships)
		} else {
			r.Reason += ": equal stars and ships, a draw"
		}
		s.Result = r
	}
	if s.Result != nil {
		if s.Result.Winner != "" {
			s.logf("Game over at turn %d: %s wins (%s)", s.Turn, s.Result.Winner, s.Result.Reason)
		} else {
			s.logf("Game over at turn %d: draw (%s)", s.Turn, s.Result.Reason)
		}
	}
}
