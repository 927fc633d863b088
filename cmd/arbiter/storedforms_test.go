package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/worldtest"
)

// v9Run is a run of demo-sim stored by the arbiter of schema version 9
// (see testdata/v9run/README.md): its state.db, the cassette of its calls
// and what the read commands printed from it then.
var v9Run = filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "v9run")

// goldenCommands are the read commands whose output on the fixture run was
// kept, by the name of the file that keeps it.
func goldenCommands(sim string) map[string][]string {
	m := map[string][]string{
		"story":          {"story", sim},
		"story.json":     {"story", sim, "--json"},
		"usage":          {"usage", sim},
		"usage.json":     {"usage", sim, "--json"},
		"status":         {"status", sim},
		"status.json":    {"status", sim, "--json"},
		"report.html":    {"report", sim, "-o", "-"},
		"diff-runs":      {"diff-runs", sim},
		"diff-runs.json": {"diff-runs", sim, "--json"},
	}
	for n := 0; n <= 5; n++ {
		m["export-"+strconv.Itoa(n)+".json"] = []string{"export", sim, "--tick", strconv.Itoa(n)}
	}
	return m
}

// v9Copy copies the fixture run's simulation, state.db included.
func v9Copy(t *testing.T) string {
	t.Helper()
	sim := worldtest.Copy(t, filepath.Join(v9Run, "demo-sim"))
	db, err := os.ReadFile(filepath.Join(v9Run, "demo-sim", "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sim, "state.db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	return sim
}

// checkGolden runs every golden command on sim and compares its output,
// byte for byte, with what the schema 9 arbiter printed for the run.
func checkGolden(t *testing.T, sim string, only ...string) {
	t.Helper()
	for name, args := range goldenCommands(sim) {
		if len(only) > 0 && !contains(only, name) {
			continue
		}
		want, err := os.ReadFile(filepath.Join(v9Run, "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := arbiter(t, args...)
		if got := strings.ReplaceAll(out, sim, "SIM"); code != 0 || got != string(want) {
			t.Errorf("%v: exit %d, output differs from the schema 9 arbiter's (%d bytes, want %d)%s\n%s",
				args[:1], code, len(got), len(want), firstDiff(got, string(want)), errOut)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// firstDiff shows where got first differs from want.
func firstDiff(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(0, i-80)
	return "\ngot:  …" + got[from:min(len(got), i+80)] + "\nwant: …" + want[from:min(len(want), i+80)]
}

// TestSchema9RunReads: a state.db written by the schema 9 arbiter reads as
// it did then, every read command byte for byte.
func TestSchema9RunReads(t *testing.T) {
	cleanEnv(t)
	checkGolden(t, v9Copy(t))
}
