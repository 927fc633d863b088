// Package arena plays seeded games of one game kind (conquest, duel)
// between seat configurations, in parallel, and sums them up: wins and
// draws per player, invalid orders or choices per turn, model calls (tool
// iterations) per turn, tokens and calls that failed and fell back; and
// per seat configuration (bot, the simulation's model seat, a model seat
// with templates and parameters of its own) a win rate with its 95%
// interval and, with three or more, a Bradley-Terry rating. Each game runs
// through the runner on a run state of its own, as `arbiter run` would
// play it, so an arena measures exactly what a run does.
package arena

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sync/errgroup"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/telemetry"
)

// Game is a game kind an arena can play: it can be reseated with another
// seed and seats, and says who won.
type Game interface {
	runner.Stepper
	// Reseated returns a copy of the game playing from seed with seats
	// (checked by Seats) replacing the simulation's, its model seats asking
	// client, but those of models, which play as their Model says.
	Reseated(seed uint64, seats map[string]string, client *llm.Client, models map[string]Model) runner.Stepper
	Winner(state any) string
	Players() []string
	Seat(player string) string
}

// Config is an arena.
type Config struct {
	Games int               // games to play, seeds Seed, Seed+1, ...
	Seed  uint64            // seed of the first game
	Seats map[string]string // player -> model | bot; the rest as the simulation says
	// Models are the model seats that play with a configuration of their
	// own (a prompt variant, another model), by player; the other model
	// seats play with the simulation's own settings, asking Client.
	Models   map[string]Model
	MaxTurns int         // turns a game may take at most before it counts as unfinished (0: 10,000)
	Parallel int         // games played at once (0: 4)
	Client   *llm.Client // for the model seats not in Models; nil when there are none
	Shard    Shard       // the games Play plays (zero: every game)
}

// Model is a model seat's own configuration: the templates and model
// parameters it plays with, as Game (the kind opened with them) holds
// them, and the client it asks. Name names it: the seat plays as
// model:<Name> in the table and in results files.
type Model struct {
	Name   string
	Game   Game
	Client *llm.Client
}

// GameResult is one game.
type GameResult struct {
	Seed    uint64                 `json:"seed"`
	Turns   int                    `json:"turns"`
	Winner  string                 `json:"winner"` // "" for a draw or an unfinished game
	Ended   string                 `json:"ended"`  // how it ended, as the game says
	Stop    string                 `json:"stop"`   // the run's stop reason: game_over, completed (turn cap), quorum_failure, ...
	Error   string                 `json:"error,omitempty"`
	Players map[string]PlayerStats `json:"players"`
}

// PlayerStats is one player's part of a game.
type PlayerStats struct {
	Errors      int `json:"invalid"`      // order errors or refused choices
	Calls       int `json:"calls"`        // model calls (a conquest seat's tool iterations)
	FailedCalls int `json:"failed_calls"` // calls that failed; the seat fell back (passed, or played the bot's choice)
	Tokens      int `json:"tokens"`
}

// Row sums up one player over every game.
type Row struct {
	Player        string  `json:"player"`
	Seat          string  `json:"seat"`
	Wins          int     `json:"wins"`
	Losses        int     `json:"losses"`
	Draws         int     `json:"draws"`
	InvalidByTurn float64 `json:"invalid_per_turn"`
	CallsByTurn   float64 `json:"calls_per_turn"`
	FailedCalls   int     `json:"failed_calls"`
	Tokens        int     `json:"tokens"`
}

// Table is an arena's outcome.
type Table struct {
	Kind       string `json:"kind"`
	Games      int    `json:"games"`
	Seed       uint64 `json:"seed"`
	Draws      int    `json:"draws"`
	Unfinished int    `json:"unfinished"` // stopped by the turn cap or an error
	Turns      int    `json:"turns"`      // over every game
	Rows       []Row  `json:"players"`
	// Configurations sum up each seat configuration over the seats it
	// held, in the order the players first hold them.
	Configurations []Configuration `json:"configurations"`
	Results        []GameResult    `json:"results"`
}

// Run plays the whole arena: cfg.Games games of g in parallel, each on a
// run state in its own temporary folder (removed afterwards). A game that
// stops short (a quorum failure of the model, say) is counted unfinished
// with its error; a bad configuration fails the arena before any game
// starts. Play plays one shard of it.
func Run(ctx context.Context, g Game, cfg Config) (*Table, error) {
	if s := cfg.Shard.whole(); s.Count != 1 {
		return nil, fmt.Errorf("arena: Run plays every game, not shard %s (Play plays a shard)", s)
	}
	r, err := Play(ctx, g, cfg)
	if err != nil {
		return nil, err
	}
	return summarize(r.Arena, r.Results), nil
}

// Play plays the games of cfg.Shard (every game when it is zero) as Run
// does and returns their results, in game order, with the build playing
// them. The caller names the simulation and its settings in r.Arena before
// writing it.
func Play(ctx context.Context, g Game, cfg Config) (*Results, error) {
	if cfg.Games < 1 {
		return nil, fmt.Errorf("arena: games must be at least 1, got %d", cfg.Games)
	}
	shard := cfg.Shard.whole()
	if err := shard.Check(cfg.Games); err != nil {
		return nil, fmt.Errorf("arena: %w", err)
	}
	seats, err := Seats(g, cfg.Seats)
	if err != nil {
		return nil, err
	}
	configs, err := configurations(g, seats, cfg)
	if err != nil {
		return nil, err
	}
	id := Identity{Kind: g.Kind(), Build: manifest.ReadBuild().String(), Seed: cfg.Seed, Games: cfg.Games, MaxTurns: cfg.MaxTurns}
	for _, p := range g.Players() {
		id.Seats = append(id.Seats, Seat{Player: p, Seat: configs[p]})
	}
	games := make([]runner.Stepper, shard.size(cfg.Games))
	for j := range games {
		games[j] = g.Reseated(cfg.Seed+uint64(shard.game(j)), cfg.Seats, cfg.Client, cfg.Models)
	}
	tmp, err := os.MkdirTemp("", "arbiter-arena-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)

	results := make([]GameResult, len(games))
	eg, ectx := errgroup.WithContext(ctx)
	eg.SetLimit(cmp.Or(cfg.Parallel, 4))
	for j, rg := range games {
		eg.Go(func() error {
			k := shard.game(j)
			gctx, span := telemetry.Start(ectx, fmt.Sprintf("game %d", k), attribute.Int("arbiter.game", k),
				attribute.Int64("arbiter.seed", int64(cfg.Seed+uint64(k))))
			res, err := play(gctx, rg, g, cfg, filepath.Join(tmp, fmt.Sprintf("game-%d", k)))
			span.SetAttributes(attribute.String("arbiter.winner", res.Winner), attribute.Int("arbiter.turns", res.Turns))
			telemetry.End(span, err)
			res.Seed = cfg.Seed + uint64(k)
			results[j] = res
			return err // only storage errors and interrupts stop the arena
		})
	}
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	return &Results{Format: ResultsFormat, Arena: id, Shard: shard, Results: results}, nil
}

// Seats returns how each player of g sits once seats replace the
// simulation's seats, or why they cannot: a seat must name a player, and
// every player must end up a model or a bot.
func Seats(g Game, seats map[string]string) (map[string]string, error) {
	players := g.Players()
	for p, seat := range seats {
		if !slices.Contains(players, p) {
			return nil, fmt.Errorf("seat %s: not a player (players: %s)", p, strings.Join(players, ", "))
		}
		if seat != "model" && seat != "bot" {
			return nil, fmt.Errorf("seat %s: want model or bot, got %q", p, seat)
		}
	}
	out := map[string]string{}
	for _, p := range players {
		out[p] = cmp.Or(seats[p], g.Seat(p))
		if out[p] != "model" && out[p] != "bot" {
			return nil, fmt.Errorf("seat %s is a %s in simulation.yaml: give it model or bot", p, out[p])
		}
	}
	return out, nil
}

// configurations names each player's seat configuration once seats (from
// Seats) hold: bot, model (the simulation's own model seat) or
// model:<name> (a seat of cfg.Models), or says why cfg cannot play: a
// configuration of a player who is no model seat, one of another kind or
// without a client, a model seat with no client.
func configurations(g Game, seats map[string]string, cfg Config) (map[string]string, error) {
	out := maps.Clone(seats)
	for _, p := range slices.Sorted(maps.Keys(cfg.Models)) {
		m := cfg.Models[p]
		switch {
		case seats[p] == "":
			return nil, fmt.Errorf("seat %s: not a player (players: %s)", p, strings.Join(g.Players(), ", "))
		case seats[p] != "model":
			return nil, fmt.Errorf("seat %s is a %s: only a model seat plays a configuration (%s)", p, seats[p], m.Name)
		case !ValidConfigName(m.Name):
			return nil, fmt.Errorf("seat %s: configuration name %q is empty or holds a control character", p, m.Name)
		case m.Game == nil || m.Game.Kind() != g.Kind():
			return nil, fmt.Errorf("arena: seat %s: configuration %s is no %s game", p, m.Name, g.Kind())
		case m.Client == nil:
			return nil, fmt.Errorf("arena: seat %s: configuration %s has no model client", p, m.Name)
		}
		out[p] = "model:" + m.Name
	}
	if slices.Contains(slices.Collect(maps.Values(out)), "model") && cfg.Client == nil {
		return nil, errors.New("arena: a seat is a model and no model client was given")
	}
	return out, nil
}

// ValidConfigName reports whether name may name a model seat's
// configuration (model:<name>): not empty, and no control character, so
// that the table keeps one line per configuration.
func ValidConfigName(name string) bool {
	return name != "" && !strings.ContainsFunc(name, unicode.IsControl)
}

// play runs one game to its end (or the turn cap) on a state.db in dir.
func play(ctx context.Context, g runner.Stepper, kind Game, cfg Config, dir string) (GameResult, error) {
	res := GameResult{Players: map[string]PlayerStats{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	st, err := store.Open(ctx, store.Path(dir))
	if err != nil {
		return res, err
	}
	defer st.Close()
	r := &runner.Runner{Stepper: g, Store: st, Client: cfg.Client}
	rep, runErr := r.Run(ctx, cmp.Or(cfg.MaxTurns, 10000))
	if errors.Is(runErr, runner.ErrInterrupted) {
		return res, runErr
	}
	if rep != nil {
		res.Stop, res.Ended, res.Turns = rep.Stop, rep.Ended, rep.LastTick
		if rep.Stop == runner.StopCompleted {
			// The cap came first: see whether the last turn ended it.
			if e, ok := g.(runner.Ender); ok {
				if over, how := e.Over(r.State()); over {
					res.Stop, res.Ended = runner.StopGameOver, how
				}
			}
		}
	}
	if runErr != nil {
		res.Error = runErr.Error()
	}
	if res.Stop == runner.StopGameOver {
		res.Winner = kind.Winner(r.State())
	}
	sum, err := st.Summary(ctx)
	if err != nil {
		return res, err
	}
	invalid, err := st.ApplyErrorCounts(ctx)
	if err != nil {
		return res, err
	}
	for _, p := range kind.Players() {
		ps := PlayerStats{Errors: invalid[p]}
		for _, u := range sum.ByEntity {
			// Entity keys are <kind>:<player>[:<decision>].
			if parts := strings.Split(u.Key, ":"); len(parts) >= 2 && parts[1] == p {
				ps.Calls += u.Calls
				ps.FailedCalls += u.FailedCalls
				ps.Tokens += u.PromptTokens + u.CompletionTokens
			}
		}
		res.Players[p] = ps
	}
	return res, nil
}

// summarize sums up the results of every game of arena a, in game order.
func summarize(a Identity, results []GameResult) *Table {
	t := &Table{Kind: a.Kind, Games: a.Games, Seed: a.Seed, Results: results}
	invalid, calls := map[string]int{}, map[string]int{}
	rows := make([]Row, len(a.Seats))
	for i, s := range a.Seats {
		rows[i] = Row{Player: s.Player, Seat: s.Seat}
	}
	for _, res := range results {
		t.Turns += res.Turns
		switch {
		case res.Stop != runner.StopGameOver:
			t.Unfinished++
		case res.Winner == "":
			t.Draws++
		}
		for i := range rows {
			row := &rows[i]
			ps := res.Players[row.Player]
			if res.Stop == runner.StopGameOver {
				switch res.Winner {
				case "":
					row.Draws++
				case row.Player:
					row.Wins++
				default:
					row.Losses++
				}
			}
			invalid[row.Player] += ps.Errors
			calls[row.Player] += ps.Calls
			row.FailedCalls += ps.FailedCalls
			row.Tokens += ps.Tokens
		}
	}
	for i := range rows {
		if row := &rows[i]; t.Turns > 0 {
			row.InvalidByTurn = float64(invalid[row.Player]) / float64(t.Turns)
			row.CallsByTurn = float64(calls[row.Player]) / float64(t.Turns)
		}
	}
	t.Rows = rows
	t.Configurations = configurationsOf(rows, results, t.Turns, invalid)
	return t
}
