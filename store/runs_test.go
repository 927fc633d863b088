package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRunsRoundTrip: a run's manifest is stored with its first commit,
// later commits move its last tick, and a new run (another StartRun) gets
// a row of its own.
func TestRunsRoundTrip(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	at := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s.now = func() time.Time { return at }
	first := json.RawMessage(`{"base_url":"http://h/v1","seed":7}`)
	if err := s.StartRun(first); err != nil {
		t.Fatal(err)
	}
	if runs, err := s.Runs(t.Context()); err != nil || len(runs) != 0 {
		t.Fatalf("Runs before any commit = %+v, %v; want none (a run that commits nothing leaves no row)", runs, err)
	}
	commit(t, s, record(1), record(2))
	if err := s.StartRun(json.RawMessage(`{"seed":8}`)); err != nil {
		t.Fatal(err)
	}
	commit(t, s, record(3))

	runs, err := s.Runs(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []Run{
		{N: 1, StartedAt: at, FirstTick: 1, LastTick: 2, Manifest: first},
		{N: 2, StartedAt: at, FirstTick: 3, LastTick: 3, Manifest: json.RawMessage(`{"seed":8}`)},
	}
	if len(runs) != len(want) {
		t.Fatalf("Runs = %+v, want %+v", runs, want)
	}
	for i := range want {
		got := runs[i]
		if got.N != want[i].N || !got.StartedAt.Equal(want[i].StartedAt) || got.FirstTick != want[i].FirstTick ||
			got.LastTick != want[i].LastTick || string(got.Manifest) != string(want[i].Manifest) {
			t.Errorf("run %d = %+v, want %+v", i+1, got, want[i])
		}
	}
}

// TestRunRolledBackWithItsTick: a commit that fails writes no run row, and
// the run's row is written by the next commit that succeeds.
func TestRunRolledBackWithItsTick(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	if err := s.StartRun(json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitTick(t.Context(), record(2)); !errors.Is(err, ErrTickOrder) {
		t.Fatalf("CommitTick(2) first = %v, want ErrTickOrder", err)
	}
	if runs, _ := s.Runs(t.Context()); len(runs) != 0 {
		t.Fatalf("a failed commit left a run: %+v", runs)
	}
	commit(t, s, record(1))
	if runs, err := s.Runs(t.Context()); err != nil || len(runs) != 1 || runs[0].FirstTick != 1 || runs[0].LastTick != 1 {
		t.Fatalf("Runs = %+v, %v; want one run of tick 1", runs, err)
	}
}

func TestStartRunRefusesBadManifest(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	if err := s.StartRun(json.RawMessage(`{"no`)); err == nil || !strings.Contains(err.Error(), "not JSON") {
		t.Fatalf("StartRun of broken JSON = %v, want an error", err)
	}
	commit(t, s, record(1))
	if runs, _ := s.Runs(t.Context()); len(runs) != 0 {
		t.Errorf("a refused manifest was stored: %+v", runs)
	}
}

// TestRunManifestScrubbed: the manifest passes through the store's scrubber
// like every other text it writes.
func TestRunManifestScrubbed(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	s.SetScrub(func(text string) string { return strings.ReplaceAll(text, "sk-secret", "[redacted]") })
	if err := s.StartRun(json.RawMessage(`{"note":"sk-secret"}`)); err != nil {
		t.Fatal(err)
	}
	commit(t, s, record(1))
	runs, err := s.Runs(t.Context())
	if err != nil || len(runs) != 1 || strings.Contains(string(runs[0].Manifest), "sk-secret") || !strings.Contains(string(runs[0].Manifest), "[redacted]") {
		t.Fatalf("Runs = %+v, %v; want the secret scrubbed", runs, err)
	}
}
