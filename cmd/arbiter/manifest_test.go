package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/session"
)

// statusJSON is the part of `status --json` about runs.
type statusJSON struct {
	LastRun *struct {
		Run       int               `json:"run"`
		FirstTick int               `json:"first_tick"`
		LastTick  int               `json:"last_tick"`
		Manifest  manifest.Manifest `json:"manifest"`
	} `json:"last_run"`
}

func readStatus(t *testing.T, dir string, args ...string) statusJSON {
	t.Helper()
	code, out, errOut := arbiter(t, append([]string{"status", dir, "--json"}, args...)...)
	var st statusJSON
	if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
		t.Fatalf("status --json: exit %d\n%s\n%s", code, out, errOut)
	}
	return st
}

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestRunManifest: each run stores its manifest with the ticks it
// committed; status shows the latest; diff-runs says what changed between
// two; no credential of the base URL or the configuration is stored or
// shown.
func TestRunManifest(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	withCreds := strings.Replace(srv.URL, "http://", "http://alice:"+leakPass+"@", 1)
	cfg1 := writeConfig(t, "llm:\n  base_url: "+withCreds+"\n  api_key: "+leakKey+"\n")
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2", "--config", cfg1); code != 0 {
		t.Fatalf("run 1: exit %d\n%s", code, errOut)
	}
	checkFirstManifest(t, sim, srv.URL, cfg1)

	// Run 2: a template overridden, resolution on another model, a shorter timeout.
	over := filepath.Join(sim, "prompts", "phase1_intention_system.md")
	os.MkdirAll(filepath.Dir(over), 0o755)
	def, _ := os.ReadFile(filepath.Join(repoRoot, "prompts", "phase1_intention_system.md"))
	if err := os.WriteFile(over, append(def, []byte("\nKeep it short.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg2 := writeConfig(t, "llm:\n  base_url: "+withCreds+"\n  api_key: "+leakKey+"\n  timeout: 30s\nphases:\n  resolution: {model: big-1}\n")
	if code, _, errOut := arbiter(t, "run", sim, "--config", cfg2); code != 0 {
		t.Fatalf("run 2: exit %d\n%s", code, errOut)
	}
	checkSecondStatus(t, sim, srv.URL, cfg2, over)
	checkDiffRuns(t, sim, over)
	checkDiffRunsJSON(t, sim)

	// Two simulations: the latest run of each.
	other := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", other, "--config", cfg1); code != 0 {
		t.Fatalf("run of the other simulation: exit %d\n%s", code, errOut)
	}
	code, out, _ := arbiter(t, "diff-runs", sim, other)
	if code != 0 || !strings.Contains(out, "demo-sim run 2 (ticks 3..3) → demo-sim run 1 (ticks 1..1)") || !strings.Contains(out, "model resolution: big-1 → test-model") {
		t.Errorf("diff-runs of two simulations: exit %d\n%s", code, out)
	}
}

// checkFirstManifest checks the manifest status --json shows of
// TestRunManifest's first run of sim, against the model server at url with
// the configuration cfg: what the run used, the key redacted, and no
// credential anywhere in state.db, not even the last characters of the key
// that config show prints.
func checkFirstManifest(t *testing.T, sim, url, cfg string) {
	t.Helper()
	r := readStatus(t, sim, "--config", cfg).LastRun
	if r == nil || r.Run != 1 || r.FirstTick != 1 || r.LastTick != 2 {
		t.Fatalf("status --json last_run = %+v, want run 1 of ticks 1..2", r)
	}
	m := r.Manifest
	if m.Kind != "narrative" || m.BaseURL != url || len(m.Models) != 2 || m.Models[0] != (manifest.PhaseModel{Phase: "intention", Model: "test-model"}) ||
		m.Models[1] != (manifest.PhaseModel{Phase: "resolution", Model: "test-model"}) || m.Seed != nil || m.Arbiter.Version == "" || m.Arbiter.Go == "" {
		t.Errorf("manifest = %+v", m)
	}
	var names []string
	for _, f := range m.Templates {
		names = append(names, f.Name)
		if f.Source != "default" || !sha256Hex.MatchString(f.SHA256) {
			t.Errorf("template %+v: want source default and a SHA-256", f)
		}
	}
	if strings.Join(names, ",") != "phase1_intention_system.md,phase1_intention_user.md,phase2a_resolution_system.md,phase2a_resolution_user.md" {
		t.Errorf("templates %v", names)
	}
	if len(m.Schemas) != 2 || m.Schemas[0].Name != "IntentionResponse" || m.Schemas[1].Name != "MasterOutput" || !sha256Hex.MatchString(m.Schemas[1].SHA256) {
		t.Errorf("schemas %+v", m.Schemas)
	}
	if m.Config["llm.api_key"] != llm.Redacted || m.Config["llm.base_url"] != url || m.Config["llm.model"] != "test-model" || m.Config["run.max_cost"] != "0" {
		t.Errorf("manifest config: api_key %q, base_url %q, model %q, max_cost %q", m.Config["llm.api_key"], m.Config["llm.base_url"], m.Config["llm.model"], m.Config["run.max_cost"])
	}
	for _, f := range []string{"state.db", "state.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(sim, f))
		for _, secret := range []string{leakKey, leakPass, leakKey[len(leakKey)-4:] + `"`} {
			if strings.Contains(string(b), secret) {
				t.Errorf("%s holds %q", f, secret)
			}
		}
	}
}

// checkSecondStatus checks what status (configuration cfg) says of
// TestRunManifest's second run of sim: its manifest, the template over
// that overrides a default, and the keys set besides the defaults, with no
// credential shown.
func checkSecondStatus(t *testing.T, sim, url, cfg, over string) {
	t.Helper()
	code, out, errOut := arbiter(t, "status", sim, "--config", cfg)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, errOut)
	}
	assertNoLeak(t, "status", out)
	for _, want := range []string{"run 2:        ticks 3..3, started ", "  arbiter:    ", "  base URL:   " + url + "\n",
		"  models:     intention test-model, resolution big-1\n", "  templates:  phase1_intention_system.md (" + over + ") sha256:",
		"              phase1_intention_user.md (default) sha256:", "  schemas:    IntentionResponse (generated) sha256:",
		"llm.timeout=30s", "phases.resolution.model=big-1", "llm.api_key=[redacted]", "(besides the defaults; status --json lists every key)"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "llm.max_attempts=") || strings.Contains(out, "phases.intention.model=") || strings.Contains(out, "chronicle.window=") {
		t.Errorf("status lists a key left at its default:\n%s", out)
	}
}

// checkDiffRuns checks that diff-runs of sim says what changed between
// TestRunManifest's two runs (the template over, a model, the timeout) and
// nothing else.
func checkDiffRuns(t *testing.T, sim, over string) {
	t.Helper()
	code, out, errOut := arbiter(t, "diff-runs", sim)
	if code != 0 {
		t.Fatalf("diff-runs: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"demo-sim run 1 (ticks 1..2) → demo-sim run 2 (ticks 3..3)\n",
		"  model resolution: test-model → big-1\n",
		"  template phase1_intention_system.md: default sha256:",
		" → " + over + " sha256:",
		"  config llm.timeout: 1m0s → 30s\n",
		`  config phases.resolution.model: "" → big-1` + "\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("diff-runs lacks %q:\n%s", want, out)
		}
	}
	for _, unchanged := range []string{"base_url", "schema ", "seed", "llm.api_key", "phase1_intention_user.md", "intention: "} {
		if strings.Contains(out, unchanged) {
			t.Errorf("diff-runs names %q, which did not change:\n%s", unchanged, out)
		}
	}
}

// checkDiffRunsJSON checks diff-runs --json of TestRunManifest's runs of
// sim in the order asked (2, then 1), and diff-runs of a run with itself.
func checkDiffRunsJSON(t *testing.T, sim string) {
	t.Helper()
	code, out, _ := arbiter(t, "diff-runs", sim, "--run", "2", "--run", "1", "--json")
	var d session.RunsDiff
	if code != 0 || json.Unmarshal([]byte(out), &d) != nil {
		t.Fatalf("diff-runs --json: exit %d\n%s", code, out)
	}
	if d.Same || d.A.Run != 2 || d.B.Run != 1 || d.A.FirstTick != 3 || d.B.LastTick != 2 || d.A.Simulation != "demo-sim" {
		t.Errorf("diff-runs --json = %+v", d)
	}
	found := false
	for _, c := range d.Changes {
		if c == (manifest.Change{What: "model", Key: "resolution", Old: "big-1", New: "test-model"}) {
			found = true
		}
	}
	if !found {
		t.Errorf("diff-runs --json lacks the model change: %+v", d.Changes)
	}
	code, out, _ = arbiter(t, "diff-runs", sim, "--run", "1", "--run", "1")
	if code != 0 || !strings.Contains(out, "no differences") {
		t.Errorf("diff-runs of a run with itself: exit %d\n%s", code, out)
	}
}

// TestDiffRunsErrors: every way diff-runs cannot compare is exit 2 with a
// message naming what is wrong and, for a run, the runs there are.
func TestDiffRunsErrors(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	none := demoCopy(t)
	one := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", one); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	two := demoCopy(t)
	for range 2 {
		if code, _, errOut := arbiter(t, "run", two); code != 0 {
			t.Fatalf("run: exit %d\n%s", code, errOut)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{none}, none + " has 0 runs (no run has committed a tick yet): diff-runs compares two"},
		{[]string{one}, one + " has 1 run (its only run is 1): diff-runs compares two; run it again, or compare it with another simulation"},
		{[]string{two, "--run", "1", "--run", "5"}, "--run 5: " + two + " has no run 5 (its runs: 1..2)"},
		{[]string{two, "--run", "0", "--run", "1"}, "--run 0: " + two + " has no run 0 (its runs: 1..2)"},
		{[]string{two, "--run", "1"}, "--run given 1 time: give two (--run 1 --run 2)"},
		{[]string{two, "--run", "1", "--run", "2", "--run", "2"}, "--run given 3 times"},
		{[]string{one, two, "--run", "1", "--run", "1"}, "--run picks runs of one simulation"},
		{[]string{two, none}, none + " has no runs yet"},
		{[]string{one, two, none}, "takes 1 or 2 arguments, got 3"},
		{[]string{filepath.Join(t.TempDir(), "nowhere")}, "nowhere"},
	} {
		code, out, errOut := arbiter(t, append([]string{"diff-runs"}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("diff-runs %v: exit %d, want %d and %q\nstdout: %s\nstderr: %s", tc.args, code, ExitUsage, tc.want, out, errOut)
		}
	}
}

// TestGameManifestSeed: a game's manifest has its seed (and no model when
// every seat is a bot, nor an endpoint); diff-runs of two games says the
// seed changed.
func TestGameManifestSeed(t *testing.T) {
	cleanEnv(t)
	a := gameCopy(t, "conquest-demo")
	b := gameCopy(t, "conquest-demo")
	yaml := filepath.Join(b, "simulation.yaml")
	text, _ := os.ReadFile(yaml)
	os.WriteFile(yaml, []byte(strings.Replace(string(text), "seed: 7 ", "seed: 9 ", 1)), 0o644)
	for _, dir := range []string{a, b} {
		if code, _, errOut := arbiter(t, "run", dir, "--ticks", "2"); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", dir, code, errOut)
		}
	}
	m := readStatus(t, a).LastRun.Manifest
	if m.Seed == nil || *m.Seed != 7 || len(m.Models) != 0 || m.BaseURL != "" || m.Kind != "conquest" ||
		len(m.Templates) != 1 || m.Templates[0].Name != "conquest_system.md" {
		t.Errorf("conquest manifest = %+v", m)
	}
	code, out, errOut := arbiter(t, "diff-runs", a, b)
	if code != 0 || !strings.Contains(out, "  seed: 7 → 9\n") {
		t.Errorf("diff-runs of two seeds: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestChatAndPlayStoreManifests: chat and play store a run too.
func TestChatAndPlayStoreManifests(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.Content("Hello, co-author.")))
	sim := chronicleCopy(t)
	if code, out, errOut := arbiterIn(t, "Hi\n", "chat", sim); code != 0 {
		t.Fatalf("chat: exit %d\n%s\n%s", code, out, errOut)
	}
	r := readStatus(t, sim).LastRun
	if r == nil || r.Manifest.Kind != "chronicle" || len(r.Manifest.Models) != 1 || r.Manifest.Models[0] != (manifest.PhaseModel{Phase: "chat", Model: "test-model"}) {
		t.Errorf("chat's run = %+v", r)
	}

	duel := gameCopy(t, "duel-demo")
	code, out, errOut := play(t, "none\n\nnone\n\n/quit\n", duel, "--seat", "p1")
	if code != 0 {
		t.Fatalf("play: exit %d\n%s\n%s", code, out, errOut)
	}
	r = readStatus(t, duel).LastRun
	if r == nil || r.Manifest.Kind != "duel" || r.Manifest.Seed == nil || len(r.Manifest.Schemas) != 2 {
		t.Errorf("play's run = %+v", r)
	}
}

// TestDiffRunsFlags: the arguments and --run reach the options.
func TestDiffRunsFlags(t *testing.T) {
	var got *DiffRunsOptions
	err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newDiffRunsCmd(io, g, func(_ context.Context, o *DiffRunsOptions) error { got = o; return nil })
	}, "sims/x", "--run", "3", "--run", "1")
	if err != nil || got == nil || strings.Join(got.Dirs, ",") != "sims/x" || len(got.Runs) != 2 || got.Runs[0] != 3 || got.Runs[1] != 1 {
		t.Errorf("diff-runs options = %+v, %v", got, err)
	}
	err = runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newDiffRunsCmd(io, g, func(_ context.Context, o *DiffRunsOptions) error { got = o; return nil })
	}, "a", "b")
	if err != nil || strings.Join(got.Dirs, ",") != "a,b" || len(got.Runs) != 0 {
		t.Errorf("diff-runs of two simulations: options = %+v, %v", got, err)
	}
}

// TestManifestConfigHasNoSecrets: the configuration a manifest stores
// holds neither the key (not even its last characters) nor the base URL's
// user information or query secrets.
func TestManifestConfigHasNoSecrets(t *testing.T) {
	t.Parallel()
	c := Config{LLM: LLMConfig{APIKey: leakKey, BaseURL: "https://bob:" + leakPass + "@h.example/v1?api-version=2024-06-01&api-key=" + leakKey}}
	got, err := c.manifestConfig()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(got)
	for _, secret := range []string{leakKey, leakPass, leakKey[len(leakKey)-4:], "bob"} {
		if strings.Contains(string(b), secret) {
			t.Errorf("manifest config holds %q: %s", secret, b)
		}
	}
	if got["llm.base_url"] != "https://h.example/v1?api-key=%5Bredacted%5D&api-version=2024-06-01" || got["llm.api_key"] != llm.Redacted {
		t.Errorf("base_url %q, api_key %q", got["llm.base_url"], got["llm.api_key"])
	}
	c.LLM.APIKey = ""
	if got, _ := c.manifestConfig(); got["llm.api_key"] != "" {
		t.Errorf("no key: api_key %q, want \"\"", got["llm.api_key"])
	}
}
