package duel

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
)

// scripted is a person at the terminal who types answers in order: each
// question's Read sees them until one reads; the problems said are kept.
type scripted struct {
	answers   []string
	problems  []string
	screens   []string
	shortcuts []session.Shortcut // of the last question
}

func (s *scripted) Ask(_ context.Context, q session.Question) (any, error) {
	s.screens = append(s.screens, q.Screen)
	s.shortcuts = q.Shortcuts
	for len(s.answers) > 0 {
		a := s.answers[0]
		s.answers = s.answers[1:]
		v, problem := q.Read(a)
		if problem == "" {
			return v, nil
		}
		s.problems = append(s.problems, problem)
	}
	return nil, context.Canceled
}

// TestTurnLogInPlainWords (issue 25 items 1-2): a turn's events say who hit
// whom for how much with the ships' names, health before → after, what was
// built and destroyed; no engine words (phase and effect constants, power
// indexes, "p1's opponent").
func TestTurnLogInPlainWords(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "bot")})
	st := g.Initial()
	guardian := give(st, P1, "Guardian", 5, 3)
	fighter := give(st, P2, "Fighter", 3, 0)
	fire := chooser{charges: func(v ChargeView) ChargeChoice {
		if v.Phase != engine.SimultaneousDeclaration {
			return ChargeChoice{}
		}
		return ChargeChoice{Fire: []engine.Declaration{{Ship: guardian.ID, Target: fighter.ID}}}
	}}
	st = turn(t, g, st, Seats{P1: fire})
	events := strings.Join(st.Log.Events, "\n")
	for _, want := range []string{
		"p1 rolls a ",
		" lines from the die: 0 → ",
		"charges: p1's Guardian p1-1 hits p2's Fighter p2-2 for 4: 3 → 0 health",
		"charges: p2's Fighter p2-2 is destroyed",
		"p1 (person) builds ",
		"p2 (bot) builds ",
	} {
		if !strings.Contains(events, want) {
			t.Errorf("turn 1's log lacks %q:\n%s", want, events)
		}
	}
	opp := chooser{charges: func(v ChargeView) ChargeChoice {
		if v.Phase != engine.SimultaneousDeclaration {
			return ChargeChoice{}
		}
		return ChargeChoice{Fire: []engine.Declaration{{Ship: guardian.ID, Target: engine.TargetOpponent}}}
	}}
	st = turn(t, g, st, Seats{P1: opp})
	events = strings.Join(st.Log.Events, "\n")
	if want := "charges: p1's Guardian p1-1 hits p2 for 4: p2's health 30 → 26"; !strings.Contains(events, want) {
		t.Errorf("turn 2's log lacks %q:\n%s", want, events)
	}
}

// TestBotGameLogHasNoEngineWords: over a whole game of bots, no event line
// reads like an engine trace, and the end-of-turn moves of health are
// told before → after.
func TestBotGameLogHasNoEngineWords(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seed": 7})
	st := g.Initial()
	var all []string
	for !st.Over() {
		st = turn(t, g, st, nil)
		all = append(all, st.Log.Events...)
	}
	var engineWords []string
	for _, p := range engine.Scheduled {
		engineWords = append(engineWords, string(p))
	}
	for _, e := range []engine.EffectType{engine.DealDamage, engine.Heal, engine.GainLines, engine.BuildShip, engine.SetDice} {
		engineWords = append(engineWords, string(e))
	}
	engineWords = append(engineWords, "power 0", "fires power", "'s opponent", "CONTINUOUS")
	for _, line := range all {
		for _, w := range engineWords {
			if strings.Contains(line, w) {
				t.Errorf("event %q has the engine word %q", line, w)
			}
		}
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"end of turn: all together, p", " → ", "Game over: "} {
		if !strings.Contains(text, want) {
			t.Errorf("the game's log lacks %q", want)
		}
	}
}

// TestPersonAskedAgainInTheSameStep (issue 25 item 1): a charge the view
// offers but the rules refuse (one ship twice) is said, with the rule and
// the ships and targets that can fire, and asked again in the same step;
// the turn then plays the next answer.
func TestPersonAskedAgainInTheSameStep(t *testing.T) {
	t.Parallel()
	g := newGame(t, map[string]any{"seats": people("person", "bot")})
	st := g.Initial()
	guardian := give(st, P1, "Guardian", 5, 3)
	fighter := give(st, P2, "Fighter", 3, 0)
	p := &scripted{answers: []string{
		"none",
		guardian.ID + " opponent, " + guardian.ID + " " + fighter.ID,
		guardian.ID + " " + fighter.ID,
	}}
	kinds := map[string]string{P1: SeatPerson, P2: SeatBot}
	next := turn(t, g, st, Seats{P1: &personSeat{p: p, seat: P1, kinds: kinds}})
	if len(p.problems) != 1 || !strings.Contains(p.problems[0], `The rules refuse it: charge declaration: ship "p1-1" spends a charge twice`) ||
		!strings.Contains(p.problems[0], "p1-1 (targets opponent, p2-2") {
		t.Errorf("problems %q, want the rule and the ships that can fire", p.problems)
	}
	if sh := next.Board.Ship(fighter.ID); !sh.Destroyed {
		t.Errorf("the answer after the refusal was not played: %+v", sh)
	}
	if len(p.screens) != 2 || !strings.Contains(p.screens[0], "p1 (you, person)") || !strings.Contains(p.screens[0], "p2 (bot)") {
		t.Errorf("screens %q: want the build and the charges, naming the seats", p.screens)
	}
}

// TestPersonSeatReadsPerson (issue 25 item 1): a configured bot seat that
// a person played reads person in the status, the export and the state
// after.
func TestPersonSeatReadsPerson(t *testing.T) {
	t.Parallel()
	g := newGame(t, nil)
	st := turn(t, g, g.Initial(), Seats{P1: chooser{}})
	fields, err := g.Status(context.Background(), nil, st)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(fields, func(f runner.Field) bool { return f.Key == P1 }); i < 0 || !strings.HasPrefix(fields[i].Value, "person;") {
		t.Errorf("status %+v: want p1 person", fields)
	}
	if i := slices.IndexFunc(fields, func(f runner.Field) bool { return f.Key == P2 }); i < 0 || !strings.HasPrefix(fields[i].Value, "bot;") {
		t.Errorf("status %+v: want p2 bot", fields)
	}
	st = turn(t, g, st, nil) // a turn of bots after: p1 was played by a person
	if !slices.Equal(st.People, []string{P1}) {
		t.Errorf("people %v, want [p1]", st.People)
	}
	if !strings.Contains(strings.Join(st.Log.Events, "\n"), "p1 (bot) builds") {
		t.Errorf("a bot's build of turn 2 should name the bot: %q", st.Log.Events)
	}
}
