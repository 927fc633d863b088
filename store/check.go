package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

var (
	// ErrNoRunState is returned by OpenReadOnly for a state.db that does not
	// exist or holds no run state yet (an empty file): there is nothing to
	// read, and a read never creates it.
	ErrNoRunState = errors.New("no run state yet")
	// ErrDamaged is returned when opening a run state whose ticks do not
	// hold together: a file SQLite finds malformed (PRAGMA quick_check), a
	// tick row missing below the last, or a last stored state that is not
	// JSON or names another tick than its row. A run must not resume from
	// it, nor commit onto it. Any error of SQLite's saying the file is
	// malformed, whenever it comes, wraps it too, with the way out.
	ErrDamaged = errors.New("the run state is damaged")
)

// recovery is what a person can do about damaged run state.
const recovery = "`arbiter reset` deletes the run state and starts over (authored files are kept); or restore state.db from a copy"

// OpenReadOnly opens the database at path for reading only: it creates
// nothing, migrates nothing and writes nothing (a commit through it fails).
// A missing or empty database is ErrNoRunState; a damaged one ErrDamaged.
func OpenReadOnly(ctx context.Context, path string) (_ *Store, err error) {
	defer markDamaged(&err)
	if err := checkFiles(path); err != nil {
		return nil, err
	}
	info, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) || err == nil && info.Size() == 0 {
		return nil, fmt.Errorf("open %s: %w", path, ErrNoRunState)
	}
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	params := []string{
		"mode=ro",
		fmt.Sprintf("_pragma=busy_timeout(%d)", busyTimeout.Milliseconds()),
		"_pragma=query_only(1)",
	}
	db, err := sql.Open("sqlite", "file:"+escapePath(path)+"?"+strings.Join(params, "&"))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	s := &Store{db: db, path: path, now: time.Now}
	if err := s.openedReadOnly(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return s, nil
}

func (s *Store) openedReadOnly(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	switch {
	case version == 0:
		return ErrNoRunState
	case version > schemaVersion:
		return fmt.Errorf("schema version %d is newer than this arbiter knows (%d): upgrade arbiter", version, schemaVersion)
	case version < readableVersion:
		return fmt.Errorf("run state written by an older arbiter (schema version %d); a run upgrades it", version)
	}
	s.live, s.untruncated, s.version = version < 7, version < 9, version
	if err := s.quickCheck(ctx); err != nil {
		return err
	}
	return s.check(ctx)
}

// quickCheck runs SQLite's PRAGMA quick_check, which reads every page and
// finds a file whose structure is broken (bytes overwritten, a page cut
// short): such a file must be neither read as run state nor committed
// onto. It costs a read of the whole file, once per open.
func (s *Store) quickCheck(ctx context.Context) error {
	var first string
	if err := s.db.QueryRowContext(ctx, "PRAGMA quick_check(1)").Scan(&first); err != nil {
		return damaged(fmt.Errorf("check the database: %w", err))
	}
	if first != "ok" {
		// "*** in database main ***\nTree 18 page 18: ..." on one line.
		first = strings.ReplaceAll(strings.TrimPrefix(first, "*** in database main ***\n"), "\n", "; ")
		return fmt.Errorf("%w: SQLite finds the file malformed (%s); %s", ErrDamaged, first, recovery)
	}
	return nil
}

// damaged returns err wrapping ErrDamaged, with the way out, when SQLite
// says the file is malformed (SQLITE_CORRUPT, "database disk image is
// malformed (11)") or is not a database at all (SQLITE_NOTADB); any other
// err as it is.
func damaged(err error) error {
	var se *sqlite.Error
	if err == nil || errors.Is(err, ErrDamaged) || !errors.As(err, &se) {
		return err
	}
	switch se.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return fmt.Errorf("%w: %w; %s", ErrDamaged, err, recovery)
	}
	return err
}

// markDamaged applies damaged to *err: deferred by every method that
// reads or writes the database, so that whichever query meets a malformed
// file, the error says what to do.
func markDamaged(err *error) { *err = damaged(*err) }

// check finds the damage a run must not resume from: ticks must be 1..last
// with none missing, and the last stored state, when it names its tick or
// turn, must name its row's.
func (s *Store) check(ctx context.Context) (err error) {
	defer markDamaged(&err)
	var rows, last int
	if err := s.db.QueryRowContext(ctx, "SELECT COUNT(*), COALESCE(MAX(tick), 0) FROM ticks").Scan(&rows, &last); err != nil {
		return fmt.Errorf("check ticks: %w", err)
	}
	if rows != last {
		var missing int
		err := s.db.QueryRowContext(ctx, `SELECT CASE WHEN NOT EXISTS (SELECT 1 FROM ticks WHERE tick = 1) THEN 1
			ELSE (SELECT MIN(tick) + 1 FROM ticks t WHERE NOT EXISTS (SELECT 1 FROM ticks u WHERE u.tick = t.tick + 1)) END`).Scan(&missing)
		if err != nil {
			return fmt.Errorf("check ticks: %w", err)
		}
		return fmt.Errorf("%w: tick %d is missing (%d ticks stored, the last %d), so what follows it cannot be trusted; %s",
			ErrDamaged, missing, rows, last, recovery)
	}
	// Only the last state is read back to resume from, so only it is
	// checked: a scan of every row would parse the whole history on every
	// open. A state names its tick ("tick") or, in a game, its turn.
	if last == 0 {
		return nil
	}
	state, err := s.readState(ctx, s.db, last)
	if err != nil {
		return fmt.Errorf("check ticks: %w", err)
	}
	raw := string(state)
	if !json.Valid(state) {
		return fmt.Errorf("%w: the state stored at tick %d is not JSON, so the run cannot resume from it; %s", ErrDamaged, last, recovery)
	}
	var named struct{ Tick, Turn *int }
	if json.Unmarshal([]byte(raw), &named) != nil {
		return nil // not an object naming its tick; the kind's Load judges it
	}
	says := named.Tick
	if says == nil {
		says = named.Turn
	}
	if says == nil || *says == last {
		return nil
	}
	return fmt.Errorf("%w: the state stored at tick %d says tick %d; %s", ErrDamaged, last, *says, recovery)
}
