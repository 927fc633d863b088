package session

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/arbiter-sim/arbiter/manifest"
)

// Run is one run of a simulation: the ticks it committed, and the
// manifest of what it ran with, which DiffRuns compares.
type Run struct {
	Simulation string    `json:"simulation"`
	Dir        string    `json:"dir"`
	Run        int       `json:"run"` // 1 for the simulation's first run
	FirstTick  int       `json:"first_tick"`
	LastTick   int       `json:"last_tick"`
	StartedAt  time.Time `json:"started_at"`
	manifest   json.RawMessage
}

func (r Run) String() string {
	return fmt.Sprintf("%s run %d (ticks %d..%d)", r.Simulation, r.Run, r.FirstTick, r.LastTick)
}

// Runs lists the runs stored in the simulation's state.db, oldest first;
// none before the first commit.
func (s *Session) Runs(ctx context.Context) ([]Run, error) {
	if s.store == nil {
		return []Run{}, nil
	}
	stored, err := s.store.Runs(ctx)
	if err != nil {
		return nil, err
	}
	runs := make([]Run, len(stored))
	for i, r := range stored {
		runs[i] = Run{Simulation: s.Sim.ID, Dir: s.Dir, Run: r.N, FirstTick: r.FirstTick, LastTick: r.LastTick, StartedAt: r.StartedAt, manifest: r.Manifest}
	}
	return runs, nil
}

// RunsDiff is what changed from run A to run B: the arbiter build, base
// URL, models, templates, schemas, seed and configuration.
type RunsDiff struct {
	A       Run               `json:"a"`
	B       Run               `json:"b"`
	Same    bool              `json:"same"`
	Changes []manifest.Change `json:"changes"`
}

// DiffRuns compares the manifests of runs a and b, of one simulation or
// two.
func DiffRuns(a, b Run) (*RunsDiff, error) {
	ma, err := a.readManifest()
	if err != nil {
		return nil, err
	}
	mb, err := b.readManifest()
	if err != nil {
		return nil, err
	}
	d := &RunsDiff{A: a, B: b, Changes: manifest.Diff(ma, mb)}
	d.Same = len(d.Changes) == 0
	if d.Changes == nil {
		d.Changes = []manifest.Change{}
	}
	return d, nil
}

// Manifest is what the run ran with, as stored with its first tick.
func (r Run) Manifest() (*manifest.Manifest, error) { return r.readManifest() }

func (r Run) readManifest() (*manifest.Manifest, error) {
	var m manifest.Manifest
	if err := json.Unmarshal(r.manifest, &m); err != nil {
		return nil, fmt.Errorf("%s: run %d: manifest: %w", r.Dir, r.Run, err)
	}
	return &m, nil
}
