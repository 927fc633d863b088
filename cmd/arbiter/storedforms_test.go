package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/filelock"
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

// v10Run is the same run stored by the arbiter of schema version 10 (see
// testdata/v10run/README.md): its state.db and what the read commands
// printed from it then; its simulation is v9Run's.
var v10Run = filepath.Join(repoRoot, "cmd", "arbiter", "testdata", "v10run")

// v9Copy copies the fixture run's simulation, state.db included.
func v9Copy(t *testing.T) string {
	t.Helper()
	return fixtureCopy(t, filepath.Join(v9Run, "demo-sim", "state.db"))
}

// v10Copy copies the fixture run's simulation with the state.db the
// schema 10 arbiter wrote.
func v10Copy(t *testing.T) string {
	t.Helper()
	return fixtureCopy(t, filepath.Join(v10Run, "state.db"))
}

// fixtureCopy copies the fixture run's simulation with the state.db at
// path.
func fixtureCopy(t *testing.T, path string) string {
	t.Helper()
	sim := worldtest.Copy(t, filepath.Join(v9Run, "demo-sim"))
	db, err := os.ReadFile(path)
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
	checkGoldenOf(t, v9Run, sim, only...)
}

// checkGoldenOf runs every golden command on sim and compares its output,
// byte for byte, with what the arbiter that wrote the fixture run in
// fixture printed for it.
func checkGoldenOf(t *testing.T, fixture, sim string, only ...string) {
	t.Helper()
	for name, args := range goldenCommands(sim) {
		if len(only) > 0 && !contains(only, name) {
			continue
		}
		want, err := os.ReadFile(filepath.Join(fixture, "golden", name))
		if err != nil {
			t.Fatal(err)
		}
		code, out, errOut := arbiter(t, args...)
		if got := strings.ReplaceAll(out, sim, "SIM"); code != 0 || got != string(want) {
			t.Errorf("%v: exit %d, output differs from %s's (%d bytes, want %d)%s\n%s",
				args[:1], code, filepath.Base(fixture), len(got), len(want), firstDiff(got, string(want)), errOut)
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

// TestSchema9RunUpgraded: the fixture run, upgraded to today's schema (by
// a compaction that keeps every text), reads as it did, byte for byte.
func TestSchema9RunUpgraded(t *testing.T) {
	cleanEnv(t)
	sim := v9Copy(t)
	if code, out, errOut := arbiter(t, "compact", sim, "--keep-texts", "100"); code != 0 || !strings.Contains(out, "no texts dropped") {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errOut)
	}
	checkGolden(t, sim)
}

// TestSchema10RunReads: a state.db written by the schema 10 arbiter reads
// as it did then, every read command byte for byte.
func TestSchema10RunReads(t *testing.T) {
	cleanEnv(t)
	checkGoldenOf(t, v10Run, v10Copy(t))
}

// TestSchema10RunUpgraded: the schema 10 fixture run, upgraded to today's
// schema (by a compaction that keeps every text), reads as it did, byte
// for byte.
func TestSchema10RunUpgraded(t *testing.T) {
	cleanEnv(t)
	sim := v10Copy(t)
	if code, out, errOut := arbiter(t, "compact", sim, "--keep-texts", "100"); code != 0 || !strings.Contains(out, "no texts dropped") {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errOut)
	}
	checkGoldenOf(t, v10Run, sim)
}

// TestRunReplayedStoresTheSame: the fixture run made again from its
// cassette, stored in today's forms, tells the same story and exports the
// same state at every tick, byte for byte, as the schema 9 arbiter did.
func TestRunReplayedStoresTheSame(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ARBITER_LLM_MODEL", "test-model") // the model it was recorded with
	sim := worldtest.Copy(t, filepath.Join(v9Run, "demo-sim"))
	cassette := filepath.Join(v9Run, "cassette.jsonl")
	for _, ticks := range []string{"3", "2"} {
		if code, _, errOut := arbiter(t, "run", sim, "--ticks", ticks, "--replay", cassette); code != 0 {
			t.Fatalf("run --replay: exit %d\n%s", code, errOut)
		}
	}
	only := []string{"story", "story.json"}
	for n := 0; n <= 5; n++ {
		only = append(only, "export-"+strconv.Itoa(n)+".json")
	}
	checkGolden(t, sim, only...)
}

// TestCompactCommand: compacting the fixture run to its last 2 ticks keeps
// story and export byte for byte and status and usage but for the line
// saying which ticks lost their texts, which story and export say on
// stderr; compact is refused while the simulation is in use.
func TestCompactCommand(t *testing.T) {
	cleanEnv(t)
	sim := v9Copy(t)
	code, out, errOut := arbiter(t, "compact", sim, "--keep-texts", "2")
	if code != 0 || !strings.Contains(out, "the prompt and answer texts of ticks 1..3 dropped (33 calls now)") {
		t.Fatalf("compact: exit %d\n%s%s", code, out, errOut)
	}
	checkGolden(t, sim, "story", "story.json", "export-0.json", "export-3.json", "export-5.json", "diff-runs", "report.html")
	note := "the prompts and answers of ticks 1..3 were dropped by `arbiter compact`"
	for _, args := range [][]string{{"story", sim}, {"export", sim, "--tick", "2"}} {
		if _, _, errOut := arbiter(t, args...); !strings.Contains(errOut, "note: "+note) {
			t.Errorf("%s: stderr lacks the note: %q", args[0], errOut)
		}
	}
	for _, name := range []string{"status", "usage"} {
		want, _ := os.ReadFile(filepath.Join(v9Run, "golden", name))
		_, out, _ := arbiter(t, name, sim)
		line := "texts:        " + note + " (counts, tokens, costs and states are whole)\n"
		if name == "usage" {
			line = note + " (counts, tokens, costs and states are whole)\n"
		}
		if !strings.Contains(out, line) || strings.Replace(strings.ReplaceAll(out, sim, "SIM"), line, "", 1) != string(want) {
			t.Errorf("%s after compact: want the schema 9 output plus %q:%s", name, line, firstDiff(out, string(want)))
		}
	}
	_, out, _ = arbiter(t, "status", sim, "--json")
	if !strings.Contains(out, `"texts_dropped_through": 3`) {
		t.Errorf("status --json lacks texts_dropped_through:\n%s", out)
	}
	// Again: nothing more to drop, and said so as data.
	code, out, _ = arbiter(t, "compact", sim, "--keep-texts", "2", "--json")
	var again struct {
		Compacted struct {
			Through int `json:"texts_dropped_through"`
			Calls   int `json:"calls"`
		} `json:"compacted"`
	}
	if err := json.Unmarshal([]byte(out), &again); err != nil || code != 0 || again.Compacted.Through != 3 || again.Compacted.Calls != 0 {
		t.Errorf("compact --json again: exit %d, %v: %+v\n%s", code, err, again, out)
	}

	unlock, err := filelock.TryLock(sim)
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut = arbiter(t, "compact", sim)
	unlock()
	if code != ExitError || !strings.Contains(errOut, "is in use by another arbiter process") {
		t.Errorf("compact of a simulation in use: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compact", sim, "--keep-texts", "-1"}, ExitUsage, "--keep-texts -1: give 0 or more ticks"},
		{[]string{"compact", filepath.Join(sim, "nowhere")}, ExitUsage, "no such simulation folder"},
		{[]string{"compact", demoCopy(t)}, ExitUsage, "no run state to compact"},
	} {
		if code, _, errOut := arbiter(t, tc.args...); code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, want %d with %q\n%s", tc.args, code, tc.code, tc.want, errOut)
		}
	}
}
