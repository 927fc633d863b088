package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInspectingRendersNoPrompt: the commands that read a run (export,
// status, story, usage, report, diff-runs) do not build the first tick's
// calls, work that grows with the world: a template broken after the run
// leaves them reading it, while run, validate and prompts render, which
// render calls, still name the template and its missing key.
func TestInspectingRendersNoPrompt(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, out, errOut := arbiter(t, "run", sim, "--ticks", "1"); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if err := os.MkdirAll(filepath.Join(sim, "prompts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sim, "prompts", "phase1_intention_user.md"), []byte("You are {{.Character.Nickname}}.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	report := filepath.Join(t.TempDir(), "report.html")
	for _, args := range [][]string{
		{"export", sim, "--tick", "1"}, {"export", sim}, {"status", sim}, {"story", sim}, {"usage", sim},
		{"report", sim, "-o", report}, {"diff-runs", sim, sim},
	} {
		if code, out, errOut := arbiter(t, args...); code != 0 || out+errOut == "" {
			t.Errorf("%s: exit %d, want the run read\n%s%s", args[0], code, out, errOut)
		}
	}
	for _, args := range [][]string{
		{"run", sim, "--ticks", "1"}, {"validate", sim}, {"prompts", "render", sim, "--phase", "resolution", "--entity", "lock"},
	} {
		code, out, errOut := arbiter(t, args...)
		if code != ExitUsage || !strings.Contains(out+errOut, "phase1_intention_user.md") || !strings.Contains(out+errOut, "Nickname") {
			t.Errorf("%s: exit %d, want %d naming the template and its missing key\n%s%s", args[0], code, ExitUsage, out, errOut)
		}
	}
}
