package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
)

// TestChatShowsTheModelWorking: while the model writes, the status line
// (stderr on a terminal) counts the seconds and is cleared after; the
// conversation on stdout has none of it, and each prompt carries the number
// the typed message gets.
func TestChatShowsTheModelWorking(t *testing.T) {
	t.Parallel()
	g := newGlass(t)
	s, _ := g.open(t.Context(), openaitest.Always(openaitest.Content("The glass hums.").WithDelay(700*time.Millisecond)))
	defer s.Close()
	var out, status bytes.Buffer
	c := &chat{s: s, conv: s.Chat(), in: strings.NewReader("Begin.\n/raw 2\n"), out: &out, status: &status}
	if err := c.run(t.Context()); err != nil {
		t.Fatal(err)
	}
	st := status.String()
	if n := strings.Count(st, "model is writing… "); n < 3 || !strings.HasSuffix(st, "\r\033[K") || !strings.Contains(st, "model is writing… 0.0s") {
		t.Errorf("status line (%d updates) = %q", n, st)
	}
	if strings.Contains(out.String(), "model is writing") {
		t.Errorf("the status reached stdout:\n%s", out.String())
	}
	texttest.InOrder(t, out.String(), "[1] you> ", "[2] model:\n  The glass hums.", "[3] you> ", "[2] model, as written:\nThe glass hums.", "[3] you> ")
}

// TestChatOnANarrative points at arbiter run.
func TestChatOnANarrative(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	code, _, errOut := arbiter(t, "chat", sim)
	if code != ExitUsage || !strings.Contains(errOut, "is a narrative simulation: `arbiter run "+sim+"` runs its ticks") {
		t.Errorf("chat on demo-sim: exit %d\n%s", code, errOut)
	}
}
