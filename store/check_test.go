package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenReadOnlyWritesNothing: a read-only open of an empty state.db (or
// of a missing one) writes nothing and says there is no run state.
func TestOpenReadOnlyWritesNothing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, FileName)
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := OpenReadOnly(t.Context(), path)
	if !errors.Is(err, ErrNoRunState) {
		t.Fatalf("empty state.db: err = %v, want ErrNoRunState", err)
	}
	if s != nil {
		s.Close()
	}
	if info, _ := os.Stat(path); info.Size() != 0 {
		t.Errorf("a read-only open wrote %d bytes", info.Size())
	}
	if _, err := OpenReadOnly(t.Context(), filepath.Join(dir, "missing.db")); !errors.Is(err, ErrNoRunState) {
		t.Errorf("missing state.db: err = %v, want ErrNoRunState", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing.db")); err == nil {
		t.Error("a read-only open created the file")
	}
}

// TestOpenReadOnlyReads: a read-only open of a run state reads it, and a
// write through it fails.
func TestOpenReadOnlyReads(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	commit(t, s, record(1), record(2))
	ro, err := OpenReadOnly(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if last, err := ro.LastTick(t.Context()); err != nil || last != 2 {
		t.Errorf("LastTick = %d, %v", last, err)
	}
	if err := ro.CommitTick(t.Context(), record(3)); err == nil {
		t.Error("committed through a read-only store")
	}
}

// TestOpenFindsDamage: a missing tick row, or a stored state whose tick
// disagrees with its row, is found when the database is opened, read-only
// or not, with what is wrong and how to recover.
func TestOpenFindsDamage(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"gap", "DELETE FROM ticks WHERE tick = 2", "tick 2 is missing"},
		{"first", "DELETE FROM ticks WHERE tick = 1", "tick 1 is missing"},
		{"state", `UPDATE ticks SET state_json = '{"tick":7}' WHERE tick = 3`, "the state stored at tick 3 says tick 7"},
		{"game turn", `UPDATE ticks SET state_json = '{"turn":2}' WHERE tick = 3`, "the state stored at tick 3 says tick 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, path := openTemp(t)
			commit(t, s, record(1), record(2), record(3))
			if _, err := s.db.Exec(tc.sql); err != nil {
				t.Fatal(err)
			}
			s.Close()
			for name, open := range map[string]func() (*Store, error){
				"Open":         func() (*Store, error) { return Open(t.Context(), path) },
				"OpenReadOnly": func() (*Store, error) { return OpenReadOnly(t.Context(), path) },
			} {
				s, err := open()
				if s != nil {
					s.Close()
				}
				if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "arbiter reset") {
					t.Errorf("%s: err = %v, want ErrDamaged saying %q and how to recover", name, err, tc.want)
				}
			}
		})
	}
}
