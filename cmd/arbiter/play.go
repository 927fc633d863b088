package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/session"
)

// PlayOptions are the inputs of `arbiter play`.
type PlayOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config
	Dir     string
	// Seats are the players people take at this terminal (--seat) besides
	// the seats simulation.yaml gives to a person.
	Seats []string
	// Cassette records the model seats' calls, or answers them from a
	// recording (--record, --replay).
	Cassette CassetteOptions
}

func newPlayCmd(io *IOStreams, g *globals, runF func(context.Context, *PlayOptions) error) *cobra.Command {
	opts := &PlayOptions{IO: io, Globals: g}
	cmd := &cobra.Command{
		Use:   "play <simulation-dir> [--seat <player>]",
		Short: "Play a game at the terminal: one person, or several taking turns (hot-seat); the other seats play as configured",
		Long: `Play a game at the terminal. The people are the seats simulation.yaml makes
"person", and any seat named with --seat (played by a person over its configured
bot or model). With more than one person the game is played hot-seat: each
player's turn starts on a screen of its own, after the keyboard is passed.

End of input leaves the game: every committed turn is kept, and the exit code
is that of an interruption (130). /quit leaves with exit 0.

How a turn is played, by kind:
` + session.Help("play"),
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := opts.Cassette.check(); err != nil {
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
			return runPlay(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringSliceVar(&opts.Seats, "seat", nil, "a player you play, e.g. p1 (repeat, or p1,p2, for several people at this terminal; default: the seats simulation.yaml makes person)")
	addLLMFlags(cmd)
	addCassetteFlags(cmd, &opts.Cassette)
	return cmd
}

// runPlay seats the people and plays turns until the game ends, the input
// ends, or a person quits. Every turn commits to state.db.
func runPlay(ctx context.Context, opts *PlayOptions) (err error) {
	io, g := opts.IO, opts.Globals
	ctx, untrace, err := traced(ctx, io, opts.Config, "play", opts.Dir, "")
	if err != nil {
		return err
	}
	defer func() { untrace(err) }()
	set, err := opts.Config.settings(true, "play")
	if err != nil {
		return err
	}
	set.People = opts.Seats
	set.Logger = g.logger(io)
	if g.verbose > 0 {
		set.OnEvent = func(ev session.Event) { fmt.Fprintln(io.ErrOut, ev.String()) }
	}
	s, closeRun, err := openRun(ctx, opts.Dir, opts.Config, opts.Cassette, set)
	if err != nil {
		return err
	}
	defer keepFirst(&err, closeRun)
	t := s.Table(io.OutColor)
	if t == nil {
		return usageErrorf("%s is a %s simulation: only games are played with `arbiter play`", opts.Dir, s.Sim.Kind)
	}
	at, err := seatPeople(opts.Dir, t.Players, t.People, opts.Seats)
	if err != nil {
		return err
	}
	k := &keyboard{in: newLines(io.In), out: io.styled(), clear: io.OutTTY, width: io.Width, people: at}
	defer k.in.close()
	if k.hotSeat() {
		fmt.Fprintf(k.out, "%s play at this terminal, hot-seat: each turn the keyboard passes from one to the next.\n", strings.Join(at, " and "))
	}
	return playEnded(s, playTurns(ctx, s, t, k), k)
}

// playTurns plays the game's turns with the people at the keyboard until
// the game ends or they leave. A turn the rules refuse is said and played
// again from its start.
func playTurns(ctx context.Context, s *session.Session, t *session.Table, k *keyboard) error {
	k.show(t.Intro(k.people))
	for {
		if over, text := t.Over(s.State()); over {
			k.show(text)
			return nil
		}
		read := k.read
		move, err := t.Move(ctx, s.State(), k.people, k)
		if err != nil {
			return err
		}
		_, err = s.Turn(ctx, move)
		if errors.Is(err, session.ErrRefused) && !errors.Is(err, errQuit) && !errors.Is(err, errInputEnd) {
			if err := k.refused(ctx, err, read); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		lines, err := t.Told(ctx, s.State())
		if err != nil {
			return err
		}
		if err := k.tell(ctx, lines); err != nil {
			return err
		}
	}
}

// seatPeople returns the players people play at this terminal, in player
// order: those asked for with --seat and those configured as a person.
func seatPeople(dir string, players, people, asked []string) ([]string, error) {
	for _, p := range asked {
		if !slices.Contains(players, p) {
			return nil, usageErrorf("--seat %s: not a player of %s (players: %s)", p, dir, strings.Join(players, ", "))
		}
	}
	var at []string
	for _, p := range players {
		if slices.Contains(asked, p) || slices.Contains(people, p) {
			at = append(at, p)
		}
	}
	if len(at) == 0 {
		return nil, usageErrorf("no seat of %s is a person: name the one you play, e.g. `arbiter play %s --seat %s` (players: %s)", dir, dir, players[0], strings.Join(players, ", "))
	}
	return at, nil
}

// errQuit ends a game's loop at a person's request, and errInputEnd at the
// end of the input. Both are refusals, so a turn in flight when they come
// records nothing.
var (
	errQuit     = fmt.Errorf("quit: %w", session.ErrRefused)
	errInputEnd = fmt.Errorf("end of input: %w", session.ErrRefused)
)

// playEnded says how a game's loop ended: /quit is a success; the end of the
// input and an interruption leave with the exit code of an interruption,
// in one line naming the last committed turn.
func playEnded(s *session.Session, err error, k *keyboard) error {
	switch {
	case errors.Is(err, errQuit):
		k.show(fmt.Sprintf("Left the game after turn %d; every turn played is saved. `arbiter play` goes on from here.\n", s.LastTick()))
		return nil
	case errors.Is(err, errInputEnd):
		fmt.Fprintln(k.out) // end the prompt's line
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("end of input: left the game after turn %d, which is saved; `arbiter play` goes on from here", s.LastTick())}
	case errors.Is(err, context.Canceled), errors.Is(err, session.ErrInterrupted):
		return &exitError{code: ExitInterrupted, err: fmt.Errorf("interrupted: left the game after turn %d, which is saved; the turn being played is not", s.LastTick())}
	}
	return err
}

// keyboard is the terminal the people of a game share. With more than one
// person (hot-seat) a seat's turn starts on a screen of its own: the last
// player's screen is cleared (on a terminal) and the next presses Enter
// once they have the keyboard, so no player sees another's orders.
type keyboard struct {
	in     *lines
	out    io.Writer
	clear  bool     // out is a terminal: clear it between players
	width  int      // the terminal's columns, where text wraps; 0: no wrapping
	people []string // the seats played here, in player order
	at     string   // the seat at the keyboard
	read   int      // lines read so far
}

func (k *keyboard) hotSeat() bool { return len(k.people) > 1 }

// line reads the next line; errInputEnd at the end of the input.
func (k *keyboard) line(ctx context.Context) (string, error) {
	line, ok, err := k.in.next(ctx)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errInputEnd
	}
	k.read++
	return line, nil
}

// ask shows prompt and reads the answer, trimmed; /quit is errQuit.
func (k *keyboard) ask(ctx context.Context, prompt string) (string, error) {
	fmt.Fprint(k.out, prompt)
	line, err := k.line(ctx)
	line = strings.TrimSpace(line)
	if err == nil && strings.EqualFold(line, "/quit") {
		return "", errQuit
	}
	return line, err
}

// handTo gives the keyboard to seat. In hot-seat, the screen changes hands:
// cleared, then "pass the keyboard to p2, press Enter".
func (k *keyboard) handTo(ctx context.Context, seat string) error {
	if k.at == seat {
		return nil
	}
	first := k.at == ""
	k.at = seat
	if !k.hotSeat() {
		return nil
	}
	if k.clear && !first {
		writeControl(k.out, "\x1b[H\x1b[2J\x1b[3J")
	}
	_, err := k.ask(ctx, fmt.Sprintf("\n==== %s's turn ====\nPass the keyboard to %s, then press Enter. ", seat, seat))
	return err
}

// tell shows what every player may see (what a turn did). In hot-seat the
// table reads it together: the next screen waits for Enter, so it is not
// cleared before it is read.
func (k *keyboard) tell(ctx context.Context, lines []string) error {
	if len(lines) == 0 {
		return nil
	}
	for _, l := range lines {
		k.show(fmt.Sprintf("  %s\n", l))
	}
	if !k.hotSeat() {
		return nil
	}
	_, err := k.ask(ctx, "Press Enter to go on. ")
	return err
}

// refused says why the rules refused a turn, which is then played again. A
// refusal that came with no line read would come again forever: it ends
// the loop instead.
func (k *keyboard) refused(ctx context.Context, err error, readBefore int) error {
	if k.read == readBefore {
		return err
	}
	fmt.Fprintf(k.out, "Refused: %v\n", err)
	if k.hotSeat() {
		_, err := k.ask(ctx, "The turn is played again from its start: press Enter. ")
		return err
	}
	return nil
}

// Ask is the keyboard's answer to a kind's question: the keyboard goes to
// q.Seat, q.Screen is shown, and answers are read until one reads (and,
// with warnings, is confirmed). The lines of a Lines answer that is not
// confirmed are kept, to be edited (typed lists).
func (k *keyboard) Ask(ctx context.Context, q session.Question) (any, error) {
	if err := k.handTo(ctx, q.Seat); err != nil {
		return nil, err
	}
	k.show(q.Screen)
	var typed []string
	for {
		text, v, done, err := k.answer(ctx, q, &typed)
		if err != nil || done {
			return v, err
		}
		v, problem := q.Read(text)
		if problem != "" {
			k.show(problem + "\n")
			typed = nil
			continue
		}
		if ok, err := k.confirm(ctx, q, v); err != nil || ok {
			return v, err
		}
		if q.Lines {
			k.list(typed)
		}
	}
}

// show writes text wrapped at the terminal's width.
func (k *keyboard) show(text string) { fmt.Fprint(k.out, wrap(text, k.width)) }

// answer reads the text of one answer to q: a line, or with q.Lines the
// lines typed until an empty one, added to typed (which /list shows and
// /drop N edits). A shortcut's answer is the answer (done).
func (k *keyboard) answer(ctx context.Context, q session.Question, typed *[]string) (text string, v any, done bool, err error) {
	for {
		line, err := k.ask(ctx, q.Prompt)
		if err != nil {
			return "", nil, false, err
		}
		if i := slices.IndexFunc(q.Shortcuts, func(s session.Shortcut) bool { return strings.EqualFold(s.Line, line) }); i >= 0 {
			sc := q.Shortcuts[i]
			if sc.Show == "" {
				return "", sc.Answer, true, nil
			}
			k.show(sc.Show)
			continue
		}
		if !q.Lines {
			return line, nil, false, nil
		}
		if line == "" {
			return strings.Join(*typed, "\n"), nil, false, nil
		}
		if k.edit(line, typed) {
			continue
		}
		if q.Line != nil {
			note, keep := q.Line(len(*typed)+1, line)
			if note != "" {
				k.show(note + "\n")
			}
			if !keep {
				continue
			}
		}
		*typed = append(*typed, line)
	}
}

// edit does what line asks of the lines typed so far, when it is /list or
// /drop N, and reports whether it was one of them.
func (k *keyboard) edit(line string, typed *[]string) bool {
	f := strings.Fields(line)
	switch {
	case strings.EqualFold(f[0], "/list") && len(f) == 1:
		k.list(*typed)
	case strings.EqualFold(f[0], "/drop"):
		n, err := strconv.Atoi(strings.Join(f[1:], " "))
		if err != nil || n < 1 || n > len(*typed) {
			fmt.Fprintf(k.out, "/drop takes the number of a line typed, 1 to %d (/list shows them).\n", len(*typed))
			return true
		}
		fmt.Fprintf(k.out, "Dropped %d: %s\n", n, (*typed)[n-1])
		*typed = slices.Delete(*typed, n-1, n)
	default:
		return false
	}
	return true
}

// list shows the lines typed so far, numbered from 1, and how to edit them.
func (k *keyboard) list(typed []string) {
	if len(typed) == 0 {
		fmt.Fprintln(k.out, "Nothing typed yet.")
		return
	}
	fmt.Fprintln(k.out, "Typed so far:")
	for i, l := range typed {
		fmt.Fprintf(k.out, "  %d. %s\n", i+1, l)
	}
	fmt.Fprintln(k.out, "/drop N removes line N, a line typed is added, an empty line submits them.")
}

// confirm shows the warnings of v, if any, and asks "Submit anyway?"; no
// is said with q.Again.
func (k *keyboard) confirm(ctx context.Context, q session.Question, v any) (bool, error) {
	if q.Warnings == nil {
		return true, nil
	}
	warnings := q.Warnings(v)
	if len(warnings) == 0 {
		return true, nil
	}
	fmt.Fprintln(k.out, "\nWARNINGS:")
	for _, w := range warnings {
		k.show(fmt.Sprintf("  - %s\n", w))
	}
	answer, err := k.ask(ctx, "\nSubmit anyway? (y/n): ")
	if err != nil {
		return false, err
	}
	if a := strings.ToLower(answer); a != "y" && a != "yes" {
		fmt.Fprintln(k.out, q.Again)
		return false, nil
	}
	return true, nil
}
