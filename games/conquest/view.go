package conquest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// View is what a player sees at the start of a turn: the whole map (there
// is no fog of war), every fleet in flight, and the player's own order
// errors of the last turn. It is the result of the get_state tool.
type View struct {
	You      string       `json:"you"`
	Turn     int          `json:"turn"` // the turn being played
	MaxTurns int          `json:"max_turns"`
	Players  []string     `json:"players"`
	Stars    []Star       `json:"stars"`
	Fleets   []Fleet      `json:"fleets"`
	Errors   []string     `json:"your_order_errors_last_turn"`
	Scores   []Score      `json:"scores"`
	Travel   []TravelTime `json:"travel_turns_from_your_stars"`
}

// TravelTime is how many turns a fleet takes between two stars.
type TravelTime struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Turns int    `json:"turns"`
}

// ViewOf returns player's view of s before the next turn.
func ViewOf(s *State, player string) View {
	v := View{You: player, Turn: s.Turn + 1, MaxTurns: s.MaxTurns, Players: s.Players, Stars: s.Stars, Fleets: s.Fleets,
		Errors: []string{}, Scores: s.Scores(), Travel: []TravelTime{}}
	for _, e := range s.ErrorsOf(player, s.Turn) {
		v.Errors = append(v.Errors, e.Error)
	}
	for i := range s.Stars {
		from := &s.Stars[i]
		if from.Owner != player {
			continue
		}
		for j := range s.Stars {
			if to := &s.Stars[j]; to.ID != from.ID {
				v.Travel = append(v.Travel, TravelTime{From: from.ID, To: to.ID, Turns: travelTurns(from, to)})
			}
		}
	}
	return v
}

// ErrorBlock is the seed's display of a player's order errors of the last
// turn, shown at the start of their next turn; "" when there were none.
func ErrorBlock(s *State, player string) string {
	errs := s.ErrorsOf(player, s.Turn)
	if len(errs) == 0 {
		return ""
	}
	var b strings.Builder
	rule := strings.Repeat("=", 60)
	fmt.Fprintf(&b, "\n%s\nORDER ERRORS FROM LAST TURN\n%s\n", rule, rule)
	for _, e := range errs {
		if e.All() {
			fmt.Fprintf(&b, "\nAll orders rejected: %s\n", e.Reason)
			continue
		}
		fmt.Fprintf(&b, "\nOrder skipped: %s ships from %s to %s\n  Reason: %s\n", e.Order.Ships, e.Order.From, e.Order.To, e.Reason)
	}
	b.WriteString("\n")
	return b.String()
}

// MapText draws the map: a grid with each star's id and its owner's number
// (1 for the first player, ...; "." for neutral), then a line per star and
// per fleet.
func MapText(s *State) string {
	var b strings.Builder
	w, h := 0, 0
	for _, st := range s.Stars {
		w, h = max(w, st.X+1), max(h, st.Y+1)
	}
	at := map[[2]int]*Star{}
	for i := range s.Stars {
		at[[2]int{s.Stars[i].X, s.Stars[i].Y}] = &s.Stars[i]
	}
	legend := make([]string, len(s.Players))
	for i, p := range s.Players {
		legend[i] = fmt.Sprintf("%d=%s", i+1, p)
	}
	fmt.Fprintf(&b, "Turn %d of %d · players %s · . = neutral\n", s.Turn, s.MaxTurns, strings.Join(legend, " "))
	b.WriteString("    ")
	for x := range w {
		fmt.Fprintf(&b, "%-3d", x)
	}
	b.WriteString("\n")
	for y := range h {
		fmt.Fprintf(&b, "%3d ", y)
		for x := range w {
			st := at[[2]int{x, y}]
			if st == nil {
				b.WriteString("·  ")
				continue
			}
			fmt.Fprintf(&b, "%s%s ", st.ID, s.ownerMark(st.Owner))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
	for _, st := range s.Stars {
		owner := st.Owner
		if owner == "" {
			owner = "neutral"
		}
		fmt.Fprintf(&b, "%s (%d,%d) production %d, %s: %s\n", st.ID, st.X, st.Y, st.Production, owner, shipsText(&st))
	}
	for _, f := range s.Fleets {
		fmt.Fprintf(&b, "fleet: %s, %d ships %s -> %s, arrives turn %d\n", f.Owner, f.Ships, f.From, f.To, f.Arrives)
	}
	return b.String()
}

func (s *State) ownerMark(owner string) string {
	if i := slices.Index(s.Players, owner); i >= 0 {
		return fmt.Sprint(i + 1)
	}
	return "."
}

func shipsText(st *Star) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(st.Ships)) {
		if st.Ships[p] > 0 {
			parts = append(parts, fmt.Sprintf("%s %d ships", p, st.Ships[p]))
		}
	}
	if st.Garrison > 0 {
		parts = append(parts, fmt.Sprintf("%d neutral defenders", st.Garrison))
	}
	if len(parts) == 0 {
		return "empty"
	}
	return strings.Join(parts, ", ")
}
