package conquest

import (
	"errors"
	"fmt"
	"strings"
)

// check says what in s no game could hold: a star id empty or repeated, an
// owner or a ship count of someone not playing, a count below 0 or above
// MaxShips, a fleet not a player's or not between stars of the map. Every
// problem names the star or fleet. The rules index stars by the ids fleets
// and orders name and add counts up, so a state is checked before it is
// played: read from a file (ReadState) or from state.db (Game.Load).
func (s *State) check() error {
	if len(s.Players) == 0 {
		return errors.New(`"players" lists no player ids`)
	}
	var errs []error
	seen := map[string]bool{}
	for i := range s.Stars {
		st := &s.Stars[i]
		switch {
		case st.ID == "" || seen[st.ID]:
			errs = append(errs, fmt.Errorf("stars[%d]: id %q is empty or repeated", i, st.ID))
		case st.Owner != "" && !s.HasPlayer(st.Owner):
			errs = append(errs, fmt.Errorf("stars[%d] (%s): owner %q is not one of the players (%s)", i, st.ID, st.Owner, strings.Join(s.Players, ", ")))
		}
		seen[st.ID] = true
		if !inRange(st.Production, 0) || !inRange(st.Garrison, 0) {
			errs = append(errs, fmt.Errorf("stars[%d] (%s): production %d and garrison %d must be at least 0, at most %d", i, st.ID, st.Production, st.Garrison, MaxShips))
		}
		for p, n := range st.Ships {
			if !inRange(n, 0) || !s.HasPlayer(p) {
				errs = append(errs, fmt.Errorf("stars[%d] (%s): ships[%q] = %d: want a player id and a count of at least 0, at most %d", i, st.ID, p, n, MaxShips))
			}
		}
	}
	for i, p := range s.People {
		if !s.HasPlayer(p) {
			errs = append(errs, fmt.Errorf("people[%d]: %q is not one of the players (%s)", i, p, strings.Join(s.Players, ", ")))
		}
	}
	for i, f := range s.Fleets {
		if !s.HasPlayer(f.Owner) || !seen[f.From] || !seen[f.To] || !inRange(f.Ships, 1) {
			errs = append(errs, fmt.Errorf("fleets[%d] (%s %s -> %s, %d ships): want a player's fleet of 1 to %d ships between stars of the map", i, f.Owner, f.From, f.To, f.Ships, MaxShips))
		}
	}
	return errors.Join(errs...)
}

// inRange reports whether n is a count from least to MaxShips.
func inRange(n, least int) bool { return n >= least && n <= MaxShips }
