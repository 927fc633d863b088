package phases

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/arbiter-sim/arbiter/world"
)

// crowd returns the test house with n more characters, half in the hall and
// half in the garden: no location starts past the schema limits, but all of
// them can walk into one.
func crowd(n int) *world.Simulation {
	sim := worldtest.House()
	for i := range n {
		loc := "hall"
		if i%2 == 1 {
			loc = "garden"
		}
		sim.Characters = append(sim.Characters, &world.Character{ID: fmt.Sprintf("c%04d", i), Name: "C", Description: "d",
			Start: world.CharacterState{Location: loc, InternalState: "i", ExternalIntent: "e"}})
	}
	return sim
}

func lintOf(t *testing.T, sim *world.Simulation) []error {
	t.Helper()
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	n := &Narrative{Sim: sim, Prompts: pr, Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
	return n.Lint()
}

// TestLintRefusesWorldThatCanCrowd: validate (and run, which lints first)
// refuses a world whose characters could all gather in one location past
// strict mode's property limit, naming the limit, before any call is paid.
func TestLintRefusesWorldThatCanCrowd(t *testing.T) {
	t.Parallel()
	errs := lintOf(t, crowd(1000))
	if len(errs) == 0 {
		t.Fatal("1,003 characters that can meet in one location: lint passed")
	}
	if testing.Verbose() {
		t.Log(errs[0])
	}
	msg := errs[0].Error()
	for _, want := range []string{"1003 characters", fmt.Sprint(schemas.MaxProperties), "at most"} {
		if !strings.Contains(msg, want) {
			t.Errorf("lint error %q does not say %q", msg, want)
		}
	}
	if errs := lintOf(t, crowd(100)); len(errs) > 0 {
		t.Errorf("103 characters fit one call's schema: %v", errs)
	}
}

// TestResolutionErrorPrefixOnce: each layer adds only what it knows.
func TestResolutionErrorPrefixOnce(t *testing.T) {
	t.Parallel()
	sim := crowd(1000)
	for _, c := range sim.Characters {
		c.Start.Location = "hall"
	}
	pr, _ := prompts.New("")
	env := Env{Sim: sim, Prompts: pr, Params: llm.Params{Model: "m", MaxTokens: 2048}}
	_, err := ResolutionRequest(env, prompts.NewSnapshot(sim, sim.InitialState()), sim.Location("hall"), nil)
	if err == nil {
		t.Fatal("want a schema error")
	}
	if n := strings.Count(err.Error(), "resolution schema for hall"); n != 1 {
		t.Errorf("prefix said %d times: %v", n, err)
	}
}

// TestWarnsFallback: a fallback is warned about unless the run was
// interrupted or the cassette failed the call (the tick then stops).
func TestWarnsFallback(t *testing.T) {
	t.Parallel()
	server := &llm.Error{Kind: llm.KindServer, Message: "500"}
	cassette := fmt.Errorf("replay: no recorded answer for intention:ada at tick 2: %w", llm.ErrCassette)
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		err  error
		want bool
	}{
		{"server error", t.Context(), server, true},
		{"cassette miss", t.Context(), cassette, false},
		{"interrupted", cancelled, server, false},
	} {
		if got := warnsFallback(tc.ctx, tc.err); got != tc.want {
			t.Errorf("%s: warnsFallback = %v, want %v", tc.name, got, tc.want)
		}
	}
}
