package main

import (
	"hash/fnv"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/session"
)

// TestRunBatch: `run --batch` plays the demo world to the state a live run
// with the same answers reaches, each phase of each tick as one Batch API
// job and no call made live; a kind whose calls cannot go as a batch
// refuses the flag before any call.
func TestRunBatch(t *testing.T) {
	cleanEnv(t)
	// An answer is a function of its prompt, not of its arrival.
	srv := fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		h := fnv.New32a()
		h.Write([]byte(c.SystemMessage() + c.LastUserMessage()))
		cc := *c
		cc.N = int(h.Sum32() % 100000)
		return openaitest.FromSchema(nil)(&cc)
	})
	live, batch := demoCopy(t), demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--ticks", "2", "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	liveCalls := srv.CallCount()
	if code, _, errOut := arbiter(t, "run", batch, "--ticks", "2", "--batch"); code != 0 {
		t.Fatalf("run --batch: exit %d\n%s", code, errOut)
	}
	if srv.BatchesCreated() != 4 {
		t.Errorf("%d batch jobs, want 4 (2 phases × 2 ticks)", srv.BatchesCreated())
	}
	for _, c := range srv.Calls()[liveCalls:] {
		if c.CustomID == "" {
			t.Errorf("call %d of the batch run was made live", c.N)
		}
	}
	for _, tick := range []string{"1", "2"} {
		_, want, _ := arbiter(t, "export", live, "--format", "json", "--tick", tick)
		code, got, errOut := arbiter(t, "export", batch, "--format", "json", "--tick", tick)
		if code != 0 || got != want || want == "" {
			t.Errorf("tick %s: batch export (exit %d, %s) differs from the live run's:\n%s\nlive:\n%s", tick, code, errOut, got, want)
		}
	}

	conquest := worldtest.Copy(t, filepath.Join(repoRoot, "simulations", "conquest-demo"))
	before := srv.CallCount()
	code, _, errOut := arbiter(t, "run", conquest, "--batch")
	if code == 0 || !strings.Contains(errOut, "Batch API") || srv.CallCount() != before {
		t.Errorf("run --batch on a conquest: exit %d, %d calls\n%s", code, srv.CallCount()-before, errOut)
	}
}

// TestProgressLineBatch: while a phase waits for its job, the progress line
// shows the job's counts, what the server wrote escaped.
func TestProgressLineBatch(t *testing.T) {
	io, _, errOut := TestStreams("")
	progressLine(io)(session.PhaseProgress{Tick: 1, LastTick: 2, Phase: "intention", Calls: 10,
		Batch: &session.BatchProgress{Job: "batch_1\x1b]0;owned\a", Status: "in_progress", Total: 10, Completed: 3, Failed: 1}})
	got := errOut.String()
	if !strings.Contains(got, "tick 1/2 · intention · batch job batch_1\\x1b]0;owned\\a in_progress · 3/10 answered, 1 failed") {
		t.Errorf("progress line = %q", got)
	}
	if strings.Contains(got, "\x1b]") {
		t.Errorf("the server's text reached the terminal raw: %q", got)
	}
}
