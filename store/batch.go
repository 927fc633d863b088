package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// BatchJob is a phase's Batch API job in flight: stored before the run
// waits for it, so that a run killed meanwhile polls the same job when it
// resumes instead of submitting (and paying for) another. The commit of its
// tick deletes it. A job is first stored without its id, before it is
// created: a run killed before it stores the id then knows a job may
// exist, and SubmittedAt, which the job's tag holds, finds it.
type BatchJob struct {
	Phase       string
	Tick        int
	JobID       string // empty until the server has created the job
	Endpoint    string // the endpoint it was submitted to (its name)
	SubmittedAt time.Time
}

// SaveBatchJob stores j in a transaction of its own, replacing the job of
// its phase and tick (its id once the server created it).
func (s *Store) SaveBatchJob(ctx context.Context, j BatchJob) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO batch_jobs (phase, tick, job_id, endpoint, submitted_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (phase, tick) DO UPDATE SET job_id = excluded.job_id, endpoint = excluded.endpoint, submitted_at = excluded.submitted_at`,
		j.Phase, j.Tick, j.JobID, j.Endpoint, j.SubmittedAt.UTC().Format(time.RFC3339Nano))
	if err != nil {
		return fmt.Errorf("store batch job %s of %s tick %d: %w", j.JobID, j.Phase, j.Tick, err)
	}
	return nil
}

// BatchJob returns the job stored for phase and tick, false when none is.
func (s *Store) BatchJob(ctx context.Context, phase string, tick int) (_ BatchJob, _ bool, err error) {
	defer markDamaged(&err)
	j := BatchJob{Phase: phase, Tick: tick}
	var at string
	err = s.db.QueryRowContext(ctx, "SELECT job_id, endpoint, submitted_at FROM batch_jobs WHERE phase = ? AND tick = ?", phase, tick).
		Scan(&j.JobID, &j.Endpoint, &at)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return BatchJob{}, false, nil
	case err != nil:
		return BatchJob{}, false, fmt.Errorf("read batch job of %s tick %d: %w", phase, tick, err)
	}
	if j.SubmittedAt, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return BatchJob{}, false, fmt.Errorf("batch job %s: submitted_at: %w", j.JobID, err)
	}
	return j, true, nil
}

// DeleteBatchJob forgets the job of phase and tick (it failed or expired:
// the next attempt submits anew).
func (s *Store) DeleteBatchJob(ctx context.Context, phase string, tick int) error {
	if _, err := s.db.ExecContext(ctx, "DELETE FROM batch_jobs WHERE phase = ? AND tick = ?", phase, tick); err != nil {
		return fmt.Errorf("delete batch job of %s tick %d: %w", phase, tick, err)
	}
	return nil
}

// HasBatchJobs reports whether a job is stored, submitted or about to be
// (a row without its id): the file holding it must outlive the run, or the
// next run would pay for the job again.
func (s *Store) HasBatchJobs(ctx context.Context) (_ bool, err error) {
	defer markDamaged(&err)
	var n int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM batch_jobs").Scan(&n); err != nil {
		return false, fmt.Errorf("read batch jobs: %w", err)
	}
	return n > 0, nil
}
