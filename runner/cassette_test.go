package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	. "github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// TestCassetteMissStopsTheTick: one call of a phase that the replay
// cassette has no answer for stops the run as an endpoint failure does
// (quorum_failure), though every other call of the phase was answered: the
// tick is not committed, the last committed tick is kept, and the error
// names the entity and the tick.
func TestCassetteMissStopsTheTick(t *testing.T) {
	h := newHarness(t, openaitest.FromSchema(nil))
	path := filepath.Join(t.TempDir(), "run.jsonl")
	tape, err := llm.RecordCassette(path)
	if err != nil {
		t.Fatal(err)
	}
	r, st := h.runner(Config{})
	setClient(r, cassetteClient(t, h.srv.URL, tape))
	if _, err := r.Run(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	if err := tape.Close(); err != nil {
		t.Fatal(err)
	}
	recorded := stateAt(t, r, st, 1)

	// Drop bo's intention of tick 2 from the cassette.
	b, _ := os.ReadFile(path)
	var kept []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.Contains(line, `"entity":"intention:bo","phase":"intention","tick":2`) {
			kept = append(kept, line)
		}
	}
	if len(kept) != 11 {
		t.Fatalf("%d lines kept of the 12 calls of two ticks", len(kept))
	}
	os.WriteFile(path, []byte(strings.Join(kept, "\n")+"\n"), 0o600)

	h.dbPath = filepath.Join(t.TempDir(), "state.db")
	sent := h.srv.CallCount()
	play, err := llm.ReplayCassette(path, false)
	if err != nil {
		t.Fatal(err)
	}
	r, st = h.runner(Config{})
	setClient(r, cassetteClient(t, "", play))
	rep, err := r.Run(context.Background(), 2)
	var qe *QuorumError
	if !errors.As(err, &qe) || qe.Tick != 2 || !errors.Is(err, llm.ErrCassette) {
		t.Fatalf("err = %v, want a quorum failure at tick 2 caused by the cassette", err)
	}
	for _, want := range []string{"tick 2 not committed", "the cassette failed the call of intention:bo", "no recorded answer for intention:bo at tick 2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if rep.Stop != StopQuorum || lastTick(t, st) != 1 || h.srv.CallCount() != sent {
		t.Errorf("stop %q, last tick %d, %d requests sent; want quorum_failure after tick 1, none sent", rep.Stop, lastTick(t, st), h.srv.CallCount()-sent)
	}
	if got := stateAt(t, r, st, 1); !sameState(got, recorded) {
		t.Errorf("replayed tick 1 differs from the recorded one:\n got %+v\nwant %+v", got, recorded)
	}
	// A location's game master may start as soon as its characters' intentions
	// are in, so the garden's and the cellar's may have been answered before
	// the tick stopped; the hall's never is (it would carry bo's fallback,
	// which is not what was recorded).
	if n := play.Unused(); n < 1 || n > 3 {
		t.Errorf("%d answers unused, want 1 to 3 of tick 2's resolutions (the hall's at least)", n)
	}
}

func cassetteClient(t *testing.T, url string, tape *llm.Cassette) *llm.Client {
	t.Helper()
	cfg := llm.DefaultConfig()
	cfg.BaseURL, cfg.Cassette = url, tape
	cfg.MaxAttempts, cfg.BackoffBase, cfg.BackoffMax, cfg.Timeout = 1, time.Millisecond, time.Millisecond, 5*time.Second
	c, err := llm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// sameState compares two states as export prints them.
func sameState(a, b *world.State) bool {
	ja, erra := json.Marshal(a)
	jb, errb := json.Marshal(b)
	return erra == nil && errb == nil && string(ja) == string(jb)
}
