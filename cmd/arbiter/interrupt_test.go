package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestInterruptPrintsNoFallbacks: Ctrl-C during a tick's calls rolls the
// tick back; the calls it cut short are not reported as fallbacks, since
// nothing of that tick is kept.
func TestInterruptPrintsNoFallbacks(t *testing.T) {
	cleanEnv(t)
	inFlight := make(chan struct{}, 2) // the first two calls of tick 2 to hang
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if promptTick(c) > 1 { // out of order, tick 2 may start before tick 1's last call
			select {
			case inFlight <- struct{}{}:
			default:
			}
			return openaitest.Hang()
		}
		return openaitest.FromSchema(nil)(c)
	})
	sim := demoCopy(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ios, _, errOut := TestStreams("")
	out := &watch{want: "tick 1 committed", seen: make(chan struct{})}
	ios.Out = out
	done := make(chan int, 1)
	go func() { done <- Execute(ctx, ios, []string{"run", sim, "--ticks", "3"}) }()
	// Ctrl-C once tick 1 is stored and two calls of tick 2 hang (of its 6
	// intentions, 4 at a time), so that it cuts several short.
	for _, wait := range []chan struct{}{inFlight, inFlight, out.seen} {
		select {
		case <-wait:
		case <-time.After(30 * time.Second):
			t.Fatalf("tick 1 was not committed, or tick 2's calls did not go out\nstdout:\n%s", out)
		}
	}
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("run did not stop within 20s of Ctrl-C")
	}
	if code != ExitInterrupted || !strings.Contains(out.String(), "tick 1 committed") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if strings.Contains(errOut.String(), "fallback") {
		t.Errorf("fallback warnings after Ctrl-C:\n%s", errOut)
	}
	if !strings.Contains(errOut.String(), "nterrupted") {
		t.Errorf("stderr does not say the run was interrupted:\n%s", errOut)
	}
}

// TestPhaseDeadlineStillWarnsFallbacks: calls cut short by the phase
// deadline (not Ctrl-C) fall back and say so.
func TestPhaseDeadlineStillWarnsFallbacks(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "Pip") {
			return openaitest.Hang()
		}
		return openaitest.FromSchema(nil)(c)
	})
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "run", sim, "--phase-timeout", "300ms")
	if code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "Phase 1: pip fallback") {
		t.Errorf("no fallback warning for the call the deadline cut:\n%s", errOut)
	}
}

// watch is a stdout that closes seen once what was written holds want.
type watch struct {
	want string
	seen chan struct{}

	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *watch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	had := strings.Contains(w.buf.String(), w.want)
	n, err := w.buf.Write(p)
	if !had && strings.Contains(w.buf.String(), w.want) {
		close(w.seen)
	}
	return n, err
}

func (w *watch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
