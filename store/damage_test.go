package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"
)

// bigRecord is record(tick) with memories large enough to fill many
// pages, none of them the ticks table's: what check reads stays whole when
// junk lands in them, and only quick_check sees it. The entries are random
// letters, which their compressed body cannot make much smaller.
func bigRecord(tick int) *TickRecord {
	rec := record(tick)
	rng := rand.New(rand.NewPCG(uint64(tick), 0))
	for i := range 20 {
		entry := make([]byte, 16<<10)
		for j := range entry {
			entry[j] = 'a' + byte(rng.UintN(26))
		}
		rec.Memories = append(rec.Memories, MemoryRecord{CharacterID: "ada", Entry: fmt.Sprintf("tick %d memory %d %s", tick, i, entry)})
	}
	return rec
}

// overwrite writes n seeded random bytes into the file at path from off.
func overwrite(t *testing.T, path string, off int64, n int) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	junk := make([]byte, n)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	if _, err := f.WriteAt(junk, off); err != nil {
		t.Fatal(err)
	}
}

// TestMalformedDatabaseRefused: random bytes written over the pages of a
// run state make both opens refuse it with ErrDamaged and the way out, and
// the refused open writes nothing into the file.
func TestMalformedDatabaseRefused(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	for i := 1; i <= 5; i++ {
		commit(t, s, bigRecord(i))
	}
	s.Close()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Junk at the start of pages in the middle of the file, the memories'
	// (the first page, the header, is TestNotADatabaseRefused's).
	for off := info.Size() / 3; off < 2*info.Size()/3; off += 64 << 10 {
		overwrite(t, path, off&^(16<<10-1), 64)
	}
	before, _ := os.ReadFile(path)
	eachOpen(t, path, func(name string, err error) {
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "arbiter reset") || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: err = %v; want ErrDamaged naming the file and `arbiter reset`", name, err)
		}
	})
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a refused open wrote into the malformed file")
	}
}

// TestNotADatabaseRefused: a state.db whose header is junk is damaged, with
// the way out, not an error without a hint.
func TestNotADatabaseRefused(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1))
	s.Close()
	overwrite(t, path, 0, 100)
	eachOpen(t, path, func(name string, err error) {
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "arbiter reset") {
			t.Errorf("%s: err = %v; want ErrDamaged with `arbiter reset`", name, err)
		}
	})
}

// eachOpen calls check with the error of Open and of OpenReadOnly of the
// database at path, closing what opened.
func eachOpen(t *testing.T, path string, check func(name string, err error)) {
	t.Helper()
	for name, open := range map[string]func(context.Context, string) (*Store, error){"Open": Open, "OpenReadOnly": OpenReadOnly} {
		s, err := open(t.Context(), path)
		if err == nil {
			s.Close()
		}
		check(name, err)
	}
}

// TestLastStateNotJSONRefused: a last tick whose stored state is not JSON
// (bytes changed inside the record) is damaged: a run would commit the next
// tick on top of it. quick_check finds it through the schema's CHECK; the
// decode of the last state finds it without one and names the tick.
func TestLastStateNotJSONRefused(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1), record(2))
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// The schema's CHECK keeps such a state out of an UPDATE; damage does
	// not ask it.
	if _, err := db.Exec(`PRAGMA ignore_check_constraints = ON; UPDATE ticks SET state_json = '{"tick":2,"loc' WHERE tick = 2`); err != nil {
		t.Fatal(err)
	}
	eachOpen(t, path, func(name string, err error) {
		if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "arbiter reset") {
			t.Errorf("%s: err = %v; want ErrDamaged with `arbiter reset`", name, err)
		}
	})
	if err := (&Store{db: db}).check(t.Context()); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "tick 2 is not JSON") {
		t.Errorf("check: err = %v; want ErrDamaged naming tick 2's state", err)
	}
}

// TestMalformedErrorCarriesHint: SQLite's "database disk image is malformed
// (11)" and "file is not a database (26)" are ErrDamaged with the way out
// wherever they come from; other SQLite errors are left as they are.
func TestMalformedErrorCarriesHint(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, bytes.Repeat([]byte("junk"), 4096), 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, notADB := db.Exec("SELECT 1 FROM sqlite_master")
	_, syntax := db.Exec("SELEC 1")
	var se *sqlite.Error
	if !errors.As(notADB, &se) || !errors.As(syntax, new(*sqlite.Error)) {
		t.Fatalf("want SQLite errors, got %v and %v", notADB, syntax)
	}
	got := damaged(fmt.Errorf("read last tick: %w", notADB))
	if !errors.Is(got, ErrDamaged) || !errors.As(got, &se) || !strings.Contains(got.Error(), "arbiter reset") {
		t.Errorf("damaged(%v) = %v; want ErrDamaged, the SQLite error kept, and the way out", notADB, got)
	}
	if got := damaged(syntax); got != syntax {
		t.Errorf("damaged(%v) = %v; want it unchanged", syntax, got)
	}
	if got := damaged(got); strings.Count(got.Error(), "arbiter reset") != 1 {
		t.Errorf("marked twice: %v", got)
	}
}
