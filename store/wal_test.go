package store

import (
	"errors"
	"os"
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
