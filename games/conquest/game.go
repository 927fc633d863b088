package conquest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// PromptFile is the system prompt of a model seat; a simulation's
// prompts/conquest_system.md overrides the default.
const PromptFile = "conquest_system.md"

// Stream is the record stream of the order errors.
const Stream = "order_error"

// Errors of moves the game refuses; each wraps runner.ErrRefused.
var (
	ErrGameOver   = fmt.Errorf("the game is over: %w", runner.ErrRefused)
	ErrNeedPerson = fmt.Errorf("a person's seat needs its orders: %w", runner.ErrRefused)
)

// Move is what the people at the terminal ordered this turn, by player.
// The other seats play as simulation.yaml says.
type Move struct {
	Orders map[string][]Order
}

// Game is the conquest kind of simulation. Client and Params are needed
// when a seat is a model.
type Game struct {
	ID, Title string
	Dir       string
	Setup     Setup
	Client    *llm.Client
	Params    llm.Params
	// ForceShape makes tool calls through a json_schema response format,
	// for servers that build tool calls from the model's text (Ollama).
	ForceShape bool
	// MaxIterations overrides MaxIterations when set.
	MaxIterations int

	prompts map[string]string // rendered system prompt per player
	// seated are the model seats that play with a configuration of their
	// own in an arena, by player (Reseated).
	seated map[string]*Game
}

// Open checks a conquest simulation's settings and renders each model
// seat's system prompt.
func Open(sim *world.Simulation, pr *prompts.Renderer) (*Game, error) {
	if sim.Kind != KindName {
		return nil, fmt.Errorf("%s: kind %q is not conquest", filepath.Join(sim.Dir, "simulation.yaml"), sim.Kind)
	}
	set, err := ReadSetup(sim)
	if err != nil {
		return nil, err
	}
	g := &Game{ID: sim.ID, Title: sim.Title, Dir: sim.Dir, Setup: set, prompts: map[string]string{}}
	for _, p := range set.Players {
		others := slices.DeleteFunc(slices.Clone(set.Players), func(o string) bool { return o == p })
		text, err := pr.Render(PromptFile, promptData{Player: p, Opponents: strings.Join(others, ", "), MaxTurns: set.MaxTurns,
			Speed: Speed, MaxIterations: MaxIterations})
		if err != nil {
			return nil, err
		}
		g.prompts[p] = text
	}
	return g, nil
}

type promptData struct {
	Player, Opponents string
	MaxTurns          int
	Speed             float64
	MaxIterations     int
}

// KindName is the conquest's kind, as simulation.yaml names it.
const KindName = "conquest"

// Kind is KindName.
func (g *Game) Kind() string { return KindName }

// NeedsModel reports whether a seat other than those people take at the
// terminal (people) is a model agent.
func (g *Game) NeedsModel(people ...string) bool {
	for p, seat := range g.Setup.Seats {
		if seat == SeatModel && !slices.Contains(people, p) {
			return true
		}
	}
	return false
}

// Seat returns the seat of player ("" when not a player).
func (g *Game) Seat(player string) string { return g.Setup.Seats[player] }

// seatIn is how player's seat was played in the game up to s: person when
// a person has played it at the terminal, else as configured.
func (g *Game) seatIn(s *State, player string) string {
	if slices.Contains(s.People, player) {
		return SeatPerson
	}
	return g.Seat(player)
}

// Over reports whether the game in state s has ended, and how.
func (g *Game) Over(s any) (bool, string) {
	st := s.(*State)
	if st.Result == nil {
		return false, ""
	}
	return true, st.Result.String()
}

// String says how the game ended.
func (r Result) String() string {
	if r.Winner == "" {
		return fmt.Sprintf("draw at turn %d (%s)", r.Turn, r.Reason)
	}
	return fmt.Sprintf("%s won at turn %d (%s)", r.Winner, r.Turn, r.Reason)
}

// stored is a conquest's row in the ticks table: the state without its
// order errors, which are rows of Stream.
type stored struct {
	State
	ErrorCount int `json:"order_error_count"`
}

// Load returns the start of the game for tick 0, else the committed turn.
func (g *Game) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return NewGame(g.Setup), nil
	}
	raw, err := st.State(ctx, tick)
	if err != nil {
		return nil, err
	}
	var row stored
	if err := json.Unmarshal(raw, &row); err != nil {
		return nil, damaged(tick, err)
	}
	s := row.State
	if err := s.check(); err != nil {
		return nil, damaged(tick, err)
	}
	if !slices.Equal(s.Players, g.Setup.Players) {
		return nil, fmt.Errorf("%w: the stored game's players are %s, simulation.yaml seats %s (`arbiter reset` starts over)",
			runner.ErrStateMismatch, strings.Join(s.Players, ", "), strings.Join(g.Setup.Players, ", "))
	}
	recs, err := st.Records(ctx, Stream, row.ErrorCount, tick)
	if err != nil {
		return nil, err
	}
	if len(recs) != row.ErrorCount {
		return nil, fmt.Errorf("%w: turn %d has %d of its %d order errors stored", runner.ErrStateMismatch, tick, len(recs), row.ErrorCount)
	}
	s.Errors = make([]OrderError, len(recs))
	for i, r := range recs {
		if err := json.Unmarshal(r.Body, &s.Errors[i]); err != nil {
			return nil, fmt.Errorf("read order error %d of turn %d: %w", r.N, tick, err)
		}
	}
	for i := range s.Stars {
		if s.Stars[i].Ships == nil {
			s.Stars[i].Ships = map[string]int{}
		}
	}
	return &s, nil
}

// damaged is the error of a stored turn that no game could reach (edited
// or broken since): a run must not play on from it.
func damaged(tick int, err error) error {
	return fmt.Errorf("%w: state.db tick %d: %w; `arbiter reset` starts over", store.ErrDamaged, tick, err)
}

// Encode writes the state after a turn and the order errors it added.
func (g *Game) Encode(rec *store.TickRecord, prev, s any) error {
	before, after := prev.(*State), s.(*State)
	row := stored{State: *after, ErrorCount: len(after.Errors)}
	row.Errors = nil
	b, err := plainJSON(row)
	if err != nil {
		return err
	}
	rec.State = b
	for i := len(before.Errors); i < len(after.Errors); i++ {
		body, err := plainJSON(after.Errors[i])
		if err != nil {
			return err
		}
		rec.Records = append(rec.Records, store.Record{Stream: Stream, N: i + 1, Body: body})
	}
	return nil
}

// plainJSON encodes v without escaping <, > and &, so the stored rows read
// as the errors do ("A -> B", not "A -\u003e B") in state.db.
func plainJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// Step plays one turn: every seat's orders are collected (the model seats
// in parallel, the bots at once, the people's from in, a Move), then the
// turn resolves: movement, combat, rebellion, the orders, production.
func (g *Game) Step(ctx context.Context, t *runner.Tick, s, in any) (any, error) {
	cur := s.(*State)
	if cur.Over() {
		return nil, fmt.Errorf("%w: %s", ErrGameOver, cur.Result)
	}
	var move Move
	switch m := in.(type) {
	case nil:
	case Move:
		move = m
	default:
		return nil, fmt.Errorf("a conquest takes a Move, not %T: %w", in, runner.ErrRefused)
	}
	for p := range move.Orders {
		if !cur.HasPlayer(p) {
			return nil, fmt.Errorf("orders for %q, who is not a player (players: %s): %w", p, strings.Join(cur.Players, ", "), runner.ErrRefused)
		}
	}
	orders := map[string][]Order{}
	var models []string
	for _, p := range cur.Players {
		if o, ok := move.Orders[p]; ok {
			orders[p] = o
			continue
		}
		switch g.Seat(p) {
		case SeatBot:
			orders[p] = BotOrders(cur, p)
		case SeatModel:
			models = append(models, p)
		default:
			return nil, fmt.Errorf("%w: seat %s is a person; play it with `arbiter play %s --seat %s`", ErrNeedPerson, p, g.Dir, p)
		}
	}
	var passed []Pass
	if len(models) > 0 {
		turns, err := g.modelTurns(ctx, t, cur, models)
		if err != nil {
			return nil, err
		}
		for i, p := range models {
			orders[p] = turns[i].orders
			if !turns[i].submitted {
				passed = append(passed, Pass{Turn: t.N, Player: p, Reason: turns[i].pass})
				t.Log().Warn("a model seat's turn passed", "player", p, "turn", t.N, "reason", turns[i].pass)
			}
		}
	}
	t.Enter(runner.StateApply)
	next := cur.clone()
	next.Turn = t.N
	next.Passed = append(next.Passed, passed...)
	for p := range move.Orders {
		if !slices.Contains(next.People, p) {
			next.People = append(next.People, p)
		}
	}
	slices.Sort(next.People)
	for _, e := range next.resolve(orders) {
		t.Record.ApplyErrors = append(t.Record.ApplyErrors, store.ApplyError{LocationID: "conquest", CharacterID: e.Player, Reason: e.Error})
	}
	return next, nil
}

// modelTurns runs the model seats' tool conversations in parallel, as one
// phase of the tick. A seat that spends its model turns without submitting
// is seed 002's budget_exhausted, emitted as it happens: STATE_ENTRY
// state=ERROR error_type=budget_exhausted, "Model turn budget exhausted:
// ...", and RECOVERY_ATTEMPT strategy=pass_turn once the turn's fate is
// known.
func (g *Game) modelTurns(ctx context.Context, t *runner.Tick, s *State, players []string) ([]seatTurn, error) {
	for _, p := range players {
		if g.seat(p).Client == nil {
			return nil, errors.New("conquest: a model seat needs a model client")
		}
	}
	turns := make([]seatTurn, len(players))
	_, err := t.Phase(ctx, runner.Phase{Name: PhaseOrders, Calls: len(players), Strategy: StrategyPass, Final: true},
		func(ctx context.Context) ([]runner.Call, error) {
			var eg errgroup.Group
			for i, p := range players {
				eg.Go(func() error {
					turns[i] = g.agentTurn(ctx, t.N, s, p)
					if turns[i].exhausted {
						// Seed 002's budget_exhausted (a builder out of tool
						// calls): the seat's turn passes, the game goes on.
						t.Recover(runner.StopBudget, fmt.Sprintf("Model turn budget exhausted: %s passes its turn (no submit_orders in %d model turns)",
							p, g.iterations()), StrategyPass)
					}
					return nil
				})
			}
			_ = eg.Wait()
			var calls []runner.Call
			for _, tt := range turns {
				calls = append(calls, tt.calls...)
			}
			return calls, nil
		})
	return turns, err
}

// Export is the game state as `arbiter export` prints it, order errors
// included; `arbiter conquest check-orders --game` reads it back.
func (g *Game) Export(_ context.Context, _ *store.Store, s any) (any, error) { return s.(*State), nil }

// Status is the conquest's part of `arbiter status`: the turn, how the game
// ended, each player's seat, stars, ships and order errors, and the map.
func (g *Game) Status(_ context.Context, _ *store.Store, s any) ([]runner.Field, error) {
	st := s.(*State)
	fields := []runner.Field{{Key: "turn", Value: fmt.Sprintf("%d of %d", st.Turn, st.MaxTurns)}}
	if st.Result != nil {
		fields = append(fields, runner.Field{Key: "result", Value: st.Result.String()})
	}
	for _, sc := range st.Scores() {
		passed := 0
		for _, p := range st.Passed {
			if p.Player == sc.Player {
				passed++
			}
		}
		fields = append(fields, runner.Field{Key: sc.Player, Value: fmt.Sprintf("%s · %s, %s · %s · %s",
			g.seatIn(st, sc.Player), count(sc.Stars, "star"), count(sc.Ships, "ship"), count(sc.Errors, "order error"), count(passed, "turn")+" passed")})
	}
	if st.Over() {
		// The end of game summary counts each player's order errors by kind (seed 000).
		for _, p := range st.Players {
			fields = append(fields, runner.Field{Key: p + " errors", Value: ErrorStatsOf(st, p).String()})
		}
	}
	fields = append(fields, runner.Field{Key: "map", Value: "\n" + strings.TrimRight(MapText(st), "\n")})
	return fields, nil
}

// count renders "1 star", "3 stars".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
