package session_test

import (
	"context"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/session"
)

// TestPromptPrefixes: after a tick, each phase's system prompts share their
// start (the premise and instructions) and differ at the end (the character
// or place); before the first commit, and for a tick not committed, there
// is nothing to measure.
func TestPromptPrefixes(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	ctx := context.Background()
	r, err := session.Open(ctx, dir, session.Settings{Depth: 3}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.PromptPrefixes(ctx, 1); err != nil || len(got) != 0 {
		t.Errorf("before any run: %+v, %v; want none", got, err)
	}
	r.Close()

	s, err := session.Open(ctx, dir, settings(t, openaitest.FromSchema(nil)), session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Run(ctx, 1); err != nil {
		t.Fatal(err)
	}
	got, err := s.PromptPrefixes(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		phase string
		calls int
	}{{"intention", 6}, {"resolution", 5}}
	if len(got) != len(want) {
		t.Fatalf("PromptPrefixes(1) = %+v, want intention and resolution", got)
	}
	for i, w := range want {
		p := got[i]
		if p.Phase != w.phase || p.Calls != w.calls || p.Shared <= 0 || p.Shared >= p.Mean {
			t.Errorf("phase %d: %+v; want %s, %d calls, a shared start shorter than the mean prompt", i, p, w.phase, w.calls)
		}
	}
	if got, err := s.PromptPrefixes(ctx, 2); err != nil || len(got) != 0 {
		t.Errorf("a tick not committed: %+v, %v; want none", got, err)
	}
}
