package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Run is one invocation of a command that committed ticks, as stored: its
// manifest (JSON, as the caller gave it, scrubbed of secrets) and the ticks
// it committed.
type Run struct {
	N         int             `json:"run"` // 1 for the simulation's first run
	StartedAt time.Time       `json:"started_at"`
	FirstTick int             `json:"first_tick"`
	LastTick  int             `json:"last_tick"`
	Manifest  json.RawMessage `json:"manifest"`
}

// pendingRun is the manifest of the run in progress: written with the
// run's first commit, its last tick moved on by each later one.
type pendingRun struct {
	mu        sync.Mutex
	manifest  string
	startedAt time.Time
	id        int64 // 0 until the first commit stored the row
}

// StartRun sets the manifest of the run this store is opened for. Nothing is
// written yet: the manifest is stored in the transaction of the run's first
// commit, so a run that commits nothing leaves no row, and each later commit
// records that it belongs to the run. The manifest passes through the
// scrubber (SetScrub) like everything the store writes.
func (s *Store) StartRun(manifest json.RawMessage) error {
	if !json.Valid(manifest) {
		return errors.New("start run: the manifest is not JSON")
	}
	s.run.Store(&pendingRun{manifest: string(manifest), startedAt: s.now()})
	return nil
}

// writeRun adds the commit of tick to the run in progress, inside the
// commit's transaction; done is called once the transaction commits.
func (s *Store) writeRun(w *tickWriter) (done func()) {
	p := s.run.Load()
	if p == nil || w.err != nil {
		return func() {}
	}
	p.mu.Lock()
	id := p.id
	p.mu.Unlock()
	if id != 0 {
		w.exec("runs", "UPDATE runs SET last_tick = ? WHERE id = ?", w.tick, id)
		return func() {}
	}
	err := w.tx.QueryRowContext(w.ctx, `INSERT INTO runs (started_at, first_tick, last_tick, manifest_json)
		VALUES (?, ?, ?, ?) RETURNING id`,
		p.startedAt.UTC().Format(time.RFC3339Nano), w.tick, w.tick, s.clean(p.manifest)).Scan(&id)
	if err != nil {
		w.err = fmt.Errorf("write runs: %w", err)
		return func() {}
	}
	return func() {
		p.mu.Lock()
		p.id = id
		p.mu.Unlock()
	}
}

// Runs returns every stored run, oldest first, numbered from 1.
func (s *Store) Runs(ctx context.Context) (_ []Run, err error) {
	defer markDamaged(&err)
	runs := []Run{}
	err = s.scan(ctx, func(scan func(...any) error) error {
		var (
			r        Run
			at, body string
		)
		if err := scan(&at, &r.FirstTick, &r.LastTick, &body); err != nil {
			return err
		}
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			return fmt.Errorf("run %d: started_at: %w", len(runs)+1, err)
		}
		r.N, r.StartedAt, r.Manifest = len(runs)+1, t, json.RawMessage(body)
		runs = append(runs, r)
		return nil
	}, "SELECT started_at, first_tick, last_tick, manifest_json FROM runs ORDER BY id")
	if err != nil {
		return nil, fmt.Errorf("read runs: %w", err)
	}
	return runs, nil
}
