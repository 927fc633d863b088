package session_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/session"
)

// gameWithFolders is a copy of conquest-demo with a characters/ folder
// holding a file a narrative would refuse, and a notes/ folder: conquest
// reads neither.
func gameWithFolders(t *testing.T) string {
	t.Helper()
	dir := copyDir(t, "../simulations/conquest-demo")
	for name, content := range map[string]string{
		"characters/bo.yaml": "id: Bo!\n---\nid: x\n",
		"notes/plan.txt":     "p1 rushes\n",
	} {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestIgnoredFoldersWarn: folders a kind ignores are warnings, returned by
// Validate, logged once by Load and Open (run, play), and they stop nothing.
func TestIgnoredFoldersWarn(t *testing.T) {
	dir := gameWithFolders(t)
	want := []string{
		filepath.Join(dir, "characters") + ": folder ignored: a conquest simulation reads only simulation.yaml and prompts/",
		filepath.Join(dir, "notes") + ": folder ignored: a conquest simulation reads only simulation.yaml and prompts/",
	}

	v := session.Validate(dir, session.Settings{})
	sim, problems, warnings := v.Sim, v.Problems, v.Warnings
	if sim == nil || sim.Kind != "conquest" || len(problems) != 0 {
		t.Fatalf("Validate = %v, %v", sim, problems)
	}
	if got := errorStrings(warnings); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate warnings\n got  %q\n want %q", got, want)
	}

	var log bytes.Buffer
	set := session.Settings{Logger: slog.New(slog.NewTextHandler(&log, nil))}
	if _, err := session.Load(dir, set); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 2 || !strings.Contains(log.String(), "notes: folder ignored") {
		t.Errorf("Load logged %d warnings, want 2:\n%s", n, log.String())
	}
	if _, err := session.Load(dir, session.Settings{}); err != nil {
		t.Errorf("Load with no logger: %v", err)
	}

	log.Reset()
	ctx := context.Background()
	s, err := session.Open(ctx, dir, set, session.ReadWrite)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if rep, err := s.Run(ctx, 1); err != nil || rep.LastTick != 1 {
		t.Errorf("Run = %+v, %v; want one turn played", rep, err)
	}
	if n := strings.Count(log.String(), "folder ignored"); n != 2 {
		t.Errorf("Open and Run logged %d warnings, want 2 (once each):\n%s", n, log.String())
	}
}

// TestWarningsBesideProblems: Validate lists the warnings with the problems,
// whether the problem is in the files (world) or in what the kind adds.
func TestWarningsBesideProblems(t *testing.T) {
	for name, yaml := range map[string]string{
		"files":    "id: conquest-demo\nkind: conquest\n",
		"settings": "id: conquest-demo\nkind: conquest\ntitle: T\nsettings:\n  seed: -1\n  seats: {p1: bot, p2: bot}\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := gameWithFolders(t)
			if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			v := session.Validate(dir, session.Settings{})
			sim, problems, warnings := v.Sim, v.Problems, v.Warnings
			if sim != nil || len(problems) != 1 || !strings.HasPrefix(problems[0].Error(), filepath.Join(dir, "simulation.yaml")+":") {
				t.Errorf("Validate = %v, problems %q; want one naming simulation.yaml", sim, errorStrings(problems))
			}
			if len(warnings) != 2 {
				t.Errorf("warnings = %q, want characters/ and notes/", errorStrings(warnings))
			}
		})
	}
}

func errorStrings(errs []error) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.Error()
	}
	return out
}
