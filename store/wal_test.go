package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeletedWALNoticed: a WAL deleted while the store is open is noticed
// at the next commit, which fails with ErrWALLost naming the file and
// commits nothing; the ticks committed before are copied into state.db
// first, so none is lost, and none is reported committed that is not.
func TestDeletedWALNoticed(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1))
	if err := os.Remove(path + "-wal"); err != nil {
		t.Fatal(err)
	}
	err := s.CommitTick(t.Context(), record(2))
	if !errors.Is(err, ErrWALLost) || !strings.Contains(err.Error(), path+"-wal") {
		t.Fatalf("err = %v, want ErrWALLost naming the WAL", err)
	}
	if err := s.CommitTick(t.Context(), record(3)); !errors.Is(err, ErrWALLost) {
		t.Errorf("a later commit: err = %v, want ErrWALLost", err)
	}
	s.Close()
	r, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if last, err := r.LastTick(t.Context()); err != nil || last != 1 {
		t.Errorf("after reopening: last tick %d, %v; want 1 (tick 1 committed, tick 2 refused)", last, err)
	}
}

// TestWALKeptAcrossCommits: ordinary commits never trip the check.
func TestWALKeptAcrossCommits(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	for i := 1; i <= 20; i++ {
		commit(t, s, record(i))
	}
}

// TestDeletedWALAfterCrashKeepsCommittedTicks: each commit is checkpointed
// into state.db, so a crash followed by someone deleting state.db-wal loses
// no tick that CommitTick returned: the database file as it stands while
// the store is still open (what a SIGKILL leaves), without its WAL, holds
// every tick. Before, SQLite checkpointed at 1,000 pages (16 MiB), and a
// run of small ticks kept all of them only in the WAL.
func TestDeletedWALAfterCrashKeepsCommittedTicks(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	for i := 1; i <= 6; i++ {
		commit(t, s, record(i))
		b, err := os.ReadFile(path) // the file alone: no -wal, no -shm
		if err != nil {
			t.Fatal(err)
		}
		crashed := filepath.Join(t.TempDir(), FileName)
		if err := os.WriteFile(crashed, b, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := OpenReadOnly(t.Context(), crashed)
		if err != nil {
			t.Fatalf("after tick %d: %v", i, err)
		}
		last, err := r.LastTick(t.Context())
		r.Close()
		if err != nil || last != i {
			t.Fatalf("after committing tick %d and losing the WAL: last tick %d, %v", i, last, err)
		}
	}
}
