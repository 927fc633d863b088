package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/store"
)

// TestKillBetweenTicksLosesNothing kills a real arbiter process (SIGKILL, no
// chance to clean up) while tick 2 is in flight, then runs again: tick 1 is
// intact, tick 2 is run once, nothing is lost or doubled. Both runs play
// out of order (the default), as the crash suites check theirs do.
func TestKillBetweenTicksLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cleanEnv(t)
	sim, cmd, stdout, _ := startHeldInTick2(t)
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	// The line of tick 1 was printed when it committed, not at the end.
	if !strings.Contains(stdout.String(), "tick 1 committed: 11 calls") {
		t.Errorf("stdout of the killed run lacks tick 1's line:\n%s", stdout.String())
	}

	db, err := store.Open(context.Background(), filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	last, err := db.LastTick(context.Background())
	db.Close()
	if err != nil || last != 1 {
		t.Fatalf("after the kill: last tick %d (%v), want 1", last, err)
	}

	// The server answers again; the run resumes at tick 2.
	srv2 := fakeModel(t, nil)
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2")
	if code != 0 || !strings.Contains(out, "tick 2 committed") || !strings.Contains(out, "tick 3 committed") {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if srv2.CallCount() != 2*perTick {
		t.Errorf("resumed run made %d calls, want %d", srv2.CallCount(), 2*perTick)
	}
	db, _ = store.Open(context.Background(), filepath.Join(sim, "state.db"))
	defer db.Close()
	for tick := 1; tick <= 3; tick++ {
		calls, err := db.Calls(context.Background(), tick)
		if err != nil || len(calls) != perTick {
			t.Errorf("tick %d: %d calls (%v), want %d", tick, len(calls), err, perTick)
		}
	}
}

// TestCtrlCRollsBackTickInFlight sends SIGINT to a real arbiter process while
// tick 2 is in flight: it exits 130 promptly, tick 1 stays, tick 2 leaves nothing.
func TestCtrlCRollsBackTickInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	cleanEnv(t)
	sim, cmd, stdout, stderr := startHeldInTick2(t)
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("arbiter did not stop within 20s of Ctrl-C")
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Errorf("exit %d, want %d\nstderr:\n%s", code, ExitInterrupted, stderr.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") || !strings.Contains(stdout.String(), "tick 1 committed") {
		t.Errorf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	db, err := store.Open(context.Background(), filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if last, _ := db.LastTick(context.Background()); last != 1 {
		t.Errorf("last tick %d after Ctrl-C in tick 2, want 1", last)
	}
}

// perTick is the number of model calls of a demo-sim tick: 6 characters + 5 locations.
const perTick = 11

// startHeldInTick2 starts `arbiter run demo-sim --ticks 3` as a real process
// against a model that answers tick 1 and holds every call of tick 2, and
// returns once tick 2 is in flight. A call's tick is read from its prompt:
// out of order, a location's first call of tick 2 may come before another
// location's last of tick 1.
func startHeldInTick2(t *testing.T) (sim string, cmd *exec.Cmd, stdout, stderr *watchedOutput) {
	t.Helper()
	inFlight := make(chan struct{}, 1)
	srv := fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if promptTick(c) > 1 {
			select {
			case inFlight <- struct{}{}:
			default:
			}
			return openaitest.Hang()
		}
		return openaitest.FromSchema(nil)(c)
	})
	sim = demoCopy(t)
	cmd = exec.Command(os.Args[0], "run", sim, "--ticks", "3")
	cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1", "OPENAI_BASE_URL="+srv.URL, "ARBITER_LLM_MODEL=test-model")
	stdout, stderr = &watchedOutput{}, &watchedOutput{}
	committed := stdout.watch("tick 1 committed")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Tick 2's calls start while tick 1 commits: wait for both, tick 1's
	// line (printed once its commit returned) and a call of tick 2.
	for _, ch := range []<-chan struct{}{inFlight, committed} {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			t.Fatalf("tick 1 never committed or tick 2 never started; stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
		}
	}
	return sim, cmd, stdout, stderr
}

// watchedOutput is a process's output, safe to read while it is written,
// that says when a text first appears in it.
type watchedOutput struct {
	mu      sync.Mutex
	b       strings.Builder
	text    string
	appears chan struct{}
}

func (w *watchedOutput) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.b.Write(p)
	if w.appears != nil && strings.Contains(w.b.String(), w.text) {
		close(w.appears)
		w.appears = nil
	}
	return len(p), nil
}

func (w *watchedOutput) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// watch returns a channel closed when text appears; call it before the
// process starts writing.
func (w *watchedOutput) watch(text string) <-chan struct{} {
	ch := make(chan struct{})
	w.text, w.appears = text, ch
	return ch
}
