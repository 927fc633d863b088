package conquest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
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
	session.Register(KindName, session.Opener{Kind: (*Game)(nil), Section: seat.Section, Reads: world.Reads{Folders: []string{"prompts"}}, Open: open, Tools: commands,
		Templates: []session.PhaseTemplates{{Phase: PhaseOrders, Templates: []string{PromptFile}, Entity: "a player"}}})
}

func open(sim *world.Simulation, pr *prompts.Renderer, set session.Settings) (session.Kind, error) {
	g, err := Open(sim, pr)
	if err != nil {
		return nil, err
	}
	cfg := seat.Of(set)
	g.Params, g.ForceShape = set.Params(cfg.PhaseConfig), cfg.ForceToolShape
	return g, nil
}

// UseClient makes c the client of the model seats.
func (g *Game) UseClient(c *llm.Client) { g.Client = c }

// Help is conquest's lines of the commands' --help: how a person plays a
// turn, for play.
func (*Game) Help(command string) string {
	switch command {
	case "arbiter":
		return `  Players send fleets between stars to take them, played by models (with
  tools), bots and people at the terminal.
`
	case "play":
		return playHelp
	case "report":
		return `  How the game ended, the star map after every turn, each player's ships
  and stars over the turns, and each player's order errors.
`
	case "story":
		return `  Each turn's log, with the failures its event log holds.
`
	}
	return ""
}

// Manifest: the model seats' model, their system prompt, and the seed.
// A model seat's tools are built from the map of each turn; their shape is
// the arbiter revision's.
func (g *Game) Manifest() session.ManifestPart {
	seed := g.Setup.Seed
	return session.ManifestPart{Models: []manifest.PhaseModel{{Phase: PhaseOrders, Model: g.Params.Model}},
		Templates: []string{PromptFile}, Seed: &seed}
}

// Request is a model seat's first call of the turn after the state q
// holds (q.Entity: the player), its tools as the schema.
func (g *Game) Request(_ context.Context, q session.RequestQuery) (*session.Request, error) {
	if q.Phase != PhaseOrders {
		return nil, &session.InputError{Err: fmt.Errorf("--phase %q: a conquest's model seats have one phase, %s (--entity: the player)", q.Phase, PhaseOrders)}
	}
	st := q.State.(*State)
	if !st.HasPlayer(q.Entity) {
		return nil, &session.InputError{Err: fmt.Errorf("--entity %q: not a player (players: %s)", q.Entity, strings.Join(st.Players, ", "))}
	}
	tr := g.OpeningRequest(st, q.Entity, q.Tick+1)
	tools, err := json.Marshal(tr.Tools)
	if err != nil {
		return nil, err
	}
	return &session.Request{Phase: q.Phase, EntityKey: tr.EntityKey, Tick: tr.Tick, Model: tr.Params.Model, MaxTokens: tr.Params.MaxTokens,
		Messages: tr.Messages, SchemaName: "tools", Schema: tools}, nil
}

// CheckStory refuses a narrative's filters: the story is told by turns.
func (g *Game) CheckStory(dir string, q session.StoryQuery) error {
	return session.CheckTurnStory(dir, KindName, q)
}

// Story is each turn's log, kept in the turn's state, with the order
// errors and passed turns of the turn, then the failures the turn's event
// log holds (a model seat's failed call, its model turns run out) as they
// were emitted.
func (g *Game) Story(ctx context.Context, st *store.Store, from, to int, _ session.StoryQuery, out *session.Story) error {
	rows, err := st.Story(ctx, from, to)
	if err != nil {
		return err
	}
	events, err := st.Events(ctx, from, to)
	if err != nil {
		return err
	}
	for tick := from; tick <= to; tick++ {
		raw, err := st.State(ctx, tick)
		if err != nil {
			return err
		}
		var s struct {
			Log    []string `json:"log"`
			Passed []struct {
				Turn           int
				Player, Reason string
			} `json:"passed_turns"`
		}
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("read turn %d: %w", tick, err)
		}
		lines := slices.Clone(s.Log)
		errs := []session.PlayerError{}
		for _, e := range rows.ApplyErrors {
			if e.Tick == tick {
				markOrderError(&lines, e.CharacterID, e.Reason)
				errs = append(errs, session.PlayerError{Player: e.CharacterID, Error: shownError(e.Reason)})
			}
		}
		for _, p := range s.Passed {
			if p.Turn == tick {
				lines = append(lines, "passed: "+p.Player+": "+p.Reason)
				errs = append(errs, session.PlayerError{Player: p.Player, Error: "turn passed: " + p.Reason})
			}
		}
		for _, e := range events {
			if e.Tick == tick && failureEvent(e.Line) {
				lines = append(lines, e.Line)
			}
		}
		out.Turns = append(out.Turns, session.StoryTurn{Turn: tick, Lines: session.NonNil(lines), Errors: errs})
	}
	return nil
}

// failureEvent reports whether an event line tells of a failure or its
// recovery, not only that the turn went from one step to the next
// ("EMIT: STATE_ENTRY state=ORDERS").
func failureEvent(line string) bool {
	return !strings.HasPrefix(line, "EMIT: STATE_ENTRY ") || strings.HasPrefix(line, "EMIT: STATE_ENTRY state=ERROR ")
}

// markOrderError names the player on the log line where the rules
// recorded an order error of theirs (the turn's log holds each error once,
// without its player, numbered from 1 as people read it, or as recorded
// in a log written before), so that the story tells each error once,
// where it happened. An error the log lacks is added at the end. Errors
// are matched to lines in order, so two players' errors of the same text
// land on their own lines.
func markOrderError(lines *[]string, player, recorded string) {
	shown := shownError(recorded)
	marked := "order error: " + player + ": " + shown
	for _, text := range []string{shown, recorded} {
		if i := slices.Index(*lines, text); i >= 0 {
			(*lines)[i] = marked
			return
		}
	}
	*lines = append(*lines, marked)
}

// Report is how the game ended, every turn with the star map after it,
// each player's ships and stars over the turns, and each player's errors.
func (g *Game) Report(ctx context.Context, s *session.Session) (*session.ReportPart, error) {
	st := s.State().(*State)
	var scores [][]Score // per turn played
	board := func(ctx context.Context, state any) (session.Board, error) {
		scores = append(scores, state.(*State).Scores())
		return g.board(ctx, state)
	}
	part, err := s.GameReport(ctx, g.Players(), func(p string) string { return g.seatIn(st, p) }, board)
	if err != nil {
		return nil, err
	}
	part.ApplyErrors = "order errors"
	part.Ending = g.ending(st)
	part.Trends = trends(st.Players, scores)
	return part, nil
}

// ending is how the game in st ended, or where it stands: the result, and
// each player's stars, ships and order errors.
func (g *Game) ending(st *State) *session.Ending {
	e := &session.Ending{Over: st.Over(), Turns: st.Turn, MaxTurns: st.MaxTurns,
		Result: fmt.Sprintf("not over: played to turn %d of %d", st.Turn, st.MaxTurns)}
	if st.Result != nil {
		e.Result = st.Result.String()
	}
	for _, sc := range st.Scores() {
		e.Players = append(e.Players, session.EndPlayer{Player: sc.Player, Seat: g.seatIn(st, sc.Player),
			Winner: st.Result != nil && st.Result.Winner == sc.Player, Holds: count(sc.Stars, "star") + ", " + count(sc.Ships, "ship"),
			Invalid: sc.Errors, InvalidNoun: "order errors"})
	}
	return e
}

// trends are each player's ships and stars after each turn.
func trends(players []string, scores [][]Score) []session.Trend {
	ships := session.Trend{Title: "Ships per player", Unit: "ships"}
	stars := session.Trend{Title: "Stars per player", Unit: "stars"}
	for i, p := range players {
		sh, sr := make([]float64, len(scores)), make([]float64, len(scores))
		for t, sc := range scores {
			if i < len(sc) {
				sh[t], sr[t] = float64(sc[i].Ships), float64(sc[i].Stars)
			}
		}
		ships.Series = append(ships.Series, session.TrendSeries{Name: p, Values: sh})
		stars.Series = append(stars.Series, session.TrendSeries{Name: p, Values: sr})
	}
	return []session.Trend{ships, stars}
}

// board is the status of a turn's state (the map's text left out: it is
// drawn) and its star map.
func (g *Game) board(ctx context.Context, state any) (session.Board, error) {
	fields, err := g.Status(ctx, nil, state)
	if err != nil {
		return session.Board{}, err
	}
	var b session.Board
	for _, f := range fields {
		if f.Key != "map" {
			b.Fields = append(b.Fields, f)
		}
	}
	b.Map = starMap(state.(*State))
	return b, nil
}

// starMap is the stars of st on their grid, each sized by its production
// and labelled with the ships there, and the fleets in flight.
func starMap(st *State) *session.Grid {
	m := &session.Grid{Players: st.Players}
	m.Width, m.Height = st.Size()
	for _, s := range st.Stars {
		ships := s.Garrison
		for _, n := range s.Ships {
			ships += n
		}
		who := cmp.Or(s.Owner, "neutral")
		m.Points = append(m.Points, session.Point{ID: s.ID, X: s.X, Y: s.Y, Owner: s.Owner, Size: s.Production, Label: strconv.Itoa(ships),
			Title: fmt.Sprintf("%s (%d,%d): %s, production %d, %d ships", s.ID, s.X, s.Y, who, s.Production, ships)})
	}
	for _, f := range st.Fleets {
		m.Arrows = append(m.Arrows, session.Arrow{Owner: f.Owner, From: f.From, To: f.To,
			Title: fmt.Sprintf("%s: %d ships %s -> %s, arrives turn %d", f.Owner, f.Ships, f.From, f.To, f.Arrives)})
	}
	return m
}
