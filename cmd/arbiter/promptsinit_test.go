package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestPromptsInit: init writes the kind's default templates (a phase's
// with --phase), names each on stdout, and leaves a simulation that
// validates with them as overrides; a second init refuses with exit 2,
// naming the file there and writing nothing, unless --force; an unknown
// phase names the kind's phases; --json lists the files written.
func TestPromptsInit(t *testing.T) {
	cleanEnv(t)
	dir := demoCopy(t)
	folder := filepath.Join(dir, "prompts")
	code, out, errOut := arbiter(t, "prompts", "init", dir, "--phase", "resolution")
	if want := "wrote " + filepath.Join(folder, "phase2a_resolution_system.md") + "\nwrote " + filepath.Join(folder, "phase2a_resolution_user.md") + "\n"; code != 0 || out != want {
		t.Fatalf("init --phase resolution: exit %d\nstdout %q, want %q\nstderr %s", code, out, want, errOut)
	}
	if !strings.Contains(errOut, "arbiter prompts render "+dir) || !strings.Contains(errOut, "arbiter validate "+dir) {
		t.Errorf("init does not say what comes next: %s", errOut)
	}
	code, out, _ = arbiter(t, "validate", dir)
	if code != 0 || !strings.Contains(out, "overridden: phase2a_resolution_user.md ("+filepath.Join(folder, "phase2a_resolution_user.md")+")") ||
		!strings.Contains(out, "2 templates overridden") {
		t.Errorf("validate after init: exit %d\n%s", code, out)
	}

	edited := filepath.Join(folder, "phase2a_resolution_user.md")
	if err := os.WriteFile(edited, []byte("Tick {{.Simulation.Tick}}."), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = arbiter(t, "prompts", "init", dir)
	if code != ExitUsage || out != "" || !strings.Contains(errOut, edited) || !strings.Contains(errOut, "--force") {
		t.Errorf("init over an edited file: exit %d\nstdout %q\nstderr %q", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(folder, "phase1_intention_system.md")); err == nil {
		t.Error("a refused init wrote the intention templates")
	}

	var got struct{ Written []string }
	code, out, errOut = arbiter(t, "prompts", "init", dir, "--force", "--json")
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Written) != 4 {
		t.Fatalf("init --force --json: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(edited); !strings.HasPrefix(string(b), "Tick {{.Simulation.Tick}} in {{.Location.Name}}") {
		t.Errorf("--force left %s as edited: %q", edited, b)
	}

	code, _, errOut = arbiter(t, "prompts", "init", gameCopy(t, "duel-demo"), "--phase", "intention")
	if code != ExitUsage || !strings.Contains(errOut, `--phase "intention": a duel simulation's phases with prompt templates are build, charges`) {
		t.Errorf("init --phase intention on a duel: exit %d, %s", code, errOut)
	}
}

// TestPromptsInitFlags: init's flags reach its options.
func TestPromptsInitFlags(t *testing.T) {
	var got *PromptsInitOptions
	err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newPromptsInitCmd(io, g, func(_ context.Context, o *PromptsInitOptions) error { got = o; return nil })
	}, "sims/x", "--phase", "chat", "--force")
	if err != nil || got.Dir != "sims/x" || got.Phase != "chat" || !got.Force {
		t.Errorf("prompts init options = %+v, %v", got, err)
	}
}

// TestPromptsHelpShowsTheLoop: `prompts --help` walks an author through
// the loop, each command as it is typed, and lists init.
func TestPromptsHelpShowsTheLoop(t *testing.T) {
	cleanEnv(t)
	code, out, _ := arbiter(t, "prompts", "--help")
	for _, want := range []string{
		"arbiter prompts init SIM --phase P", "arbiter prompts render SIM --phase P --entity E", "arbiter validate SIM",
		"arbiter prompts try SIM --phase P --entity E", "arbiter eval SIM", "settings.answer", "init        Write the default prompt templates",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("prompts --help lacks %q:\n%s", want, out)
		}
	}
}

// TestValidateJSONOverrides: --json lists the overrides, template and
// file, always as an array.
func TestValidateJSONOverrides(t *testing.T) {
	cleanEnv(t)
	dir := demoCopy(t)
	writeFiles(t, dir, map[string]string{"prompts/phase1_intention_user.md": "Tick {{.Simulation.Tick}}."})
	var got struct {
		OK        bool `json:"ok"`
		Overrides []struct {
			Template, File string
		} `json:"overrides"`
	}
	code, out, errOut := arbiter(t, "validate", dir, "--json")
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !got.OK || len(got.Overrides) != 1 || got.Overrides[0].Template != "phase1_intention_user.md" || got.Overrides[0].File != filepath.Join(dir, "prompts", "phase1_intention_user.md") {
		t.Errorf("validate --json = %s", out)
	}
	if _, out, _ = arbiter(t, "validate", demoCopy(t), "--json"); !strings.Contains(out, `"overrides": []`) {
		t.Errorf("validate --json with no override: %s", out)
	}
}
