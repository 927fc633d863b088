package main

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatusOnEmptyStateWritesNothing: status (a read) on an empty
// state.db leaves it empty.
func TestStatusOnEmptyStateWritesNothing(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	path := filepath.Join(sim, "state.db")
	os.WriteFile(path, nil, 0o644)
	for _, args := range [][]string{{"status", sim}, {"export", sim}} {
		if code, _, errOut := arbiter(t, args...); code != 0 {
			t.Errorf("%v: exit %d\n%s", args, code, errOut)
		}
	}
	if info, err := os.Stat(path); err != nil || info.Size() != 0 {
		t.Errorf("state.db after status: %v, %v", info.Size(), err)
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		t.Error("status created a WAL")
	}
}

// TestDamagedStateRefused: a missing tick row is found when the simulation
// is opened, by status and by run, which says how to recover and pays for
// nothing.
func TestDamagedStateRefused(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "3"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA foreign_keys = OFF; DELETE FROM ticks WHERE tick = 2"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	calls := srv.CallCount()
	for _, args := range [][]string{{"status", sim}, {"run", sim, "--ticks", "1"}} {
		code, out, errOut := arbiter(t, args...)
		if code == 0 || !strings.Contains(out+errOut, "tick 2 is missing") || !strings.Contains(out+errOut, "arbiter reset") {
			t.Errorf("%v: exit %d, want the damage named and how to recover:\n%s%s", args, code, out, errOut)
		}
	}
	if n := srv.CallCount() - calls; n != 0 {
		t.Errorf("run on damaged state made %d model calls", n)
	}
}
