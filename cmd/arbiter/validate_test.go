package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeFiles writes name -> content under dir, making folders as needed.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestValidateSilentNoMore: a narrative with no characters and a file with a
// second YAML document are problems (exit 2, each named on stdout); folders
// a kind ignores are warnings that pass.
func TestValidateSilentNoMore(t *testing.T) {
	cleanEnv(t)
	for _, tc := range append(validateCases(), validatePromptCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			dir := gameCopy(t, tc.sim)
			tc.setup(t, dir)
			code, out, errOut := arbiter(t, "validate", dir)
			lines := strings.Split(strings.TrimSuffix(strings.ReplaceAll(out, dir, "<sim>"), "\n"), "\n")
			if code != tc.code || len(lines) != len(tc.want) {
				t.Fatalf("exit %d (want %d)\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for i, want := range tc.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q, want it to start %q", i+1, lines[i], want)
				}
			}
			if errOut = strings.ReplaceAll(errOut, dir, "<sim>"); !strings.Contains(errOut, tc.wantErr) {
				t.Errorf("stderr = %q, want %q", errOut, tc.wantErr)
			}
		})
	}
}

// validateCase is a simulation sim changed by setup and what validate says
// of it: its exit code, the lines of stdout (with <sim> for the folder),
// and what stderr holds.
type validateCase struct {
	name    string
	sim     string
	setup   func(t *testing.T, dir string)
	code    int
	want    []string // lines of stdout, with <sim> for the folder
	wantErr string   // in stderr
}

func validateCases() []validateCase {
	const conquestIgnores = ": folder ignored: a conquest simulation reads only simulation.yaml and prompts/"
	return []validateCase{
		{
			name: "narrative with an empty characters folder",
			sim:  "demo-sim",
			setup: func(t *testing.T, dir string) {
				files, _ := filepath.Glob(filepath.Join(dir, "characters", "*.yaml"))
				for _, f := range files {
					os.Remove(f)
				}
			},
			code:    ExitUsage,
			want:    []string{"<sim>/characters: no characters: a narrative simulation needs at least one characters/*.yaml"},
			wantErr: "<sim>: 1 problem(s)",
		},
		{
			name: "second document in a character file",
			sim:  "demo-sim",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"characters/zed.yaml": "id: zed\nname: Zed\ndescription: A ferryman.\nstate:\n  location: lock\n---\nid: x\n"})
			},
			code:    ExitUsage,
			want:    []string{"<sim>/characters/zed.yaml:6: a second YAML document starts here: a character file holds one document; put each character in a file of its own in characters/"},
			wantErr: "<sim>: 1 problem(s)",
		},
		{
			// Once parsed as narrative characters, and failed; now not read.
			name: "conquest with characters and locations",
			sim:  "conquest-demo",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"characters/bo.yaml": "id: bo\n", "locations/hall.yaml": "id: hall\n"})
			},
			want: []string{
				"warning: <sim>/characters" + conquestIgnores,
				"warning: <sim>/locations" + conquestIgnores,
				"ok: conquest-demo (conquest, 2 warnings)",
			},
		},
		{
			name: "duel with a folder of notes",
			sim:  "duel-demo",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"notes/plan.md": "win\n"})
			},
			want: []string{
				"warning: <sim>/notes: folder ignored: a duel simulation reads only simulation.yaml, ships.yaml and prompts/",
				"ok: duel-demo (duel, 1 warning)",
			},
		},
		{
			name: "conquest with a bad setting and a characters folder",
			sim:  "conquest-demo",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{
					"characters/bo.yaml": "id: bo\n",
					"simulation.yaml":    "id: conquest-demo\nkind: conquest\ntitle: T\nsettings:\n  stars: 0\n  seats: {p1: bot, p2: bot}\n",
				})
			},
			code:    ExitUsage,
			want:    []string{"<sim>/simulation.yaml: settings.stars: ", "warning: <sim>/characters" + conquestIgnores},
			wantErr: "<sim>: 1 problem(s)",
		},
		{
			name: "narrative with a misspelt folder",
			sim:  "demo-sim",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{"prompt/phase1_intention_system.md": "x\n"})
			},
			want: []string{
				"warning: <sim>/prompt: folder ignored: a narrative simulation reads only simulation.yaml, characters/, evals/, locations/ and prompts/",
				"ok: demo-sim (6 characters, 5 locations, 1 warning)",
			},
		},
	}
}

// validatePromptCases are validateCases of prompt templates.
func validatePromptCases() []validateCase {
	return []validateCase{
		{
			// Once stopped at the stray file; the typo showed only after it
			// was removed.
			name: "narrative with a stray prompt file and a typo in a template",
			sim:  "demo-sim",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{
					"prompts/notes.md":                 "ideas\n",
					"prompts/phase1_intention_user.md": "Tick {{.Simulation.Tick}}: {{.Character.Nmae}}\n",
				})
			},
			code: ExitUsage,
			want: []string{
				"overridden: phase1_intention_user.md (<sim>/prompts/phase1_intention_user.md)",
				"<sim>/prompts/notes.md: not a prompt template; an override must have the name of one of: ",
				"prompt phase1_intention_user.md (<sim>/prompts/phase1_intention_user.md): template: phase1_intention_user.md:1:39: executing \"phase1_intention_user.md\" at <.Character.Nmae>: can't evaluate field Nmae",
			},
			wantErr: "<sim>: 2 problem(s)",
		},
		{
			name: "narrative with overrides and a length they disagree on",
			sim:  "demo-sim",
			setup: func(t *testing.T, dir string) {
				writeFiles(t, dir, map[string]string{
					"prompts/phase1_intention_system.md":   "You are {{.Character.Name}}. Answer with one sentence of at most 80 characters.\n",
					"prompts/phase2a_resolution_system.md": "You keep {{.Location.Name}}: memories of 1 to {{.Answer.MemoryEntry.MaxLength}} characters.\n",
				})
			},
			want: []string{
				"overridden: phase1_intention_system.md (<sim>/prompts/phase1_intention_system.md)",
				"overridden: phase2a_resolution_system.md (<sim>/prompts/phase2a_resolution_system.md)",
				`warning: <sim>/prompts/phase1_intention_system.md: says "at most 80 characters", but the intention answer's schema allows no field 80 characters (max_length: intention 400)`,
				"ok: demo-sim (6 characters, 5 locations, 2 templates overridden, 1 warning)",
			},
		},
	}
}

// TestValidateJSONWarnings: --json lists warnings beside problems, both
// always arrays, and ok stays true with warnings only.
func TestValidateJSONWarnings(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	writeFiles(t, dir, map[string]string{"characters/bo.yaml": "id: bo\n"})
	var got struct {
		OK       bool     `json:"ok"`
		Problems []string `json:"problems"`
		Warnings []string `json:"warnings"`
	}
	code, out, errOut := arbiter(t, "validate", dir, "--json")
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !got.OK || got.Problems == nil || len(got.Problems) != 0 || len(got.Warnings) != 1 ||
		got.Warnings[0] != filepath.Join(dir, "characters")+": folder ignored: a conquest simulation reads only simulation.yaml and prompts/" {
		t.Errorf("validate --json = %s", out)
	}

	code, out, _ = arbiter(t, "validate", gameCopy(t, "duel-demo"), "--json")
	if code != 0 || !strings.Contains(out, `"warnings": []`) || !strings.Contains(out, `"problems": []`) {
		t.Errorf("validate --json with nothing to say: exit %d\n%s", code, out)
	}
}

// TestRunWarnsOnce: run plays a simulation with a folder its kind ignores,
// saying so once on stderr (stdout keeps only the run's lines); a narrative
// with no characters is refused before anything is written.
func TestRunWarnsOnce(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	writeFiles(t, dir, map[string]string{"characters/bo.yaml": "id: bo\n"})
	code, out, errOut := arbiter(t, "run", dir, "--ticks", "2")
	if code != 0 || !strings.Contains(out, "tick 2 committed") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	warning := filepath.Join(dir, "characters") + ": folder ignored: a conquest simulation reads only simulation.yaml and prompts/"
	if n := strings.Count(errOut, warning); n != 1 || !strings.Contains(errOut, "WARNING") {
		t.Errorf("run printed the warning %d times on stderr, want once:\n%s", n, errOut)
	}
	if strings.Contains(out, "folder ignored") {
		t.Errorf("the warning reached stdout:\n%s", out)
	}

	sim := demoCopy(t)
	files, _ := filepath.Glob(filepath.Join(sim, "characters", "*.yaml"))
	for _, f := range files {
		os.Remove(f)
	}
	before := tree(t, sim)
	code, _, errOut = arbiter(t, "run", sim, "--ticks", "1")
	if code != ExitUsage || !strings.Contains(errOut, filepath.Join(sim, "characters")+": no characters: a narrative simulation needs at least one characters/*.yaml") {
		t.Errorf("run with no characters: exit %d\n%s", code, errOut)
	}
	if after := tree(t, sim); len(after) != len(before) {
		t.Errorf("run with no characters wrote files: %v", after)
	}
	if _, err := os.Stat(filepath.Join(sim, "state.db")); err == nil {
		t.Error("run with no characters created state.db")
	}
}

// TestValidateWarnsOfACrowdResolvedInSeveralCalls: a world where more
// characters can gather in one location than one resolution call resolves
// is not refused; validate warns, naming the location, the limit and its
// key, and passes. A max_characters past the output budget is refused.
func TestValidateWarnsOfACrowdResolvedInSeveralCalls(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "demo-sim") // 6 characters, every location reachable from every other
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "2")
	code, out, errOut := arbiter(t, "validate", dir)
	if code != 0 || !strings.Contains(out, "warning: 6 characters can gather in location ") ||
		!strings.Contains(out, "more than one resolution call resolves (2, phases.resolution.max_characters") ||
		!strings.Contains(out, "resolved in up to 3 calls a tick") || !strings.Contains(out, "ok: demo-sim (6 characters, 5 locations, 1 warning)") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "100")
	t.Setenv("ARBITER_LLM_MAX_OUTPUT_TOKENS", "4096")
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_TOKENS", "2048")
	code, out, errOut = arbiter(t, "validate", dir)
	if code == 0 || !strings.Contains(out+errOut, "phases.resolution.max_characters 100: an answer for that many may take 25300 tokens, more than llm.max_output_tokens 4096") {
		t.Errorf("max_characters past the budget: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "0")
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_TOKENS", "8000")
	code, out, errOut = arbiter(t, "validate", dir)
	if code == 0 || !strings.Contains(out+errOut, "config phases.resolution.max_tokens: 8000 is more than llm.max_output_tokens 4096") {
		t.Errorf("max_tokens past llm.max_output_tokens: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
