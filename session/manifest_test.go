package session_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/session"
)

// TestManifestRoundTrip: the manifest a session builds names an override
// by its path and hash, is stored with the run's first commit and read
// back by status as it was written; a read-only session cannot start a run.
func TestManifestRoundTrip(t *testing.T) {
	dir := copyDir(t, "../simulations/demo-sim")
	over := filepath.Join(dir, "prompts", "phase2a_resolution_user.md")
	os.MkdirAll(filepath.Dir(over), 0o755)
	def, err := os.ReadFile("../prompts/phase2a_resolution_user.md")
	if err != nil {
		t.Fatal(err)
	}
	text := append(def, "\nBe brief.\n"...)
	os.WriteFile(over, text, 0o644)
	ctx := context.Background()

	set := settings(t, openaitest.FromSchema(nil))
	e, _ := set.LLM()
	srvURL := e.BaseURL
	s, err := session.Open(ctx, dir, set, session.ReadWrite)
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.Manifest()
	if err != nil {
		t.Fatal(err)
	}
	var got manifest.File
	for _, f := range m.Templates {
		if f.Name == "phase2a_resolution_user.md" {
			got = f
		}
	}
	if got.Source != over || got.SHA256 != manifest.Hash(text) {
		t.Errorf("override in the manifest = %+v, want source %s and the hash of its text", got, over)
	}
	if err := s.StartRun(map[string]string{"llm.model": "test-model"}, nil); err != nil {
		t.Fatal(err)
	}
	if runs, err := s.Runs(ctx); err != nil || len(runs) != 0 {
		t.Fatalf("runs before the first commit = %+v, %v; want none", runs, err)
	}
	if _, err := s.Run(ctx, 2); err != nil {
		t.Fatal(err)
	}
	s.Close()

	r, err := session.Open(ctx, dir, session.Settings{Depth: 3}, session.ReadOnly)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	st, err := r.Status(ctx)
	if err != nil || st.LastRun == nil || st.LastRun.N != 1 || st.LastRun.FirstTick != 1 || st.LastRun.LastTick != 2 {
		t.Fatalf("status last run = %+v, %v; want run 1 of ticks 1..2", st.LastRun, err)
	}
	back := st.Manifest
	if back.BaseURL != srvURL || back.Kind != "narrative" || len(back.Templates) != 4 || back.Templates[3] != m.Templates[3] ||
		len(back.Schemas) != 2 || back.Schemas[0] != m.Schemas[0] || back.Config["llm.model"] != "test-model" || back.Arbiter != m.Arbiter {
		t.Errorf("manifest read back = %+v\nwant %+v", back, m)
	}
	if err := r.StartRun(nil, nil); err == nil || !strings.Contains(err.Error(), "ReadWrite") {
		t.Errorf("StartRun on a read-only session = %v, want an error", err)
	}
}
