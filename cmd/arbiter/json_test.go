package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/session"
)

// TestResetJSON: reset --json lists what it deleted, [] when nothing.
func TestResetJSON(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	var got struct {
		Simulation string   `json:"simulation"`
		Deleted    []string `json:"deleted"`
	}
	code, out, errOut := arbiter(t, "reset", sim, "--json")
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Deleted == nil || len(got.Deleted) != 0 {
		t.Fatalf("reset --json with nothing to delete: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if code, _, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	code, out, _ = arbiter(t, "reset", sim, "--json")
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Deleted) != 1 || got.Deleted[0] != filepath.Join(sim, "state.db") || got.Simulation != sim {
		t.Errorf("reset --json after a run: exit %d, %v: %s", code, err, out)
	}
}

// TestSchemasJSON: generate and check --json report every file; check says
// which are stale or missing and still exits 2.
func TestSchemasJSON(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	type report struct {
		Dir      string               `json:"dir"`
		UpToDate *bool                `json:"up_to_date"`
		Files    []session.SchemaFile `json:"files"`
	}
	var gen, check report
	code, out, _ := arbiter(t, "schemas", "generate", "--dir", dir, "--json")
	if err := json.Unmarshal([]byte(out), &gen); code != 0 || err != nil || len(gen.Files) < 2 || gen.Files[0].Status != "written" {
		t.Fatalf("schemas generate --json: exit %d, %v: %s", code, err, out)
	}
	code, out, _ = arbiter(t, "schemas", "check", "--dir", dir, "--json")
	if err := json.Unmarshal([]byte(out), &check); code != 0 || err != nil || check.UpToDate == nil || !*check.UpToDate || len(check.Files) != len(gen.Files) {
		t.Fatalf("schemas check --json: exit %d, %v: %s", code, err, out)
	}
	os.Remove(gen.Files[0].Path)
	os.WriteFile(gen.Files[1].Path, []byte("{}\n"), 0o644)
	code, out, errOut := arbiter(t, "schemas", "check", "--dir", dir, "--json")
	check = report{}
	if err := json.Unmarshal([]byte(out), &check); code != ExitUsage || err != nil || *check.UpToDate || errOut == "" {
		t.Fatalf("schemas check --json on a changed folder: exit %d, %v: %s%s", code, err, out, errOut)
	}
	if check.Files[0].Status != "missing" || check.Files[1].Status != "stale" || check.Files[2].Status != "up_to_date" {
		t.Errorf("statuses: %+v", check.Files)
	}
}

// TestEveryCommandExportsOneJSONDocument runs every command that prints
// data with --json, offline (the in-process model server, bots, files), and
// checks that stdout is exactly one JSON document and that stderr holds no
// JSON: machine output goes through the one exporter, and nothing else
// reaches stdout.
func TestEveryCommandExportsOneJSONDocument(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	t.Setenv("ARBITER_TEST_MAIN", "1") // bench's stand-in server is this binary's `bench serve`
	sim, other := demoCopy(t), demoCopy(t)
	for _, dir := range []string{sim, sim, other} {
		if code, _, errOut := arbiter(t, "run", dir); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", dir, code, errOut)
		}
	}
	chron, conq := gameCopy(t, "chronicle-demo"), gameCopy(t, "conquest-demo")
	_, game, _ := arbiter(t, "export", conq, "--tick", "0")
	gameFile := filepath.Join(t.TempDir(), "game.json")
	os.WriteFile(gameFile, []byte(game), 0o644)
	schemaDir := t.TempDir()
	shards := arenaShards(t, 2, t.TempDir(), "arena", conq, "--games", "2", "--seats", "bot,bot")
	tests := []struct {
		name string
		in   string
		args []string
	}{
		{"run", "", []string{"run", sim}},
		{"status", "", []string{"status", sim}},
		{"export", "", []string{"export", sim}},
		{"story", "", []string{"story", sim}},
		{"usage", "", []string{"usage", sim}},
		{"diff-runs", "", []string{"diff-runs", sim}},
		{"diff-runs two simulations", "", []string{"diff-runs", sim, other}},
		{"prompts render", "", []string{"prompts", "render", sim, "--phase", "resolution", "--entity", "lock"}},
		{"validate", "", []string{"validate", sim}},
		{"validate a game", "", []string{"validate", conq}},
		{"reset", "", []string{"reset", other}},
		{"report", "", []string{"report", sim, "-o", filepath.Join(t.TempDir(), "r.html")}},
		{"version", "", []string{"version"}},
		{"schemas generate", "", []string{"schemas", "generate", "--dir", schemaDir}},
		{"schemas check", "", []string{"schemas", "check", "--dir", schemaDir}},
		{"config show", "", []string{"config", "show"}},
		{"doctor", "", []string{"doctor"}},
		{"chronicle show", "", []string{"chronicle", "show", chron}},
		{"chronicle parse", "CREATE PERIOD The Flood (dark): the rivers rise. FIRST", []string{"chronicle", "parse", "--phase", "setup"}},
		{"conquest check-orders", `[{"from": "x", "to": "y", "ships": 1}]`, []string{"conquest", "check-orders", "--game", gameFile, "--player", "p1"}},
		{"arena", "", []string{"arena", conq, "--games", "2", "--seats", "bot,bot"}},
		{"arena --shard", "", []string{"arena", conq, "--games", "2", "--seats", "bot,bot", "--shard", "1/2", "-o", filepath.Join(t.TempDir(), "1.json")}},
		{"arena merge", "", append([]string{"arena", "merge"}, shards...)},
		{"bench", "", []string{"bench", "--characters", "6", "--locations", "2", "--ticks", "1", "--latency", "1ms",
			"--server-concurrency", "4", "--size-ticks", "1", "--sequential-ticks", "0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			io, out, errOut := TestStreams(tc.in)
			code := Execute(context.Background(), io, append(tc.args, "--json"))
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			checkOneJSONDocument(t, out.String())
			for line := range strings.Lines(errOut.String()) {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "{") || strings.HasPrefix(l, "[") || json.Valid([]byte(l)) && l != "" {
					t.Errorf("stderr holds JSON: %s", line)
				}
			}
		})
	}
}

// checkOneJSONDocument fails unless out is exactly one JSON document.
func checkOneJSONDocument(t *testing.T, out string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not JSON: %v\n%s", err, out)
	}
	if _, err := dec.Token(); err != io.EOF {
		t.Errorf("stdout holds more than one JSON document (next: %v):\n%s", err, out)
	}
}
