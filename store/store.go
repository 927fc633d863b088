// Package store keeps the run state of a simulation in an embedded SQLite
// database, <simdir>/state.db: per committed tick, the whole world state, the
// memories written, the intentions and the game master's outputs, every model
// call, the event log, the updates the apply step skipped, and the history
// exchanges of every entity. A tick is committed in one transaction, so a
// crash leaves the last committed tick intact and never half of the next.
package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// FileName is the name of the run-state database in a simulation folder.
const FileName = "state.db"

// Path returns the run-state database of the simulation in simDir.
func Path(simDir string) string { return filepath.Join(simDir, FileName) }

var (
	// ErrNoTick is returned for a tick that has not been committed.
	ErrNoTick = errors.New("tick not committed")
	// ErrTickOrder is returned by CommitTick for a tick that is not the one
	// after the last committed tick: ticks are never doubled or skipped.
	ErrTickOrder = errors.New("tick out of order")
	// ErrKind is returned by CommitTick for a tick of another simulation
	// kind than the ticks already stored.
	ErrKind = errors.New("run state of another simulation kind")
)

// Store is an open run-state database. It is safe for concurrent use, and
// several processes may open the same file (SQLite serialises the writers).
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time // clock of committed_at; replaced in tests

	scrub scrubber                   // see SetScrub
	run   atomic.Pointer[pendingRun] // see StartRun
	texts textCache                  // the texts the last commit referenced
	dicts heldDicts                  // what prepared texts are packed against
	spool *spool                     // where prepared requests wait for their commit; nil when read-only
	// textChunk, when set, is how many texts a commit holds before it
	// writes them to their blocks (textChunk; tests set a few).
	textChunk int
	seqsMu    sync.Mutex
	seqs      historySeqs // each entity's last past exchange, as of this store's last commit
	wal       walWatch
	// live is set when the database predates version 7 and is read as it
	// is (OpenReadOnly): it has no batch token columns, every call was
	// priced live.
	live bool
	// untruncated is set when the database predates version 9 and is read
	// as it is: its calls have no prompt_truncated.
	untruncated bool
	// version is the database's schema version: schemaVersion once opened
	// to write, older when read as it is (OpenReadOnly).
	version int
	last    lastState // see keepState
	// pin holds one connection open for the store's life: SQLite deletes
	// the WAL when its last connection closes, which the WAL check would
	// take for a deletion by someone else.
	pin *sql.Conn
}

// Open opens the database at path, creating the file and its schema when
// they do not exist. The database runs in WAL mode with foreign keys on,
// waits up to 5s for another writer, and takes the write lock when a
// transaction begins so that reading the last tick and committing the next
// cannot interleave with another process.
//
// Open refuses, before SQLite sees it, a state.db (or a file beside it)
// that is not a regular file (ErrNotRegularFile), and refuses a file SQLite
// finds malformed or a run state that does not hold together (ErrDamaged).
func Open(ctx context.Context, path string) (_ *Store, err error) {
	defer markDamaged(&err)
	if err := checkFiles(path); err != nil {
		return nil, err
	}
	// SQLite answers "database is locked" at once, without its busy wait,
	// when two connections open a database at the same moment and one
	// switches it to WAL or upgrades its schema: opening again shortly after
	// finds it done. Up to the busy timeout, as any other wait for a lock.
	give := time.Now().Add(busyTimeout)
	for {
		s, err := open(ctx, path)
		if err == nil || !isBusy(err) || time.Now().After(give) {
			return s, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// busyTimeout is how long a connection waits for another's lock.
const busyTimeout = 5 * time.Second

// isBusy reports whether err is SQLite's "database is locked" (SQLITE_BUSY,
// or one of its extended codes).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

func open(ctx context.Context, path string) (*Store, error) {
	params := []string{
		"_txlock=immediate",
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=foreign_keys(1)",
		// A new database's pages are 16 KiB, not 4: a commit writes each page
		// it changed to the WAL, then again into the file, a system call or
		// two each, and a tick of a large world changes tens of megabytes:
		// larger pages make fewer writes. It takes effect only before the
		// first table is made, in the journal mode a new database starts
		// in: the WAL comes after (migrate, then open).
		"_pragma=page_size(16384)",
		"_pragma=synchronous(FULL)", // a committed tick survives a power cut too
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(path)+"?"+strings.Join(params, "&"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: time.Now, version: schemaVersion, spool: &spool{dir: filepath.Dir(path), fileSize: spoolFileSize}}
	// Before anything is written: a malformed file is never migrated or
	// committed onto.
	if err := s.quickCheck(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	// WAL lasts in the file: this switches a new database, and is nothing
	// to one already in WAL.
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=WAL"); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := s.check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if s.pin, err = db.Conn(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	var mode string
	if err := s.pin.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		s.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s.wal.on = mode == "wal" // a file system without WAL support keeps a rollback journal
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	if s.spool != nil {
		s.spool.close()
	}
	if s.pin != nil {
		s.pin.Close()
	}
	return s.db.Close()
}

// migrate creates the schema in a new database, upgrades one written by an
// older game master, and refuses one written by a newer one. The version is read
// inside the write transaction, so two processes opening an old database at
// once upgrade it once.
func (s *Store) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version == schemaVersion {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch {
	case version == schemaVersion:
		return nil
	case version > schemaVersion:
		return fmt.Errorf("schema version %d is newer than this arbiter knows (%d): upgrade arbiter", version, schemaVersion)
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create schema: %w", err)
	}
	for v := version; version > 0 && v < schemaVersion; v++ {
		for _, c := range columns[v] {
			var n int
			if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM pragma_table_info(?) WHERE name = ?", c.table, c.name).Scan(&n); err != nil {
				return err
			}
			if n > 0 {
				continue // the schema has just made the table whole
			}
			decl := cmp.Or(c.decl, "INTEGER NOT NULL DEFAULT 0")
			if _, err := tx.ExecContext(ctx, "ALTER TABLE "+c.table+" ADD COLUMN "+c.name+" "+decl); err != nil {
				return fmt.Errorf("upgrade schema version %d to %d: %w", version, schemaVersion, err)
			}
		}
		if step, ok := upgrades[v]; ok {
			if _, err := tx.ExecContext(ctx, step); err != nil {
				return fmt.Errorf("upgrade schema version %d to %d: %w", version, schemaVersion, err)
			}
		}
	}
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", schemaVersion)); err != nil {
		return err
	}
	if migrateHook != nil {
		migrateHook()
	}
	return tx.Commit()
}

// migrateHook, when set (by a test), runs inside an upgrade's transaction
// just before it commits.
var migrateHook func()

// escapePath makes a file path safe inside a SQLite URI, where '?' and '#'
// would end the path and '%' starts an escape.
func escapePath(path string) string {
	return strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(filepath.ToSlash(path))
}

// Reset deletes the database at path with its WAL and shared-memory files.
// Files that do not exist are not an error. The database must not be open.
func Reset(path string) error {
	var errs []error
	for _, p := range append([]string{path}, suffixed(path)...) {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
