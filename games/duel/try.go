package duel

import (
	"context"
	"errors"
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// A model seat's first call of a turn can be made outside a game (`prompts
// try`, `eval`): session.Caller.
var _ session.Caller = (*Game)(nil)

// capture is the first model call of a seat in a turn, caught by playing
// the turn from its committed state (the same dice, as its random state is
// stored) up to that call: the request and how the game reads its answer.
type capture struct {
	seat   string
	req    llm.Request
	accept func(raw []byte) error
}

// errCaptured stops a turn played for a capture at the captured call.
var errCaptured = errors.New("duel: the seat's first model call is captured")

// CallPhases: build, the first call a model seat makes in a turn (its
// charges come later in the turn, after the dice and the builds).
func (g *Game) CallPhases() []string { return []string{PhaseBuild} }

// Entities are the two seats.
func (g *Game) Entities(phase string, _ any) ([]string, error) {
	if phase != PhaseBuild {
		return nil, &session.InputError{Err: fmt.Errorf("phase %q: a duel seat's first call of a turn is %s (its charges depend on the builds and dice before them)", phase, PhaseBuild)}
	}
	return []string{P1, P2}, nil
}

// capture plays turn q.Tick+1 from q.State, every seat but q.Entity a bot,
// up to q.Entity's first model call.
func (g *Game) capture(ctx context.Context, q session.RequestQuery) (*capture, error) {
	if q.Entity != P1 && q.Entity != P2 {
		return nil, &session.InputError{Err: fmt.Errorf("entity %q: a duel's seats are %s and %s", q.Entity, P1, P2)}
	}
	c := &capture{seat: q.Entity}
	_, err := g.play(ctx, q.State.(*State), &seats{g: g, capture: c})
	switch {
	case errors.Is(err, errCaptured):
		c.req.Tick = q.Tick + 1
		return c, nil
	case err != nil:
		return nil, &session.InputError{Err: err}
	}
	return nil, &session.InputError{Err: fmt.Errorf("turn %d: %s makes no model call (nothing to build)", q.Tick+1, q.Entity)}
}

// CallAt is the seat's build call of turn q.Tick+1, as the turn asks it.
func (g *Game) CallAt(ctx context.Context, q session.RequestQuery) (*session.Call, error) {
	c, err := g.capture(ctx, q)
	if err != nil {
		return nil, err
	}
	c.req.Past = []llm.Exchange{}
	return session.StructuredCall(c.req), nil
}

// Judge reads the answer as the turn does: a build the rules refuse is
// rejected and the bot's choice used.
func (g *Game) Judge(q session.RequestQuery, res llm.Result) session.Verdict {
	v := session.Verdict{Problems: []string{}, Changes: []string{}}
	if res.Err != nil {
		v.Fallback = true
		v.Problems = append(v.Problems, fmt.Sprintf("the call failed (%s): the bot's choice is used", llm.ErrorKindOf(res.Err)))
		return v
	}
	c, err := g.capture(context.Background(), q)
	if err != nil {
		v.Problems = append(v.Problems, err.Error())
		return v
	}
	if err := c.accept(res.Output); err != nil {
		v.Fallback = true
		v.Problems = append(v.Problems, err.Error()+"; the bot's choice is used")
		return v
	}
	v.Changes = append(v.Changes, fmt.Sprintf("%s builds: %s", q.Entity, res.Output))
	return v
}

// Assertions: a duel has none of its own.
func (g *Game) Assertions() map[string]session.KindAssertion { return nil }
