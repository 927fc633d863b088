package duel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// The seats of the two players.
const (
	P1 = "p1"
	P2 = "p2"
)

// Kinds of seat.
const (
	SeatBot    = "bot"    // a deterministic built-in strategy
	SeatModel  = "model"  // a model, through structured output
	SeatPerson = "person" // a person, through a Chooser passed to Step
)

// Defaults of the settings.
const (
	DefaultSeed     = 1
	DefaultMaxTurns = 30
	DefaultHealth   = 30
)

// Bounds of the settings: health and a ship power's amount
// (engine.MaxAmount) stay far enough from the ends of int that no sum of a
// game reaches them, and a game's turns are what a run can play.
const (
	MaxHealth   = 1_000_000
	MaxMaxTurns = 10000
)

// ErrNotDuel is returned by Open for a simulation of another kind.
var ErrNotDuel = errors.New("not a duel simulation")

// Game is the duel kind of simulation: the runner's Game, one turn per
// tick. Its state is a *State. Client and Params are needed only when a
// seat is a model.
type Game struct {
	ID       string
	Seats    map[string]string // p1, p2 -> bot | model | person
	Seed     uint64
	MaxTurns int
	Health   int
	Client   *llm.Client
	Params   llm.Params

	cat     *engine.Catalog
	prompts *prompts.Renderer
	// seated are the model seats that play with a configuration of their
	// own in an arena, by seat (Reseated).
	seated map[string]*Game
	// observe, when set (tests), sees every engine step.
	observe engine.Observer
}

// Open checks the duel simulation sim and its settings (simulation.yaml
// `settings:` seed, max_turns, health, seats) and loads the catalog.
func Open(sim *world.Simulation, pr *prompts.Renderer) (*Game, error) {
	file := filepath.Join(sim.Dir, "simulation.yaml")
	if sim.Kind != KindName {
		return nil, fmt.Errorf("%s: kind %q: %w (set kind: duel)", file, sim.Kind, ErrNotDuel)
	}
	g := &Game{ID: sim.ID, Seed: DefaultSeed, MaxTurns: DefaultMaxTurns, Health: DefaultHealth, prompts: pr}
	if err := g.settings(file, sim.Settings); err != nil {
		return nil, err
	}
	cat, err := LoadCatalog(sim.Dir)
	if err != nil {
		return nil, err
	}
	g.cat = cat
	if pr != nil {
		// Render every template once now, so a bad override stops the
		// command before a turn is played.
		st := g.Initial()
		for _, phase := range []engine.PowerPhase{engine.Drawing, engine.SimultaneousDeclaration} {
			if _, err := g.requestText(st, P1, phase, nil, nil); err != nil {
				return nil, err
			}
		}
	}
	return g, nil
}

// settings reads simulation.yaml's settings; every problem names the file
// and the key.
func (g *Game) settings(file string, set map[string]any) error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: settings.%s: %s", file, key, fmt.Sprintf(format, args...)))
	}
	positive := func(key string, most int, dst *int) {
		v, ok := set[key]
		if !ok {
			return
		}
		n, isInt := v.(int)
		if !isInt || n < 1 || n > most {
			bad(key, "%v must be a whole number from 1 to %d", v, most)
			return
		}
		*dst = n
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		switch k {
		case "seed", "max_turns", "health", "seats":
		default:
			bad(k, "unknown key (a duel reads seed, max_turns, health and seats)")
		}
	}
	if v, ok := set["seed"]; ok {
		n, isInt := v.(int)
		if !isInt || n < 0 {
			bad("seed", "%v must be a whole number of at least 0", v)
		} else {
			g.Seed = uint64(n)
		}
	}
	positive("max_turns", MaxMaxTurns, &g.MaxTurns)
	positive("health", MaxHealth, &g.Health)
	g.Seats = map[string]string{}
	raw, ok := set["seats"]
	seats, isMap := raw.(map[string]any)
	switch {
	case !ok:
		bad("seats", "missing: say who plays each side, e.g. seats: {p1: bot, p2: model}")
	case !isMap:
		bad("seats", "%v must be a map of p1 and p2 to bot, model or person", raw)
	default:
		for _, k := range slices.Sorted(maps.Keys(seats)) {
			if k != P1 && k != P2 {
				bad("seats."+k, "unknown seat (the seats are p1 and p2)")
			}
		}
		for _, p := range []string{P1, P2} {
			v, ok := seats[p].(string)
			switch {
			case seats[p] == nil:
				bad("seats."+p, "missing: bot, model or person")
			case !ok || (v != SeatBot && v != SeatModel && v != SeatPerson):
				bad("seats."+p, "%v must be bot, model or person", seats[p])
			default:
				g.Seats[p] = v
			}
		}
	}
	return errors.Join(errs...)
}

// KindName is the duel's kind, as simulation.yaml names it.
const KindName = "duel"

// Kind is KindName.
func (g *Game) Kind() string { return KindName }

// State is a duel after a turn: the board, the random source's state (so a
// resumed game draws the same dice), and the result once the game is over.
type State struct {
	Board  *engine.State `json:"board"`
	RNG    []byte        `json:"rng"`              // the PCG generator, binary-marshalled
	Result string        `json:"result,omitempty"` // p1 | p2 | draw, once over
	// People are the seats a person has played in this game, at the
	// terminal, over their configured seats: they read "person" in the
	// status, the export and the report.
	People []string `json:"people,omitempty"`
	// Log is what the last turn did, for the turn's record; not stored in
	// the state row.
	Log *TurnLog `json:"-"`
}

// TurnLog is the record of one turn: what happened, the choices made and
// the choices refused.
type TurnLog struct {
	Turn     int      `json:"turn"`
	Events   []string `json:"events"`
	Choices  []string `json:"choices"`
	Rejected []string `json:"rejected"`
}

// Over reports whether the game has ended.
func (s *State) Over() bool { return s.Result != "" }

// Initial is the state before the first turn.
func (g *Game) Initial() *State {
	pcg := rand.NewPCG(g.Seed, g.Seed^0x9e3779b97f4a7c15)
	b, _ := pcg.MarshalBinary() // never fails
	return &State{Board: engine.NewState(g.Health, P1, P2), RNG: b}
}

func (s *State) clone() *State {
	return &State{Board: s.Board.Clone(), RNG: slices.Clone(s.RNG), Result: s.Result, People: slices.Clone(s.People)}
}

// Stream is the record stream of the turn logs.
const Stream = "turn"

// Load returns the state after turn tick: the start for 0, else the stored
// state, checked against the catalog.
func (g *Game) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return g.Initial(), nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var s State
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("read duel of turn %d: %w", tick, err)
	}
	if err := g.check(&s); err != nil {
		return nil, fmt.Errorf("%w: turn %d: %w", runner.ErrStateMismatch, tick, err)
	}
	if err := checkCounts(s.Board); err != nil {
		return nil, fmt.Errorf("%w: state.db tick %d: %w; `arbiter reset` starts over", store.ErrDamaged, tick, err)
	}
	return &s, nil
}

// checkCounts says what in a stored board no game could reach: a maximum
// health outside 1..MaxHealth, a health outside 0..its maximum, lines below
// 0 (edited or broken since; the engine's sums stop at the ends of int,
// they do not wrap).
func checkCounts(b *engine.State) error {
	var errs []error
	for _, pl := range b.Players {
		if pl.MaxHealth < 1 || pl.MaxHealth > MaxHealth || pl.Health < 0 || pl.Health > pl.MaxHealth || pl.Lines < 0 {
			errs = append(errs, fmt.Errorf("%s: health %d of %d, lines %d: want health 0 to a maximum of 1 to %d, lines of at least 0",
				pl.ID, pl.Health, pl.MaxHealth, pl.Lines, MaxHealth))
		}
	}
	return errors.Join(errs...)
}

func (g *Game) check(s *State) error {
	if s.Board == nil || len(s.Board.Players) != 2 || s.Board.Players[0].ID != P1 || s.Board.Players[1].ID != P2 {
		return errors.New("the board does not hold players p1 and p2")
	}
	if err := new(rand.PCG).UnmarshalBinary(s.RNG); err != nil {
		return fmt.Errorf("random state: %w", err)
	}
	for _, sh := range s.Board.Ships {
		if _, ok := g.cat.Get(sh.Def); !ok {
			return fmt.Errorf("ship %s is a %q, which the catalog no longer has", sh.ID, sh.Def)
		}
	}
	return nil
}

// Encode writes the state as the turn's row and the turn's log as row N of
// Stream.
func (g *Game) Encode(rec *store.TickRecord, _, s any) error {
	st := s.(*State)
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	rec.State = b
	if st.Log != nil {
		body, err := json.Marshal(st.Log)
		if err != nil {
			return err
		}
		rec.Records = append(rec.Records, store.Record{Stream: Stream, N: st.Log.Turn, Body: body})
	}
	return nil
}

// Export is the game as `arbiter export` prints it.
func (g *Game) Export(_ context.Context, _ *store.Store, s any) (any, error) {
	st := s.(*State)
	type player struct {
		ID        string     `json:"id"`
		Seat      string     `json:"seat"`
		Health    int        `json:"health"`
		MaxHealth int        `json:"max_health"`
		Lines     int        `json:"lines"`
		Dice      int        `json:"dice"`
		Fleet     []ShipView `json:"fleet"`
		Destroyed []ShipView `json:"destroyed"`
		Upgraded  []ShipView `json:"upgraded"` // ships that left play into an upgrade
	}
	out := struct {
		Turn     int      `json:"turn"`
		MaxTurns int      `json:"max_turns"`
		Seed     uint64   `json:"seed"`
		Result   string   `json:"result,omitempty"`
		Players  []player `json:"players"`
	}{Turn: st.Board.Turn, MaxTurns: g.MaxTurns, Seed: g.Seed, Result: st.Result}
	for _, p := range st.Board.Players {
		pv := player{ID: p.ID, Seat: g.seatIn(st, p.ID), Health: p.Health, MaxHealth: p.MaxHealth, Lines: p.Lines, Dice: p.Dice, Fleet: []ShipView{}, Destroyed: []ShipView{}, Upgraded: []ShipView{}}
		for _, sh := range st.Board.Ships {
			if sh.Owner != p.ID {
				continue
			}
			switch {
			case sh.Destroyed:
				pv.Destroyed = append(pv.Destroyed, shipView(sh))
			case sh.UpgradedInto != "":
				pv.Upgraded = append(pv.Upgraded, shipView(sh))
			default:
				pv.Fleet = append(pv.Fleet, shipView(sh))
			}
		}
		out.Players = append(out.Players, pv)
	}
	return out, nil
}

// Status is the duel's part of `arbiter status`: the turn, each side's
// health, lines and fleet, and the result.
func (g *Game) Status(_ context.Context, _ *store.Store, s any) ([]runner.Field, error) {
	st := s.(*State)
	fields := []runner.Field{{Key: "turn", Value: fmt.Sprintf("%d of %d", st.Board.Turn, g.MaxTurns)}}
	for _, p := range st.Board.Players {
		fields = append(fields, runner.Field{Key: p.ID, Value: fmt.Sprintf("%s; health %d/%d, lines %d; fleet: %s",
			g.seatIn(st, p.ID), p.Health, p.MaxHealth, p.Lines, fleetText(st.Board, p.ID))})
	}
	result := "playing"
	if st.Over() {
		result = resultText(st.Result)
	}
	return append(fields, runner.Field{Key: "result", Value: result}), nil
}

// seatIn is how player's seat was played in the game up to s: person when
// a person has played it at the terminal, else as configured.
func (g *Game) seatIn(s *State, player string) string {
	if slices.Contains(s.People, player) {
		return SeatPerson
	}
	return g.Seats[player]
}

// fleetText sums up a fleet: "2 Defender, Guardian (5 hp, 2 charges)".
func fleetText(b *engine.State, player string) string {
	counts := map[string]int{}
	var extra []string
	for _, sh := range b.Fleet(player) {
		counts[sh.Def]++
		if sh.Charges > 0 {
			extra = append(extra, fmt.Sprintf("%s %s %s", sh.ID, sh.Def, plural(sh.Charges, "charge")))
		}
	}
	if len(counts) == 0 {
		return "none"
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%d %s", counts[n], n)
	}
	out := strings.Join(parts, ", ")
	if len(extra) > 0 {
		out += " (" + strings.Join(extra, "; ") + ")"
	}
	return out
}

// NeedsModel reports whether a seat other than those people take at the
// terminal (people) is a model, so the session builds a model client only
// then.
func (g *Game) NeedsModel(people ...string) bool {
	for p, seat := range g.Seats {
		if seat == SeatModel && !slices.Contains(people, p) {
			return true
		}
	}
	return false
}

// Over reports whether the duel in state s has ended, and how; the runner
// stops there.
func (g *Game) Over(s any) (bool, string) {
	st := s.(*State)
	if !st.Over() {
		return false, ""
	}
	return true, fmt.Sprintf("%s at turn %d", resultText(st.Result), st.Board.Turn)
}
