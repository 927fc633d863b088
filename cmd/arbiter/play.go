package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/games/conquest"
	"github.com/arbiter-sim/arbiter/games/duel"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// PlayOptions are the inputs of `arbiter play`.
type PlayOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	Seat    string
	// Cassette records the model seats' calls, or answers them from a
	// recording (--record, --replay).
	Cassette CassetteOptions
}

func newPlayCmd(io *IOStreams, g *globals, runF func(context.Context, *PlayOptions) error) *cobra.Command {
	opts := &PlayOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "play <simulation-dir> --seat <player>",
		Short: "Play a seat of a game (conquest, duel) at the terminal; the other seats play as configured",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Seat == "" {
				return usageErrorf("play: --seat is required, e.g. --seat p1 (see arbiter play --help)")
			}
			if err := opts.Cassette.check(); err != nil {
				return err
			}
			cfg, err := loadConfig(g.configFile, cmd.Flags(), llmFlags)
			if err != nil {
				return err
			}
			opts.Config, opts.Dir = cfg, args[0]
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runPlay(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.Seat, "seat", "", "the player you play, e.g. p1")
	addLLMFlags(cmd)
	addCassetteFlags(cmd, &opts.Cassette)
	return cmd
}

// runPlay seats a person and plays turns until the game ends, the input
// ends, or the person quits. Every turn commits to state.db.
func runPlay(ctx context.Context, opts *PlayOptions) (err error) {
	io, g := opts.IO, opts.Globals
	set, err := opts.Config.settings(true, "conquest", "duel")
	if err != nil {
		return err
	}
	set.Person = opts.Seat
	set.Logger = g.logger(io)
	if g.verbose > 0 {
		set.OnEvent = func(ev runner.Event) { fmt.Fprintln(io.ErrOut, ev.String()) }
	}
	s, closeRun, err := openRun(ctx, opts.Dir, opts.Config, opts.Cassette, set)
	if err != nil {
		return err
	}
	defer keepFirst(&err, closeRun)
	in := newLines(io.In)
	defer in.close()
	switch k := s.Kind.(type) {
	case *conquest.Game:
		if !slices.Contains(k.Setup.Players, opts.Seat) {
			return usageErrorf("--seat %s: not a player of %s (players: %s)", opts.Seat, opts.Dir, strings.Join(k.Setup.Players, ", "))
		}
		p := &conquestPlay{s: s, seat: opts.Seat, in: in, out: io.Out}
		return p.run(ctx)
	case *duel.Game:
		if _, ok := k.Seats[opts.Seat]; !ok {
			return usageErrorf("--seat %s: not a seat of %s (seats: p1, p2)", opts.Seat, opts.Dir)
		}
		p := &duelPlay{s: s, g: k, seat: opts.Seat, in: in, out: io.Out}
		return p.run(ctx)
	}
	return usageErrorf("%s is a %s simulation: only games are played with `arbiter play`", opts.Dir, s.Sim.Kind)
}

// errQuit ends a game's loop at the person's request, and errInputEnd at
// the end of the input. Both are refusals, so a turn in flight when they
// come records nothing.
var (
	errQuit     = fmt.Errorf("quit: %w", runner.ErrRefused)
	errInputEnd = fmt.Errorf("end of input: %w", runner.ErrRefused)
)

// conquestPlay is a person's seat of a conquest at the terminal.
type conquestPlay struct {
	s    *session.Session
	seat string
	in   *lines
	out  io.Writer
}

func (p *conquestPlay) state() *conquest.State { return p.s.State().(*conquest.State) }

func (p *conquestPlay) run(ctx context.Context) error {
	fmt.Fprintf(p.out, "You play %s. Each turn, type your orders one per line (SEND 7 FROM A TO B),\nthen an empty line to submit them; /pass submits none, /map shows the map, /quit leaves.\n", p.seat)
	for {
		st := p.state()
		if st.Over() {
			fmt.Fprintf(p.out, "Game over: %s\n", st.Result)
			return nil
		}
		fmt.Fprint(p.out, conquest.ErrorBlock(st, p.seat))
		fmt.Fprintf(p.out, "\n%s\nTurn %d: your orders, %s?\n", conquest.MapText(st), st.Turn+1, p.seat)
		orders, err := p.orders(ctx, st)
		if errors.Is(err, errQuit) || errors.Is(err, errInputEnd) {
			fmt.Fprintln(p.out, "Left the game; every turn played is saved. `arbiter play` goes on from here.")
			return nil
		}
		if err != nil {
			return err
		}
		_, err = p.s.Turn(ctx, conquest.Move{Orders: map[string][]conquest.Order{p.seat: orders}})
		if errors.Is(err, runner.ErrRefused) {
			fmt.Fprintf(p.out, "Refused: %v\n", err)
			continue
		}
		if err != nil {
			return err
		}
		for _, l := range p.state().Log {
			fmt.Fprintf(p.out, "  %s\n", l)
		}
	}
}

// orders reads one turn's orders: lines until an empty one, read whole by
// the shared command parser; then the seed's warnings and
// "Submit anyway? (y/n):". A list with an unreadable line is asked again.
func (p *conquestPlay) orders(ctx context.Context, st *conquest.State) ([]conquest.Order, error) {
	for {
		var text []string
	collect:
		for {
			fmt.Fprint(p.out, "order> ")
			line, ok, err := p.in.next(ctx)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, errInputEnd
			}
			switch strings.TrimSpace(strings.ToLower(line)) {
			case "/quit":
				return nil, errQuit
			case "/pass":
				return []conquest.Order{}, nil
			case "/map":
				fmt.Fprint(p.out, conquest.MapText(st))
				continue
			case "":
				break collect
			}
			text = append(text, line)
		}
		orders, err := conquest.ParseOrderText(strings.Join(text, "\n"))
		if err != nil {
			fmt.Fprintf(p.out, "Not read: %v. Type the turn's orders again.\n", err)
			continue
		}
		if len(orders) == 0 {
			fmt.Fprintln(p.out, "No orders typed: /pass submits none.")
			continue
		}
		if warnings := conquest.Warnings(st, p.seat, orders); len(warnings) > 0 {
			fmt.Fprintln(p.out, "\nWARNINGS:")
			for _, w := range warnings {
				fmt.Fprintf(p.out, "  - %s\n", w)
			}
			fmt.Fprint(p.out, "\nSubmit anyway? (y/n): ")
			answer, ok, err := p.in.next(ctx)
			if err != nil {
				return nil, err
			}
			if !ok {
				return nil, errInputEnd
			}
			if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
				fmt.Fprintln(p.out, "Type the turn's orders again.")
				continue
			}
		}
		return orders, nil
	}
}
