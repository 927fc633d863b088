package phases

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
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

func narrativeOf(t *testing.T, sim *world.Simulation, maxCharacters int) *Narrative {
	t.Helper()
	pr, err := prompts.New("")
	if err != nil {
		t.Fatal(err)
	}
	return &Narrative{Sim: sim, Prompts: pr, Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048},
		MaxCharacters: maxCharacters}
}

// TestValidateWarnsWhenALocationCouldNeedSeveralCalls: no world is refused
// for its size; validate warns, naming the location, the crowd, the limit
// and the calls it could take, when more characters can gather in a
// location than one resolution call resolves.
func TestValidateWarnsWhenALocationCouldNeedSeveralCalls(t *testing.T) {
	t.Parallel()
	n := narrativeOf(t, crowd(1000), 0)
	if errs := n.Lint(); len(errs) > 0 {
		t.Fatalf("1,003 characters that can meet in one location: lint refused: %v", errs)
	}
	per, err := perCallOf(0, 0)
	if err != nil || per != 64 {
		t.Fatalf("perCallOf(0, 0) = %d, %v; want 64 (16,384 output tokens at 300 + 250 per character)", per, err)
	}
	warns := n.Warnings()
	if len(warns) != 1 {
		t.Fatalf("warnings = %v, want one", warns)
	}
	msg := warns[0].Error()
	for _, want := range []string{"1003 characters can gather in location cellar", "(and 2 other locations", "(64, phases.resolution.max_characters", "up to 16 calls"} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q does not say %q", msg, want)
		}
	}
	if w := narrativeOf(t, crowd(60), 0).Warnings(); w != nil {
		t.Errorf("63 characters fit one call: warnings %v", w)
	}
	if w := narrativeOf(t, crowd(60), 10).Warnings(); len(w) != 1 || !strings.Contains(w[0].Error(), "up to 7 calls") {
		t.Errorf("63 characters, max_characters 10: warnings %v, want up to 7 calls", w)
	}
}

// TestMaxCharactersWithinTheOutputBudget: max_characters may not ask a
// call for more tokens than llm.max_output_tokens allows, and the default
// is the most that fits it.
func TestMaxCharactersWithinTheOutputBudget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		maxChars, maxOut, want int
		err                    string
	}{
		{0, 0, 64, ""},
		{0, 4096, 15, ""},
		{10, 4096, 10, ""},
		{16, 4096, 0, "phases.resolution.max_characters 16: an answer for that many may take 4300 tokens, more than llm.max_output_tokens 4096"},
		{0, 500, 0, "llm.max_output_tokens 500: a game master's answer for one character may take 550 tokens"},
		{-1, 0, 0, "must not be negative"},
		{0, 1 << 30, 0, ""}, // the schema's limit, below
	} {
		got, err := perCallOf(tc.maxChars, tc.maxOut)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("perCallOf(%d, %d) = %d, %v; want error %q", tc.maxChars, tc.maxOut, got, err, tc.err)
			}
		case tc.want == 0:
			if fit, _ := MaxPresent(); err != nil || got != fit {
				t.Errorf("perCallOf(%d, %d) = %d, %v; want the schema's limit %d", tc.maxChars, tc.maxOut, got, err, fit)
			}
		case err != nil || got != tc.want:
			t.Errorf("perCallOf(%d, %d) = %d, %v; want %d", tc.maxChars, tc.maxOut, got, err, tc.want)
		}
		if err == nil && resolutionTokens(got) > max(tc.maxOut, DefaultMaxOutputTokens*map[bool]int{true: 1, false: 0}[tc.maxOut == 0]) {
			t.Errorf("perCallOf(%d, %d) = %d: an answer may take %d tokens", tc.maxChars, tc.maxOut, got, resolutionTokens(got))
		}
	}
	n := narrativeOf(t, worldtest.House(), 100)
	if errs := n.Lint(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "phases.resolution.max_characters 100") {
		t.Errorf("lint of max_characters 100 = %v, want it refused", errs)
	}
}

// TestGroupsAreEvenAndCoverTheCrowd: a crowd is cut into as few groups as
// the limit allows, consecutive and as even as can be.
func TestGroupsAreEvenAndCoverTheCrowd(t *testing.T) {
	t.Parallel()
	ids := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("c%04d", i)
		}
		return out
	}
	for _, tc := range []struct{ n, per int }{{0, 64}, {1, 64}, {64, 64}, {65, 64}, {1200, 64}, {7, 3}, {5, 1}} {
		present := ids(tc.n)
		gs := Groups(present, tc.per)
		wantCalls := max(1, (tc.n+tc.per-1)/tc.per)
		if len(gs) != wantCalls {
			t.Errorf("Groups(%d, %d): %d groups, want %d", tc.n, tc.per, len(gs), wantCalls)
		}
		var all []string
		small, large := tc.n, 0
		for i, g := range gs {
			if g.Call != i+1 || g.Calls != len(gs) {
				t.Errorf("Groups(%d, %d)[%d] is call %d of %d", tc.n, tc.per, i, g.Call, g.Calls)
			}
			if len(g.IDs) > tc.per {
				t.Errorf("Groups(%d, %d)[%d] has %d ids", tc.n, tc.per, i, len(g.IDs))
			}
			small, large = min(small, len(g.IDs)), max(large, len(g.IDs))
			all = append(all, g.IDs...)
		}
		if large-small > 1 {
			t.Errorf("Groups(%d, %d): sizes %d..%d", tc.n, tc.per, small, large)
		}
		if !slices.Equal(all, present) && tc.n > 0 {
			t.Errorf("Groups(%d, %d) do not cover the crowd in order", tc.n, tc.per)
		}
	}
	if GroupKey("hall", 1) != "resolution:hall" || GroupKey("hall", 3) != "resolution:hall/3" {
		t.Errorf("GroupKey = %q, %q", GroupKey("hall", 1), GroupKey("hall", 3))
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
