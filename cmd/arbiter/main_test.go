package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/filelock"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
)

// repoRoot is resolved before any test changes the working directory.
var repoRoot = func() string {
	p, err := filepath.Abs("../..")
	if err != nil {
		panic(err)
	}
	return p
}()

// TestMain lets a test re-run this binary as the arbiter command itself (for
// the kill-and-resume test): ARBITER_TEST_MAIN=1 makes it main().
func TestMain(m *testing.M) {
	if os.Getenv("ARBITER_TEST_MAIN") == "1" {
		os.Exit(runMain(os.Args[1:]))
	}
	os.Exit(runTests(m))
}

// arbiter runs the command in-process and returns exit code, stdout, stderr.
func arbiter(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := TestStreams("")
	code := Execute(context.Background(), io, args)
	return code, out.String(), errOut.String()
}

// cleanEnv clears every variable that could point arbiter at a real endpoint
// or config, and runs in an empty folder so no config.yaml is picked up.
func cleanEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "OPENAI_") || strings.HasPrefix(k, "ARBITER_") || strings.HasPrefix(k, "OTEL_") {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	t.Chdir(t.TempDir())
}

// demoCopy copies simulations/demo-sim into a temp folder and returns it.
func demoCopy(t *testing.T) string {
	t.Helper()
	return worldtest.Copy(t, filepath.Join(repoRoot, "simulations", "demo-sim"))
}

// tree hashes every file under dir except the run state.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	sums := map[string]string{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "state.db") {
			return err
		}
		b, _ := os.ReadFile(path)
		sums[path] = fmt.Sprintf("%x", sha256.Sum256(b))
		return nil
	})
	return sums
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// fakeModel starts the in-process OpenAI-compatible server answering every
// call validly and points arbiter at it.
func fakeModel(t *testing.T, h openaitest.Handler) *openaitest.Server {
	t.Helper()
	if h == nil {
		h = openaitest.FromSchema(nil)
	}
	srv := openaitest.New(t, h)
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	t.Setenv("ARBITER_LLM_MODEL", "test-model")
	return srv
}

func TestRunStatusExport(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	authored := tree(t, sim)

	code, out, errOut := arbiter(t, "run", sim, "--ticks", "2")
	if code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, want := range []string{"tick 1 committed: 11 calls, 0 failed", "tick 2 committed: 11 calls, 0 failed", "completed; last committed tick 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	if srv.CallCount() != 22 {
		t.Errorf("server saw %d calls, want 22 (6 characters + 5 locations, twice)", srv.CallCount())
	}
	if got := tree(t, sim); fmt.Sprint(got) != fmt.Sprint(authored) {
		t.Error("the run rewrote authored files")
	}

	code, out, _ = arbiter(t, "status", sim)
	if code != 0 || !strings.Contains(out, "last tick:    2") || !strings.Contains(out, "model calls:  22 (0 failed") || !strings.Contains(out, "truncated prompts: 0\n") {
		t.Errorf("status exit %d:\n%s", code, out)
	}
	code, out, _ = arbiter(t, "status", sim, "--json")
	var status struct {
		LastTick int `json:"last_tick"`
		Total    struct {
			Calls        int `json:"calls"`
			PromptTokens int `json:"prompt_tokens"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(out), &status); err != nil || code != 0 || status.LastTick != 2 || status.Total.PromptTokens != 22*openaitest.DefaultUsage.PromptTokens {
		t.Errorf("status --json exit %d err %v: %+v\n%s", code, err, status, out)
	}

	checkExportOfTick2(t, sim)

	// Resume: one more tick continues from 2.
	code, out, _ = arbiter(t, "run", sim, "--json")
	var rep struct {
		FirstTick int `json:"first_tick"`
		LastTick  int `json:"last_tick"`
		Stop      string
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 0 || rep.FirstTick != 3 || rep.LastTick != 3 || rep.Stop != "completed" {
		t.Errorf("resumed run exit %d %v: %+v\n%s", code, err, rep, out)
	}

	code, out, _ = arbiter(t, "reset", sim)
	if code != 0 || exists(filepath.Join(sim, "state.db")) || !strings.Contains(out, "deleted") {
		t.Errorf("reset exit %d, state.db still there: %v\n%s", code, exists(filepath.Join(sim, "state.db")), out)
	}
	if got := tree(t, sim); fmt.Sprint(got) != fmt.Sprint(authored) {
		t.Error("reset touched authored files")
	}
}

// checkExportOfTick2 checks export of demo-sim's copy sim after two ticks:
// the state of tick 2 with every character's memories, the authored state
// of tick 0 with none, and a tick not committed refused.
func checkExportOfTick2(t *testing.T, sim string) {
	t.Helper()
	code, out, _ := arbiter(t, "export", sim, "--format", "json")
	var state struct {
		Tick       int `json:"tick"`
		Characters map[string]struct {
			Location       string `json:"location"`
			InternalState  string `json:"internal_state"`
			ExternalIntent string `json:"external_intent"`
			Memory         []struct {
				Tick  int    `json:"tick"`
				Entry string `json:"entry"`
			} `json:"memory"`
		} `json:"characters"`
		Locations map[string]struct {
			Moment      *string `json:"moment"`
			Description *string `json:"description"`
		} `json:"locations"`
	}
	if err := json.Unmarshal([]byte(out), &state); err != nil || code != 0 {
		t.Fatalf("export exit %d, %v:\n%s", code, err, out)
	}
	if state.Tick != 2 || len(state.Characters) != 6 || len(state.Locations) != 5 {
		t.Errorf("export: tick %d, %d characters, %d locations", state.Tick, len(state.Characters), len(state.Locations))
	}
	if m := state.Characters["wren"].Memory; len(m) != 2 || m[1].Tick != 2 || m[1].Entry == "" {
		t.Errorf("wren's memory %+v, want 2 entries", m)
	}
	if l := state.Locations["lock"]; l.Moment == nil || l.Description == nil {
		t.Errorf("lock lacks moment/description: %+v", l)
	}

	code, out, _ = arbiter(t, "export", sim, "--tick", "0")
	if code != 0 || !strings.Contains(out, `"tick": 0`) || strings.Contains(out, `"entry"`) {
		t.Errorf("export --tick 0 exit %d: want the authored state with no memories:\n%s", code, out)
	}
	code, _, errOut := arbiter(t, "export", sim, "--tick", "5")
	if code != ExitUsage || !strings.Contains(errOut, "--tick 5: no such tick (committed ticks: 0..2") {
		t.Errorf("export --tick 5: exit %d, %s", code, errOut)
	}
}

func TestExportAndStatusBeforeFirstRun(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	code, out, _ := arbiter(t, "export", sim)
	if code != 0 || !strings.Contains(out, `"tick": 0`) || !strings.Contains(out, `"undercroft"`) {
		t.Errorf("export before any run: exit %d\n%s", code, out)
	}
	code, out, _ = arbiter(t, "status", sim)
	if code != 0 || !strings.Contains(out, "no tick committed yet") {
		t.Errorf("status before any run: exit %d\n%s", code, out)
	}
	if exists(filepath.Join(sim, "state.db")) {
		t.Error("a read-only command created state.db")
	}
}

// TestRunFailuresLeaveNothing: every way a first run can fail before a tick
// commits gives one clear message, its exit code, and no state.db.
func TestRunFailuresLeaveNothing(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, sim string)
		code  int
		want  []string
	}{
		{"no endpoint", func(t *testing.T, sim string) {}, ExitUsage,
			[]string{"no model endpoint configured", "OPENAI_API_KEY", "OPENAI_BASE_URL"}},
		{"unreachable endpoint", func(t *testing.T, sim string) {
			t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
			t.Setenv("ARBITER_LLM_MAX_ATTEMPTS", "1")
		}, ExitModel, []string{"quorum_failure", "connection refused to http://127.0.0.1:9/v1"}},
		{"401", func(t *testing.T, sim string) {
			fakeModel(t, openaitest.Always(openaitest.Status(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")))
		}, ExitModel, []string{"quorum_failure", "401", "OPENAI_API_KEY"}},
		{"malformed yaml", func(t *testing.T, sim string) {
			fakeModel(t, nil)
			os.WriteFile(filepath.Join(sim, "characters", "pip.yaml"), []byte("id: pip\nname: [unclosed\n"), 0o644)
		}, ExitUsage, []string{"characters/pip.yaml:2"}},
		{"unknown connection", func(t *testing.T, sim string) {
			fakeModel(t, nil)
			b, _ := os.ReadFile(filepath.Join(sim, "locations", "wharf.yaml"))
			os.WriteFile(filepath.Join(sim, "locations", "wharf.yaml"), []byte(strings.Replace(string(b), "connections: [", "connections: [atlantis, ", 1)), 0o644)
		}, ExitUsage, []string{"locations/wharf.yaml:13", `"atlantis" is not a location`}},
		{"missing template variable", func(t *testing.T, sim string) {
			fakeModel(t, nil)
			os.MkdirAll(filepath.Join(sim, "prompts"), 0o755)
			os.WriteFile(filepath.Join(sim, "prompts", "phase1_intention_user.md"), []byte("You are {{.Character.Nickname}}.\n"), 0o644)
		}, ExitUsage, []string{"phase1_intention_user.md", "Nickname"}},
		{"bad config value", func(t *testing.T, sim string) {
			fakeModel(t, nil)
			t.Setenv("ARBITER_LLM_CONCURRENCY", "0")
		}, ExitUsage, []string{"llm.concurrency"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			sim := demoCopy(t)
			tc.setup(t, sim)
			code, out, errOut := arbiter(t, "run", sim, "--ticks", "1")
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if n := strings.Count(errOut, "arbiter: "); n != 1 {
				t.Errorf("want one error message, got %d:\n%s", n, errOut)
			}
			if exists(filepath.Join(sim, "state.db")) {
				t.Error("a failed first run left state.db behind")
			}
		})
	}
}

func TestUsageErrors(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"run"}, "takes 1 argument, got 0"},
		{[]string{"run", sim, "--ticks", "0"}, "--ticks must be at least 1"},
		{[]string{"run", sim, "--tikcs", "2"}, "unknown flag: --tikcs"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"export", sim, "--format", "xml"}, `--format "xml": only json is supported`},
		{[]string{"run", filepath.Join(sim, "nope")}, "nope: cannot open simulation folder"},
		{[]string{"prompts", "render", sim, "--phase", "resolution", "--entity", "moon"}, `entity "moon": no such location`},
		{[]string{"prompts", "render", sim, "--phase", "dreaming", "--entity", "lock"}, `phase "dreaming": must be intention or resolution`},
		{[]string{"prompts", "render", sim, "--entity", "lock"}, `required flag(s) "phase" not set`},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, errOut := arbiter(t, tc.args...)
			if code != ExitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d (want %d), stderr:\n%s\nwant %q", code, ExitUsage, errOut, tc.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	code, out, _ := arbiter(t, "validate", sim)
	if code != 0 || !strings.Contains(out, "ok: demo-sim (6 characters, 5 locations)") {
		t.Errorf("validate demo-sim: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(sim, "characters", "pip.yaml"), []byte("id: Pip!\nname: Pip\ndescription: x\nstate:\n  location: lock\n"), 0o644)
	os.WriteFile(filepath.Join(sim, "characters", "pip2.yaml"), []byte("id: wren\nname: Wren Two\ndescription: x\nstate:\n  location: mars\n"), 0o644)
	code, out, _ = arbiter(t, "validate", sim)
	if code != ExitUsage {
		t.Errorf("validate broken sim: exit %d, want %d", code, ExitUsage)
	}
	for _, want := range []string{"characters/pip.yaml:1", `"Pip!"`, "pip2.yaml", `"wren"`, `"mars"`} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
}

func TestPromptsRender(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "prompts", "render", sim, "--phase", "resolution", "--entity", "lock")
	if code != 0 || !strings.Contains(out, "===== system =====") || !strings.Contains(out, "===== user =====") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "The Low Water at Vesper Lock") {
		t.Errorf("rendered prompt lacks the simulation title:\n%s", out)
	}
	// An override by file name wins over the default.
	os.MkdirAll(filepath.Join(sim, "prompts"), 0o755)
	os.WriteFile(filepath.Join(sim, "prompts", "phase2a_resolution_user.md"), []byte("Resolve {{.Location.Name}} at tick {{.Simulation.Tick}}.\n"), 0o644)
	code, out, _ = arbiter(t, "prompts", "render", sim, "--phase", "resolution", "--entity", "lock", "--part", "user")
	if code != 0 || strings.TrimSpace(out) != "Resolve The Lock at tick 1." && !strings.HasPrefix(strings.TrimSpace(out), "Resolve ") {
		t.Errorf("override not used: exit %d\n%s", code, out)
	}
}

func TestSchemasCheck(t *testing.T) {
	cleanEnv(t)
	dir := filepath.Join(repoRoot, "schemas")
	code, out, errOut := arbiter(t, "schemas", "check", "--dir", dir)
	if code != 0 || !strings.Contains(out, "up to date") {
		t.Errorf("schemas check on the committed files: exit %d\n%s%s", code, out, errOut)
	}
	tmp := t.TempDir()
	code, _, errOut = arbiter(t, "schemas", "check", "--dir", tmp)
	if code != ExitUsage || !strings.Contains(errOut, "arbiter schemas generate") {
		t.Errorf("schemas check on an empty folder: exit %d\n%s", code, errOut)
	}
	code, out, _ = arbiter(t, "schemas", "generate", "--dir", tmp)
	if code != 0 || !exists(filepath.Join(tmp, "MasterOutput.schema.json")) || !exists(filepath.Join(tmp, "IntentionResponse.schema.json")) {
		t.Errorf("schemas generate: exit %d\n%s", code, out)
	}
	if code, _, _ = arbiter(t, "schemas", "check", "--dir", tmp); code != 0 {
		t.Errorf("check after generate: exit %d", code)
	}
}

func TestValidateChronicle(t *testing.T) {
	cleanEnv(t)
	sim := chronicleCopy(t)
	if code, out, errOut := arbiter(t, "validate", sim); code != 0 || !strings.Contains(out, "ok: chronicle-demo (chronicle)") {
		t.Errorf("validate chronicle-demo: exit %d\n%s%s", code, out, errOut)
	}
	os.WriteFile(filepath.Join(sim, "chronicle.json"), []byte("{not json"), 0o644)
	if code, out, _ := arbiter(t, "validate", sim); code != ExitUsage || !strings.Contains(out, "chronicle.json") {
		t.Errorf("validate with a broken chronicle.json: exit %d\n%s", code, out)
	}
}

// TestEditedFilesAfterARun: renaming a location after a run makes run, export
// and prompts render stop with one message that says how to start over.
func TestEditedFilesAfterARun(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, out, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	b, _ := os.ReadFile(filepath.Join(sim, "locations", "undercroft.yaml"))
	os.WriteFile(filepath.Join(sim, "locations", "undercroft.yaml"), []byte(strings.Replace(string(b), "id: undercroft", "id: crypt", 1)), 0o644)
	for _, f := range []string{"lock.yaml"} {
		p := filepath.Join(sim, "locations", f)
		b, _ := os.ReadFile(p)
		os.WriteFile(p, []byte(strings.ReplaceAll(string(b), "undercroft", "crypt")), 0o644)
	}
	for _, args := range [][]string{
		{"run", sim},
		{"export", sim},
		{"prompts", "render", sim, "--phase", "resolution", "--entity", "lock"},
	} {
		code, _, errOut := arbiter(t, args...)
		if code != ExitUsage || !strings.Contains(errOut, "arbiter reset") || !strings.Contains(errOut, `"undercroft"`) {
			t.Errorf("%v: exit %d, want %d with a reset hint:\n%s", args[0], code, ExitUsage, errOut)
		}
	}
}

// TestCommandsOnAChronicle: run says a chronicle is played with chat;
// status, export, validate and prompts render work on one.
func TestCommandsOnAChronicle(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := chronicleCopy(t)
	code, _, errOut := arbiter(t, "run", sim)
	if code != ExitUsage || !strings.Contains(errOut, "is a chronicle simulation") || !strings.Contains(errOut, "arbiter chat") {
		t.Errorf("run on a chronicle: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"status", sim}, []string{"(chronicle)", "phase:", "setup", "messages:", "0", "no tick committed yet"}},
		{[]string{"export", sim}, []string{`"big_picture": "On a coast`, `"phase": "setup"`, `"messages": []`}},
		{[]string{"validate", sim}, []string{"ok: "}},
		{[]string{"prompts", "render", sim, "--phase", "chat"}, []string{"# chat call chronicle:", "===== system =====", "Write your next message to the person."}},
	} {
		code, out, errOut := arbiter(t, tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d\n%s", tc.args, code, errOut)
			continue
		}
		texttest.InOrder(t, out, tc.want...)
	}
	if code, _, errOut := arbiter(t, "prompts", "render", sim, "--phase", "intention", "--entity", "x"); code != ExitUsage || !strings.Contains(errOut, `--phase "intention": a chronicle has one phase, chat`) {
		t.Errorf("prompts render --phase intention on a chronicle: exit %d\n%s", code, errOut)
	}
	if exists(filepath.Join(sim, "state.db")) {
		t.Error("a read-only command created state.db")
	}
}

// TestSimulationInUse: a run or a chat on a simulation another process holds
// stops at once with one message, before any model call or write.
func TestSimulationInUse(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	demo := demoCopy(t)
	for _, tc := range []struct {
		dir  string
		args func(dir string) []string
	}{
		{demo, func(d string) []string { return []string{"run", d} }},
		{chronicleCopy(t), func(d string) []string { return []string{"chat", d} }},
	} {
		unlock, err := filelock.TryLock(tc.dir)
		if err != nil {
			t.Fatal(err)
		}
		code, _, errOut := arbiterIn(t, "hello\n/quit\n", tc.args(tc.dir)...)
		unlock()
		if code != ExitError || !strings.Contains(errOut, "is in use by another arbiter process") {
			t.Errorf("%v: exit %d\n%s", tc.args(tc.dir)[0], code, errOut)
		}
	}
	if srv.CallCount() != 0 || exists(filepath.Join(demo, "state.db")) {
		t.Errorf("a locked-out command called the model %d times or wrote state.db", srv.CallCount())
	}
}

// TestStatusSaysWhyTheRunStopped: after a run that stopped short (here an
// unreachable endpoint at tick 2), status names the tick, the reason and the
// error; the next successful tick clears it.
func TestStatusSaysWhyTheRunStopped(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	if code, _, _ := arbiter(t, "run", sim, "--base-url", "http://127.0.0.1:9/v1", "--max-attempts", "1"); code != ExitModel {
		t.Fatalf("run on a dead endpoint: exit %d, want %d", code, ExitModel)
	}
	_, out, _ := arbiter(t, "status", sim)
	if !strings.Contains(out, "last run:     stopped at tick 2, not committed (quorum_failure") || !strings.Contains(out, "connection refused to http://127.0.0.1:9/v1") {
		t.Errorf("status does not say why the run stopped:\n%s", out)
	}
	t.Setenv("OPENAI_BASE_URL", srv.URL)
	arbiter(t, "run", sim)
	if _, out, _ := arbiter(t, "status", sim); strings.Contains(out, "last run:") {
		t.Errorf("status still reports a stop that a later tick got past:\n%s", out)
	}
}

func TestValidateTemplates(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	os.MkdirAll(filepath.Join(sim, "prompts"), 0o755)
	os.WriteFile(filepath.Join(sim, "prompts", "phase2a_resolution_user.md"), []byte("{{.Location.Weather}}\n"), 0o644)
	code, out, _ := arbiter(t, "validate", sim)
	if code != ExitUsage || !strings.Contains(out, "phase2a_resolution_user.md") || !strings.Contains(out, "Weather") {
		t.Errorf("validate with a broken override: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(sim, "prompts", "phase3_unknown.md"), []byte("x"), 0o644)
	if code, out, _ := arbiter(t, "validate", sim); code != ExitUsage || !strings.Contains(out, "phase3_unknown.md") {
		t.Errorf("validate with an unknown override file: exit %d\n%s", code, out)
	}
}

// TestContextWindowChecked: with llm.context_tokens set, validate lists
// every first-tick call that would not fit, and run refuses before any
// call is paid for; a window that fits passes.
func TestContextWindowChecked(t *testing.T) {
	cleanEnv(t)
	sim := demoCopy(t)
	srv := fakeModel(t, nil)
	t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", "2000")
	code, out, _ := arbiter(t, "validate", sim)
	if code != ExitUsage || !strings.Contains(out, "resolution call of resolution:common at tick 1: its prompt is about") ||
		!strings.Contains(out, "more than llm.context_tokens 2000") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
	code, _, errOut := arbiter(t, "run", sim)
	if code != ExitUsage || !strings.Contains(errOut, "llm.context_tokens 2000") || len(srv.Calls()) != 0 || exists(filepath.Join(sim, "state.db")) {
		t.Fatalf("run: exit %d, %d calls\n%s", code, len(srv.Calls()), errOut)
	}
	t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", "16000")
	if code, out, _ := arbiter(t, "validate", sim); code != 0 {
		t.Errorf("validate with room: exit %d\n%s", code, out)
	}
	t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", "-1")
	if code, _, errOut := arbiter(t, "validate", sim); code != ExitUsage || !strings.Contains(errOut, "llm.context_tokens: must be a whole number from 0 to 100000000, got -1") {
		t.Errorf("negative window: exit %d %s", code, errOut)
	}
}

// TestPromptsRenderNamesTheRunsModel: issue 25 item 8. prompts render
// shows the model a run with the same configuration would call: --model and
// ARBITER_LLM_MODEL as run takes them, a phase's own model over both.
func TestPromptsRenderNamesTheRunsModel(t *testing.T) {
	cleanEnv(t)
	dir := demoCopy(t)
	render := func(args ...string) string {
		t.Helper()
		code, out, errOut := arbiter(t, append([]string{"prompts", "render", dir, "--phase", "intention", "--entity", "hollis", "--part", "all"}, args...)...)
		if code != 0 {
			t.Fatalf("prompts render %v: exit %d\n%s", args, code, errOut)
		}
		first, _, _ := strings.Cut(out, "\n")
		return first
	}
	if got := render("--model", "flag-model"); !strings.Contains(got, "(model flag-model,") {
		t.Errorf("--model: %s", got)
	}
	t.Setenv("ARBITER_LLM_MODEL", "env-model")
	if got := render(); !strings.Contains(got, "(model env-model,") {
		t.Errorf("ARBITER_LLM_MODEL: %s", got)
	}
	t.Setenv("ARBITER_PHASES_INTENTION_MODEL", "phase-model")
	if got := render("--model", "flag-model"); !strings.Contains(got, "(model phase-model,") {
		t.Errorf("a phase's own model: %s", got)
	}
}
