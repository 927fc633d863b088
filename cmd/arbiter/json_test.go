package main

import (
	"encoding/json"
	"os"
	"path/filepath"
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
