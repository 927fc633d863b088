package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/session"
)

// ArenaOptions are the inputs of `arbiter arena`.
type ArenaOptions struct {
	IO       *IOStreams
	Globals  *globals
	Config   *Config
	Dir      string
	Seats    string
	Games    int
	Seed     uint64
	Parallel int
	MaxTurns int
	// Shard is the part of the games this run plays (--shard i/n; zero:
	// every game), Out the results file it writes.
	Shard arena.Shard
	Out   string
	// Suite is the eval suite whose variants --seats names (model:terse;
	// empty: the simulation's evals.yaml). SeatTemplates and SeatModels
	// give a model seat its own templates folders and model directly
	// (--seat-templates p1=DIR, --seat-model p1=M).
	Suite         string
	SeatTemplates []string
	SeatModels    []string
}

func newArenaCmd(io *IOStreams, g *globals, runF func(context.Context, *ArenaOptions) error) *cobra.Command {
	opts := &ArenaOptions{IO: io, Globals: g}
	var shard string
	cmd := &cobra.Command{
		Use:   "arena <game-simulation-dir | kind> --seats model,bot --games 20 --seed 1",
		Short: "Play seeded games between seat configurations and compare them",
		Long: `arena plays --games games of a game simulation (or, given the name of a
kind with a demo built into arbiter, ` + strings.Join(session.Demos(), " or ") + `, of the settings
of simulations/<kind>-demo: it works from any folder),
with seeds --seed, --seed+1, ..., in parallel, each on a run state of its own
that is removed afterwards; the simulation's own state.db is not touched.
--seats lists the seats in player order (model,bot: p1 a model, p2 the bot),
or by player (p2=model). It prints wins, draws, invalid orders or choices per
turn, model calls per turn (a seat's tool iterations each count), failed calls
(the seat fell back) and tokens per player, and with --json every game.

A model seat may play a configuration of its own, so that two prompt
versions or models play each other: model:terse plays the variant terse of
the simulation's eval suite (evals.yaml, or --suite FILE: its templates,
model, temperature, max tokens, endpoint), and --seat-templates p1=DIR and
--seat-model p1=M give p1's seat a templates folder and a model directly
(it plays as model:DIR/@M). Per seat configuration (bot, model, model:terse)
the table gives the win rate over its finished games with a 95% Wilson
interval, its invalid orders or choices per turn of a seat, and with three
or more configurations a Bradley-Terry rating on the Elo scale.

--shard i/n plays only the i-th of n shards of the games (game k, from 0,
when k mod n is i-1; its seed is --seed+k as in the whole arena) and writes
their results to --out instead of printing a table, so that n machines can
play one arena; 'arbiter arena merge' prints the table of their files, the
same as one run of the whole arena would print.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Games < 1 || opts.Games > 10000 {
				return usageErrorf("--games must be from 1 to 10000, got %d", opts.Games)
			}
			if err := opts.parseShard(shard, cmd.Flags().Changed("out")); err != nil {
				return err
			}
			cfg, err := g.loadConfig(cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runArena(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Seats, "seats", "", "seats in player order (model,bot) or by player (p1=model,p2=bot); default: as simulation.yaml says")
	f.IntVar(&opts.Games, "games", 10, "games to play")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the first game; game i plays seed+i")
	f.IntVar(&opts.Parallel, "parallel", 4, "games played at once")
	f.IntVar(&opts.MaxTurns, "max-turns", 0, "turns after which a game counts as unfinished (0: the game's own limit)")
	f.StringVar(&shard, "shard", "", "play only shard i of n of the games and write their results file (1/4: the first of 4)")
	f.StringVarP(&opts.Out, "out", "o", "", "results file of a --shard run (default arena-<i>-of-<n>.json)")
	f.StringVar(&opts.Suite, "suite", "", "eval suite whose variants --seats names (model:terse; default <simulation>/evals.yaml)")
	f.StringArrayVar(&opts.SeatTemplates, "seat-templates", nil, "PLAYER=DIR: that model seat's templates laid over the simulation's (repeat it)")
	f.StringArrayVar(&opts.SeatModels, "seat-model", nil, "PLAYER=MODEL: that model seat's model (repeat it)")
	addLLMFlags(cmd)
	cmd.AddCommand(newArenaMergeCmd(io, g, nil))
	return cmd
}

// parseShard reads --shard into opts.Shard and names its results file;
// --out without --shard is refused, since a whole arena prints its table.
func (opts *ArenaOptions) parseShard(spec string, out bool) error {
	if spec == "" {
		if out {
			return usageErrorf("--out names the results file of a --shard run; give --shard i/n too (1/1: every game)")
		}
		return nil
	}
	s, err := arena.ParseShard(spec)
	if err == nil {
		err = s.Check(opts.Games)
	}
	if err != nil {
		return usageErrorf("--shard %s: %v", spec, err)
	}
	opts.Shard = s
	if !out {
		opts.Out = fmt.Sprintf("arena-%d-of-%d.json", s.Index, s.Count)
	}
	if opts.Out == "" {
		return usageErrorf("--out is empty: name the results file of shard %s", s)
	}
	return nil
}

func runArena(ctx context.Context, opts *ArenaOptions) (err error) {
	io, g := opts.IO, opts.Globals
	ctx, untrace, err := traced(ctx, io, opts.Config, "arena", opts.Dir, "")
	if err != nil {
		return err
	}
	defer func() { untrace(err) }()
	set, err := opts.Config.settings(true, "arena")
	if err != nil {
		return err
	}
	// A folder is played as it is; a kind's name that is no folder here is
	// its demo built into arbiter, whatever the working folder.
	var s *session.Session
	if isDir(opts.Dir) {
		s, err = session.Load(opts.Dir, set)
	} else {
		var done func()
		var demo bool
		if s, done, demo, err = session.LoadDemo(opts.Dir, set); demo && err == nil {
			defer done()
		} else if !demo {
			s, err = session.Load(opts.Dir, set) // says what is missing
		}
	}
	if err != nil {
		return err
	}
	kind, err := s.ArenaGame()
	if err != nil {
		return err
	}
	seats, variants, err := parseSeats(opts.Seats, kind.Players())
	if err != nil {
		return err
	}
	cfg := arena.Config{Games: opts.Games, Seed: opts.Seed, Seats: seats, MaxTurns: opts.MaxTurns, Parallel: opts.Parallel, Shard: opts.Shard}
	own, err := seatConfigs(opts, s, set, &cfg, variants)
	if err != nil {
		return err
	}
	models, err := s.ArenaClient(&cfg, g.logger(io))
	if err != nil {
		return err
	}
	if opts.Shard != (arena.Shard{}) {
		return playShard(ctx, opts, s, kind, cfg, models, own)
	}
	t, err := arena.Run(ctx, kind, cfg)
	if err != nil {
		return err
	}
	if ex := g.exporter(); ex != nil {
		return ex.Write(io, t)
	}
	writeArena(io, s.Sim.ID, t)
	return nil
}

// shardWritten is what `arena --shard --json` prints: the results file it
// wrote, and what it holds.
type shardWritten struct {
	Path  string      `json:"path"`
	Bytes int         `json:"bytes"`
	Shard arena.Shard `json:"shard"`
	Games int         `json:"games"` // the games of the shard, of the arena's
	Of    int         `json:"of"`
}

// playShard plays opts.Shard's games and writes their results file, named
// by the simulation and the settings that decide how its games play, so
// that merge takes only the shards of one arena.
func playShard(ctx context.Context, opts *ArenaOptions, s *session.Session, kind arena.Game, cfg arena.Config, models bool, own map[string]*session.Session) error {
	r, err := arena.Play(ctx, kind, cfg)
	if err != nil {
		return err
	}
	r.Arena.Simulation = s.Sim.ID
	if r.Arena.Settings, err = s.ArenaSettings(models, own); err != nil {
		return err
	}
	size, err := arena.WriteResults(opts.Out, r)
	if err != nil {
		return err
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, shardWritten{Path: opts.Out, Bytes: size, Shard: r.Shard, Games: len(r.Results), Of: cfg.Games})
	}
	fmt.Fprintf(opts.IO.ErrOut, "wrote %s: shard %s, %d of %s (%s)\n", opts.Out, r.Shard, len(r.Results), plural(cfg.Games, "game"), byteSize(size))
	return nil
}

// ArenaMergeOptions are the inputs of `arbiter arena merge`.
type ArenaMergeOptions struct {
	IO      *IOStreams
	Globals *globals
	Files   []string
}

func newArenaMergeCmd(io *IOStreams, g *globals, runF func(*ArenaMergeOptions) error) *cobra.Command {
	opts := &ArenaMergeOptions{IO: io, Globals: g}
	return &cobra.Command{
		Use:   "merge <results-file>...",
		Short: "Print the table of an arena played in shards (arena --shard i/n) from their results files",
		Long: `merge reads the results files that 'arbiter arena --shard i/n' wrote, one for
each shard of the split, and prints the arena's table (with --json, every
game) exactly as one run of the whole arena with the same seed prints it.
It refuses, naming the file, a damaged file, a file of another arena (kind,
simulation, seats, seed, games, --max-turns, settings or arbiter build), a
shard given twice, and it names the shards that are missing.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fmt.Errorf("takes the results files of every shard, got none")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			if runF != nil {
				return runF(opts)
			}
			return runArenaMerge(opts)
		},
	}
}

func runArenaMerge(opts *ArenaMergeOptions) error {
	t, id, err := arena.Merge(opts.Files...)
	if err != nil {
		return usageError(err)
	}
	if ex := opts.Globals.exporter(); ex != nil {
		return ex.Write(opts.IO, t)
	}
	writeArena(opts.IO, id.Simulation, t)
	return nil
}

// parseSeats reads --seats: "model,bot" in player order, or "p2=model";
// a model seat may name a variant of the eval suite, "model:terse"
// ("model:baseline" is "model", the simulation as it is).
// seats maps players to model or bot, variants players to the variant
// their model seat plays.
func parseSeats(spec string, players []string) (seats, variants map[string]string, err error) {
	seats, variants = map[string]string{}, map[string]string{}
	if strings.TrimSpace(spec) == "" {
		return seats, variants, nil
	}
	parts := strings.Split(spec, ",")
	for i, part := range parts {
		part = strings.TrimSpace(part)
		if p, seat, ok := strings.Cut(part, "="); ok {
			seats[strings.TrimSpace(p)] = strings.TrimSpace(seat)
			continue
		}
		if i >= len(players) {
			return nil, nil, usageErrorf("--seats %s: %d seats for %d players (%s)", spec, len(parts), len(players), strings.Join(players, ", "))
		}
		seats[players[i]] = part
	}
	for p, seat := range seats {
		if model, variant, ok := strings.Cut(seat, ":"); ok && model == "model" {
			if variant = strings.TrimSpace(variant); variant == "" {
				return nil, nil, usageErrorf("--seats %s: seat %s is %q: name the variant after model: (model:terse)", spec, p, seat)
			}
			seats[p] = "model"
			if variant != eval.Baseline {
				variants[p] = variant
			}
			continue
		}
		if seat != "model" && seat != "bot" {
			return nil, nil, usageErrorf("--seats %s: seat %s is %q; a seat of an arena is model, model:<variant> or bot", spec, p, seat)
		}
	}
	return seats, variants, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func writeArena(io *IOStreams, id string, t *arena.Table) {
	seeds := fmt.Sprintf("seeds %d..%d", t.Seed, t.Seed+uint64(t.Games)-1)
	if t.Games == 1 {
		seeds = fmt.Sprintf("seed %d", t.Seed)
	}
	fmt.Fprintf(io.Out, "%s arena (%s): %s, %s, %s; %s, %d unfinished\n",
		id, t.Kind, plural(t.Games, "game"), seeds, plural(t.Turns, "turn"), plural(t.Draws, "draw"), t.Unfinished)
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "player\tseat\twins\tlosses\tdraws\tinvalid/turn\tcalls/turn\tfailed calls\ttokens")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.3f\t%.2f\t%d\t%d\n", r.Player, r.Seat, r.Wins, r.Losses, r.Draws, r.InvalidByTurn, r.CallsByTurn, r.FailedCalls, r.Tokens)
	}
	tw.Flush()
	writeConfigurations(io, t.Configurations)
	for _, res := range t.Results {
		if res.Error != "" {
			fmt.Fprintf(io.Out, "game with seed %d stopped at turn %d (%s): %s\n", res.Seed, res.Turns, res.Stop, res.Error)
		}
	}
}

// writeConfigurations prints the table of seat configurations: each one's
// win rate over its finished games with the 95% interval, its invalid
// orders or choices per turn of a seat, and its rating when there is one.
func writeConfigurations(io *IOStreams, cs []arena.Configuration) {
	rated := len(cs) > 0 && cs[0].Rating != nil
	fmt.Fprintln(io.Out)
	tw := tabwriter.NewWriter(io.Out, 0, 4, 2, ' ', 0)
	head := "seat configuration\tplayers\tfinished\twins\tlosses\tdraws\twin rate\t95% interval\tinvalid/turn"
	if rated {
		head += "\trating (Bradley-Terry)"
	}
	fmt.Fprintln(tw, head)
	for _, c := range cs {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%.3f\t%.3f-%.3f\t%.3f", c.Seat, strings.Join(c.Players, ","), c.Finished, c.Wins, c.Losses, c.Draws, c.WinRate, c.WinLow, c.WinHigh, c.InvalidByTurn)
		if rated {
			fmt.Fprintf(tw, "\t%.0f", *c.Rating)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
}
