package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// ErrWALLost is returned by CommitTick once the database's write-ahead log
// (state.db-wal) has been deleted or replaced under an open store: SQLite
// keeps writing into the file it holds open, which no one will find again
// after a crash, so commits stop. What was committed is copied into
// state.db first (a checkpoint through the open file).
var ErrWALLost = errors.New("the write-ahead log of state.db was deleted or replaced during the run")

// walWatch remembers which file the store's WAL is, to notice when it
// changes.
type walWatch struct {
	mu    sync.Mutex
	file  fs.FileInfo // nil until the first commit
	lost  error       // set once the WAL is lost; every later commit fails with it
	saved bool        // the lost WAL's commits were copied into state.db
	on    bool        // the database is in WAL mode
}

// walSaved reports whether what was committed into a lost WAL was copied
// into state.db.
func (s *Store) walSaved() bool {
	s.wal.mu.Lock()
	defer s.wal.mu.Unlock()
	return s.wal.saved
}

// checkWAL runs before and after each commit: the WAL must be the file it
// was at the previous check (before the first commit there may be none
// yet). When it is missing or another file, the store copies what it
// committed into state.db and fails from then on: checked before a commit,
// that commit is not made, so an error always means "not committed".
func (s *Store) checkWAL(ctx context.Context) error {
	s.wal.mu.Lock()
	defer s.wal.mu.Unlock()
	if s.wal.lost != nil || !s.wal.on {
		return s.wal.lost
	}
	walPath := s.path + "-wal"
	info, err := os.Stat(walPath)
	switch {
	case s.wal.file == nil && err != nil:
		return nil // no WAL written yet
	case err == nil && (s.wal.file == nil || os.SameFile(s.wal.file, info)):
		s.wal.file = info
		return nil
	}
	what := "deleted"
	if err == nil {
		what = "replaced by another file"
	}
	saved := "the ticks committed so far were copied into state.db"
	s.wal.saved = true
	if _, cerr := s.db.ExecContext(context.WithoutCancel(ctx), "PRAGMA wal_checkpoint(TRUNCATE)"); cerr != nil {
		saved = fmt.Sprintf("copying the committed ticks into state.db failed (%v): the latest may be lost", cerr)
		s.wal.saved = false
	}
	s.wal.lost = fmt.Errorf("%w: %s was %s while arbiter held it; %s; the run stops here (is something cleaning the folder?); `arbiter run` resumes from the last tick in state.db",
		ErrWALLost, walPath, what, saved)
	return s.wal.lost
}

// checkpoint copies the WAL's committed pages into state.db and syncs it,
// after each commit: otherwise SQLite does so only when the WAL reaches
// 1,000 pages (16 MiB with our pages, several ticks of a large world), and
// a crash followed by someone deleting state.db-wal loses every tick since
// (the database opens as of the last checkpoint, without a word). So at most
// the tick being committed lives only in the WAL. FULL waits (up to the
// busy timeout) for a reader of an older snapshot, another process's
// status say, to finish. The tick is committed either way: a checkpoint
// that cannot finish now is done by the next commit's.
func (s *Store) checkpoint(ctx context.Context) {
	if !s.wal.on {
		return
	}
	s.db.ExecContext(ctx, "PRAGMA wal_checkpoint(FULL)")
}
