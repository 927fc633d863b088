package conquest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
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
// turn (seed 000 §3.3, §5), shown at the start of their next turn (a
// person's prompt, a model's first message); "" when there were none. A
// skipped order is shown as the seed prints it, with §2.2's suggestion
// under it:
//
//	Order skipped: 7 ships from A to B
//	  Reason: Not enough ships at A: have 5, need 7
//	  Suggestion: Reduce ships to 5 or split across multiple turns
//
// and a whole set rejected as "All orders rejected: {error}" with its
// suggestion. With color the lines' heads carry ANSI colours (for a
// terminal that wants them); what a player wrote is shown with its control
// characters escaped either way.
func ErrorBlock(s *State, player string, color bool) string {
	errs := s.ErrorsOf(player, s.Turn)
	if len(errs) == 0 {
		return ""
	}
	p := painter(color)
	var b strings.Builder
	rule := strings.Repeat("=", 60)
	fmt.Fprintf(&b, "\n%s\n%s\n%s\n", rule, p.bold("ORDER ERRORS FROM LAST TURN"), rule)
	for _, e := range errs {
		if e.All() {
			fmt.Fprintf(&b, "\n%s %s\n", p.red("All orders rejected:"), printable(e.Error))
		} else {
			fmt.Fprintf(&b, "\n%s %s\n", p.red("Order skipped:"), printable(e.Order.described()))
			fmt.Fprintf(&b, "  %s %s\n", p.yellow("Reason:"), printable(e.Reason))
		}
		if e.Suggestion != "" {
			fmt.Fprintf(&b, "  %s %s\n", p.green("Suggestion:"), printable(e.Suggestion))
		}
	}
	b.WriteString("\n")
	return b.String()
}

// described is the order as the seed's display writes it: "7 ships from A
// to B", or an element that is not an order object as it was written.
func (o Order) described() string {
	if o.invalid != "" {
		return o.written + " (not an order object)"
	}
	return fmt.Sprintf("%s ships from %s to %s", o.Ships, o.From, o.To)
}

// ErrorStats are a player's order errors over the whole game, for the end
// of game summary and `arbiter status`.
type ErrorStats struct {
	Player   string
	Errors   int          // every error recorded
	Skipped  int          // orders skipped alone
	Rejected int          // order sets rejected whole (over-commitment)
	Turns    int          // turns with at least one error
	ByKind   []ErrorCount // per kind, most frequent first, then in kind order
}

// ErrorCount is how many errors of one kind a player made.
type ErrorCount struct {
	Kind  string // KindNotEnough, ...; "" for records without a kind
	Label string // "not enough ships"
	N     int
}

// kinds are the error kinds in the order the statistics list them on a tie,
// with their labels.
var kinds = []struct{ kind, label string }{
	{KindOverCommitment, "over-commitment"},
	{KindNotEnough, "not enough ships"},
	{KindNotOwner, "star not controlled"},
	{KindUnknownOrigin, "unknown origin star"},
	{KindUnknownDest, "unknown destination star"},
	{KindSameStar, "same star"},
	{KindNotPositive, "ships not positive"},
	{KindNotWhole, "ships not a whole number"},
	{KindTooLarge, "ships too large"},
	{KindInvalidOrder, "invalid order object"},
	{"", "other"},
}

// ErrorStatsOf returns player's order error statistics over the game so far.
func ErrorStatsOf(s *State, player string) ErrorStats {
	st := ErrorStats{Player: player}
	n := map[string]int{}
	turns := map[int]bool{}
	for _, e := range s.Errors {
		if e.Player != player {
			continue
		}
		st.Errors++
		if e.All() {
			st.Rejected++
		} else {
			st.Skipped++
		}
		turns[e.Turn] = true
		n[e.Kind]++
	}
	st.Turns = len(turns)
	for _, k := range kinds {
		if n[k.kind] > 0 {
			st.ByKind = append(st.ByKind, ErrorCount{Kind: k.kind, Label: k.label, N: n[k.kind]})
		}
	}
	slices.SortStableFunc(st.ByKind, func(a, b ErrorCount) int { return b.N - a.N })
	return st
}

// String sums the statistics up in a line: "4 order errors in 3 turns: 3
// orders skipped, 1 order set rejected (not enough ships 2, ...)", or "no
// order errors".
func (st ErrorStats) String() string {
	if st.Errors == 0 {
		return "no order errors"
	}
	parts := make([]string, len(st.ByKind))
	for i, k := range st.ByKind {
		parts[i] = fmt.Sprintf("%s %d", k.Label, k.N)
	}
	return fmt.Sprintf("%s in %s: %s skipped, %s rejected (%s)", count(st.Errors, "order error"), count(st.Turns, "turn"),
		count(st.Skipped, "order"), count(st.Rejected, "order set"), strings.Join(parts, ", "))
}

// Summary is what a person sees when the game ends: how it ended (or the
// turn it stopped at, when it has not), then each player's stars, ships,
// turns passed and order error statistics. With color the title carries
// ANSI colours.
func Summary(s *State, color bool) string {
	p := painter(color)
	var b strings.Builder
	rule := strings.Repeat("=", 60)
	head := fmt.Sprintf("GAME STOPPED after turn %d of %d", s.Turn, s.MaxTurns)
	if s.Result != nil {
		head = "GAME OVER: " + s.Result.String()
	}
	fmt.Fprintf(&b, "\n%s\n%s\n%s\n", rule, p.bold(head), rule)
	for _, sc := range s.Scores() {
		passed := 0
		for _, ps := range s.Passed {
			if ps.Player == sc.Player {
				passed++
			}
		}
		fmt.Fprintf(&b, "\n%s: %s, %s", p.bold(sc.Player), count(sc.Stars, "star"), count(sc.Ships, "ship"))
		if passed > 0 {
			fmt.Fprintf(&b, ", %s passed", count(passed, "turn"))
		}
		st := ErrorStatsOf(s, sc.Player)
		if st.Errors == 0 {
			fmt.Fprintf(&b, "\n  %s none\n", p.label("Order errors:"))
			continue
		}
		fmt.Fprintf(&b, "\n  %s %s in %s: %s skipped, %s rejected\n", p.label("Order errors:"), fmt.Sprint(st.Errors),
			count(st.Turns, "turn"), count(st.Skipped, "order"), count(st.Rejected, "order set"))
		for _, k := range st.ByKind {
			fmt.Fprintf(&b, "    %-26s %d\n", k.Label+":", k.N)
		}
	}
	b.WriteString("\n")
	return b.String()
}

// painter wraps text in ANSI colours when on.
type painter bool

func (p painter) paint(code, text string) string {
	if !p {
		return text
	}
	return "\x1b[" + code + "m" + text + "\x1b[0m"
}

func (p painter) bold(text string) string   { return p.paint("1", text) }
func (p painter) red(text string) string    { return p.paint("1;31", text) }
func (p painter) yellow(text string) string { return p.paint("33", text) }
func (p painter) green(text string) string  { return p.paint("32", text) }
func (p painter) label(text string) string  { return p.paint("36", text) }

// printable escapes the control characters of text a player wrote (star
// ids, an order as written), so nothing in an error display can drive the
// terminal (an OSC sequence setting the title or the clipboard).
func printable(text string) string {
	if !strings.ContainsFunc(text, unicode.IsControl) {
		return text
	}
	var b strings.Builder
	for _, r := range text {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MapText draws the map: a grid with each star's id and its owner's number
// (1 for the first player, ...; "." for neutral), then a line per star and
// per fleet.
func MapText(s *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Turn %d of %d · players %s · . = neutral\n", s.Turn, s.MaxTurns, legend(s))
	b.WriteString(mapGrid(s))
	return b.String()
}

// legend names the players by the number the map marks their stars with:
// "1=p1 2=p2".
func legend(s *State) string {
	out := make([]string, len(s.Players))
	for i, p := range s.Players {
		out[i] = fmt.Sprintf("%d=%s", i+1, p)
	}
	return strings.Join(out, " ")
}

// mapGrid is MapText without its header line: the grid, then a line per
// star and per fleet.
func mapGrid(s *State) string {
	var b strings.Builder
	w, h := s.Size()
	at := map[[2]int]*Star{}
	for i := range s.Stars {
		at[[2]int{s.Stars[i].X, s.Stars[i].Y}] = &s.Stars[i]
	}
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
