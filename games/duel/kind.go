package duel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/games/seat"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

func init() {
	session.Register(KindName, session.Opener{
		Kind:    (*Game)(nil),
		Section: seat.Section,
		Reads:   world.Reads{Files: []string{"ships.yaml"}, Folders: []string{"prompts"}},
		Open:    open,
		Schemas: Schemas,
		Templates: []session.PhaseTemplates{
			{Phase: PhaseBuild, Templates: []string{SystemPrompt, BuildPrompt}, Entity: "a player"},
			{Phase: PhaseCharges, Templates: []string{SystemPrompt, ChargesPrompt}, Entity: "a player"},
		},
	})
}

func open(sim *world.Simulation, pr *prompts.Renderer, set session.Settings) (session.Kind, error) {
	g, err := Open(sim, pr)
	if err != nil {
		return nil, err
	}
	g.Params = set.Params(seat.Of(set).PhaseConfig)
	return g, nil
}

// UseClient makes c the client of the model seats.
func (g *Game) UseClient(c *llm.Client) { g.Client = c }

// Help is the duel's lines of the commands' --help: how a person plays a
// turn, for play.
func (*Game) Help(command string) string {
	switch command {
	case "arbiter":
		return `  Two players roll dice, build ships and fire their charges until one has
  no health left, played by models, bots and people at the terminal.
`
	case "play":
		return playHelp
	case "report":
		return `  Every turn with each side's health after it, how the game ended, and
  each player's refused choices.
`
	case "story":
		return `  Each turn's log: the builds, hits and healing, and the choices refused.
`
	}
	return ""
}

// playHelp is how a person plays a turn of a duel.
const playHelp = `  Each turn both players roll a die and gain that many lines; then you build one
  ship you can pay for (or upgrade one of yours, or build none), and spend the
  charges of your ships at a target:
    build (a ship above, "<ship> <your ship>" to upgrade, or none)> Fighter
    build (...)> Dreadnought p1-1          (upgrades your Fighter p1-1)
    charges (<ship> <target>, ...; empty: none)> p1-3 opponent, p1-4 p2-2
  A choice the rules refuse is said and asked again in its step; after each
  turn you are told what happened (an upgraded ship's new id: "p1-1 is now
  p1-5"). /ships shows every ship and what it does, /quit leaves.
`

// Manifest: the model seats' model for both phases, their three templates,
// the schemas of their answers, and the seed.
func (g *Game) Manifest() session.ManifestPart {
	seed := g.Seed
	return session.ManifestPart{
		Models:    []manifest.PhaseModel{{Phase: PhaseBuild, Model: g.Params.Model}, {Phase: PhaseCharges, Model: g.Params.Model}},
		Templates: []string{SystemPrompt, BuildPrompt, ChargesPrompt},
		Schemas:   Schemas(),
		Seed:      &seed,
	}
}

// Request refuses: a duel's requests depend on the turn's dice.
func (g *Game) Request(context.Context, session.RequestQuery) (*session.Request, error) {
	return nil, &session.InputError{Err: errors.New("a duel's requests depend on the turn's dice and options, so they are not rendered ahead; each one sent is stored with its call in state.db")}
}

// CheckStory refuses a narrative's filters: the story is told by turns.
func (g *Game) CheckStory(dir string, q session.StoryQuery) error {
	return session.CheckTurnStory(dir, KindName, q)
}

// Story is each turn's record: its events, told as a player would (the
// builds, hits and healing with the ships' names, health before → after),
// and the choices refused, which are the players' errors.
func (g *Game) Story(ctx context.Context, st *store.Store, from, to int, _ session.StoryQuery, out *session.Story) error {
	recs, err := st.Records(ctx, Stream, to, to)
	if err != nil {
		return err
	}
	for _, r := range recs {
		if r.Tick < from {
			continue
		}
		var l TurnLog
		if err := json.Unmarshal(r.Body, &l); err != nil {
			return fmt.Errorf("read turn %d: %w", r.Tick, err)
		}
		lines := slices.Clone(l.Events)
		errs := []session.PlayerError{}
		for _, c := range l.Rejected {
			lines = append(lines, "refused: "+c)
			// A refusal is recorded as "<seat>: <why>".
			seat, why, _ := strings.Cut(c, ": ")
			errs = append(errs, session.PlayerError{Player: seat, Error: why})
		}
		out.Turns = append(out.Turns, session.StoryTurn{Turn: r.Tick, Lines: session.NonNil(lines), Errors: errs})
	}
	return nil
}

// Report is every turn with each side's health after it, and each
// player's refused choices; a seat a person played reads person.
func (g *Game) Report(ctx context.Context, s *session.Session) (*session.ReportPart, error) {
	last, _ := s.State().(*State)
	seat := func(p string) string {
		if last == nil {
			return g.Seat(p)
		}
		return g.seatIn(last, p)
	}
	part, err := s.GameReport(ctx, g.Players(), seat, g.board)
	if err != nil || last == nil {
		return part, err
	}
	part.Ending = g.ending(last, part)
	return part, nil
}

// finalLine is what decided the game in its last turn: the last event
// that moved a fallen player's health (the blow that ended it), else the
// turn's last event: "The last of turn 7: end of turn: all together,
// p1's health goes 4 → 0".
func finalLine(last session.ReportTurn, st *State) string {
	lines := slices.DeleteFunc(slices.Clone(last.Lines), func(l string) bool { return strings.HasPrefix(l, "Game over: ") })
	if len(lines) == 0 {
		return ""
	}
	final := lines[len(lines)-1]
	for i := len(lines) - 1; i >= 0; i-- {
		if fallen(st, lines[i]) {
			final = lines[i]
			break
		}
	}
	return fmt.Sprintf("The last of turn %d: %s", last.N, final)
}

// fallen reports whether line moves the health of a player who ended at 0
// or below.
func fallen(st *State, line string) bool {
	for _, p := range st.Board.Players {
		if p.Health <= 0 && strings.Contains(line, p.ID+"'s health") {
			return true
		}
	}
	return false
}

// ending is how the duel in st ended, or where it stands: the result, each
// side's health and ships and its refused choices, and the last thing the
// final turn did.
func (g *Game) ending(st *State, part *session.ReportPart) *session.Ending {
	e := &session.Ending{Over: st.Over(), Turns: st.Board.Turn, MaxTurns: g.MaxTurns,
		Result: fmt.Sprintf("not over: played to turn %d of %d", st.Board.Turn, g.MaxTurns)}
	if st.Over() {
		e.Result = fmt.Sprintf("%s, at turn %d", g.overText(st), st.Board.Turn)
		if n := len(part.Turns); n > 0 {
			e.Final = finalLine(part.Turns[n-1], st)
		}
	}
	refused := map[string]int{}
	for _, p := range part.Players {
		refused[p.Player] = len(p.Errors)
	}
	for _, p := range st.Board.Players {
		e.Players = append(e.Players, session.EndPlayer{Player: p.ID, Seat: g.seatIn(st, p.ID), Winner: st.Result == p.ID,
			Holds:   fmt.Sprintf("health %d/%d, %s", p.Health, p.MaxHealth, plural(len(st.Board.Fleet(p.ID)), "ship")),
			Invalid: refused[p.ID], InvalidNoun: "refused choices"})
	}
	return e
}

func (g *Game) board(ctx context.Context, state any) (session.Board, error) {
	fields, err := g.Status(ctx, nil, state)
	if err != nil {
		return session.Board{}, err
	}
	b := session.Board{Fields: fields}
	for _, p := range state.(*State).Board.Players {
		b.Meters = append(b.Meters, session.Meter{Label: p.ID + " health", Value: p.Health, Max: p.MaxHealth})
	}
	return b, nil
}
