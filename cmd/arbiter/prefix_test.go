package main

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestCommitErrorPrefixOnce: a tick that cannot commit says "commit tick N"
// once, on the terminal and in status.
func TestCommitErrorPrefixOnce(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "1"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	db, err := sql.Open("sqlite", filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TRIGGER no_more BEFORE INSERT ON ticks BEGIN SELECT RAISE(ABORT, 'disk says no'); END"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "1", "-v")
	if code == 0 {
		t.Fatal("run committed past the trigger")
	}
	_, status, _ := arbiter(t, "status", sim)
	for where, text := range map[string]string{"run": out + errOut, "status": status} {
		for _, line := range strings.Split(text, "\n") {
			if strings.Count(line, "commit tick 2") > 1 {
				t.Errorf("%s repeats its prefix: %s", where, line)
			}
		}
		if !strings.Contains(text, "disk says no") {
			t.Errorf("%s does not say why:\n%s", where, text)
		}
	}
}
