package runner

import (
	"errors"
	"fmt"
	"testing"

	"github.com/arbiter-sim/arbiter/llm"
)

// TestQuorumRule: the rule alone, call by call: what drops a tick, why,
// and with which error.
func TestQuorumRule(t *testing.T) {
	t.Parallel()
	call := func(key string, err error) Call {
		return Call{Result: &llm.Result{Request: llm.Request{EntityKey: key}, Err: err}}
	}
	auth := &llm.Error{Kind: llm.KindAuth, Message: "401"}
	conn := &llm.Error{Kind: llm.KindConnection, Message: "refused"}
	quota := &llm.Error{Kind: llm.KindQuota, Message: "insufficient_quota"}
	server := &llm.Error{Kind: llm.KindServer, Message: "500"}
	miss := fmt.Errorf("no answer for it: %w", llm.ErrCassette)
	ok := call("a", nil)
	recovered := call("r", server)
	recovered.Recovered = true
	mid, final := Phase{Name: "intention"}, Phase{Name: "resolution", Final: true}
	for _, tc := range []struct {
		name        string
		p           Phase
		phase, tick []Call // tick: the calls of the phases before this one
		reason      string // "": the tick goes on
		down        error
	}{
		{"no calls at all", final, nil, nil, "", nil},
		{"every call answered", final, []Call{ok, ok}, nil, "", nil},
		{"a failure among answers", mid, []Call{ok, call("b", server)}, nil, "", nil},
		{"every call of a phase before the last failed, the endpoint working", mid, []Call{call("a", server), call("b", server)}, nil, "", nil},
		{"no call of the tick answered", final, []Call{call("x", server)}, []Call{call("a", server)}, "no model call of the tick succeeded", server},
		{"the first error of the tick is the cause", final, []Call{call("x", conn), call("y", server)}, []Call{call("a", server)}, "no model call of the tick succeeded", server},
		{"an answer in a phase before keeps the tick", final, []Call{call("x", server)}, []Call{ok}, "", nil},
		{"a recovered call keeps the tick", final, []Call{call("x", server), recovered}, nil, "", nil},
		{"every call unauthorised, a phase before the last", mid, []Call{call("a", auth), call("b", auth)}, nil, "every intention call failed and the endpoint is unusable", auth},
		{"every call unusable, the endpoint's kinds mixed", final, []Call{call("x", conn), call("y", quota)}, []Call{ok}, "every resolution call failed and the endpoint is unusable", conn},
		{"one call unusable is not the endpoint", mid, []Call{call("a", auth), ok}, nil, "", nil},
		{"unusable and a server error are not the endpoint", mid, []Call{call("a", auth), call("b", server)}, nil, "", nil},
		{"a cassette miss among answers", mid, []Call{ok, call("b", miss)}, nil, "the cassette failed the call of b", miss},
		{"a cassette miss before an unusable endpoint", final, []Call{call("x", auth), call("y", miss)}, nil, "the cassette failed the call of y", miss},
		{"an empty last phase after answers", final, nil, []Call{ok}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tick tally
			tick.add(append(tc.tick, tc.phase...)...)
			reason, down := quorum(tc.p, tc.phase, tick)
			if reason != tc.reason || !errors.Is(down, tc.down) || (down == nil) != (tc.down == nil) {
				t.Errorf("quorum = %q, %v; want %q, %v", reason, down, tc.reason, tc.down)
			}
		})
	}
}
