package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestNoEndpointNamesTheLocalModel: with no key and no URL, the message
// names the local model the demo starts, beside OpenAI and Ollama.
func TestNoEndpointNamesTheLocalModel(t *testing.T) {
	cleanEnv(t)
	code, _, errOut := arbiter(t, "run", demoCopy(t))
	for _, want := range []string{"no model endpoint configured", "OPENAI_API_KEY", `eval "$(scripts/local-model.sh start)"`, "http://127.0.0.1:11434/v1"} {
		if code != ExitUsage || !strings.Contains(errOut, want) {
			t.Errorf("exit %d, want %d naming %q:\n%s", code, ExitUsage, want, errOut)
		}
	}
}

// TestReplayMissNamesTheRecordedModel: a replay under another model than
// the recording's says which model the cassette was recorded with.
func TestReplayMissNamesTheRecordedModel(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	tape := filepath.Join(t.TempDir(), "demo.jsonl")
	if code, _, errOut := arbiter(t, "run", sim, "--record", tape); code != 0 {
		t.Fatalf("record: exit %d\n%s", code, errOut)
	}
	arbiter(t, "reset", sim)
	noEndpoint(t)
	code, _, errOut := arbiter(t, "run", sim, "--replay", tape, "--model", "other-model")
	if code != ExitModel || !strings.Contains(errOut, "recorded with model test-model, not other-model: replay with --model test-model") {
		t.Errorf("replay under another model: exit %d, want %d naming the recorded model\n%s", code, ExitModel, errOut)
	}
}

// TestResetNeedsOnlyTheFolder: reset starts over when the files no longer
// load; --json never says nothing was deleted while failing.
func TestResetNeedsOnlyTheFolder(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	os.WriteFile(filepath.Join(sim, "simulation.yaml"), []byte("id: [broken\n"), 0o644)
	code, out, errOut := arbiter(t, "reset", sim, "--json")
	var got struct{ Deleted []string }
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || len(got.Deleted) != 1 || exists(filepath.Join(sim, "state.db")) {
		t.Errorf("reset --json of a folder whose files do not load: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	missing := filepath.Join(t.TempDir(), "nowhere")
	code, out, errOut = arbiter(t, "reset", missing, "--json")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, missing+": no such simulation folder") {
		t.Errorf("reset --json of no folder: exit %d, want %d, no document and the error\nstdout: %s\nstderr: %s", code, ExitUsage, out, errOut)
	}
}

// TestReportJSONSaysWhatItWrote: report --json prints the path, size and
// ticks of the page it wrote, and nothing else on stdout.
func TestReportJSONSaysWhatItWrote(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	arbiter(t, "run", sim, "-n", "2")
	page := filepath.Join(t.TempDir(), "r.html")
	code, out, errOut := arbiter(t, "report", sim, "-o", page, "--json")
	var got struct {
		Path  string
		Bytes int
		Ticks int
	}
	fi, _ := os.Stat(page)
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil || got.Path != page || fi == nil || int64(got.Bytes) != fi.Size() || got.Ticks != 2 {
		t.Errorf("report --json: exit %d, %v, %+v\n%s%s", code, err, got, out, errOut)
	}
	if code, out, errOut := arbiter(t, "report", sim, "-o", "-", "--json"); code != ExitUsage || out != "" {
		t.Errorf("report -o - --json: exit %d, want %d and no page\n%s%s", code, ExitUsage, out, errOut)
	}
}

// TestVersionPrintsTheBuild: `arbiter version` and `--version` print the
// build in one line; --json as data.
func TestVersionPrintsTheBuild(t *testing.T) {
	cleanEnv(t)
	line := regexp.MustCompile(`^arbiter \S+( revision [0-9a-f]+( \(with uncommitted changes\))?)? go1\.\d+\S*\n$`)
	for _, args := range [][]string{{"version"}, {"--version"}} {
		code, out, errOut := arbiter(t, args...)
		if code != 0 || !line.MatchString(out) {
			t.Errorf("%v: exit %d, %q\n%s", args, code, out, errOut)
		}
	}
	code, out, _ := arbiter(t, "version", "--json")
	var b struct{ Version, Go string }
	if err := json.Unmarshal([]byte(out), &b); code != 0 || err != nil || b.Version == "" || !strings.HasPrefix(b.Go, "go1.") {
		t.Errorf("version --json: exit %d, %v: %s", code, err, out)
	}
}

// TestUsageLatencyInSeconds: usage shows each group's time in seconds and
// per call, not summed milliseconds.
func TestUsageLatencyInSeconds(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	arbiter(t, "run", sim)
	code, out, errOut := arbiter(t, "usage", sim)
	if code != 0 || !strings.Contains(out, "latency (per call)") || regexp.MustCompile(`\d+ms`).MatchString(out) ||
		!regexp.MustCompile(`intention\s.*\d+\.\ds \(\d+\.\d\ds\)`).MatchString(out) {
		t.Errorf("usage: exit %d\n%s%s", code, out, errOut)
	}
}

// TestArenaShorthandFromAnyFolder: `arena conquest` and `arena duel` play
// the built-in demos from a folder that holds no simulations/.
func TestArenaShorthandFromAnyFolder(t *testing.T) {
	cleanEnv(t) // the working folder is an empty temp folder
	for _, kind := range []string{"conquest", "duel"} {
		code, out, errOut := arbiter(t, "arena", kind, "--games", "2", "--seats", "bot,bot")
		if code != 0 || !strings.HasPrefix(out, kind+"-demo arena ("+kind+"): 2 games") {
			t.Errorf("arena %s: exit %d\n%s%s", kind, code, out, errOut)
		}
	}
	if code, _, errOut := arbiter(t, "arena", "narrative"); code != ExitUsage {
		t.Errorf("arena narrative (no demo, no folder): exit %d, want %d\n%s", code, ExitUsage, errOut)
	}
}

// TestStatusShowsCallsOnlyWhenMade: status of a game of bots has no table
// of calls (its header alone was printed); a run with model calls has it.
func TestStatusShowsCallsOnlyWhenMade(t *testing.T) {
	cleanEnv(t)
	for _, kind := range []string{"conquest-demo", "duel-demo"} {
		dir := gameCopy(t, kind)
		if code, _, errOut := arbiter(t, "run", dir, "-n", "2"); code != 0 {
			t.Fatalf("run %s: exit %d\n%s", kind, code, errOut)
		}
		code, out, errOut := arbiter(t, "status", dir)
		if code != 0 || strings.Contains(out, "calls by") || !strings.Contains(out, "model calls:  0") {
			t.Errorf("status of %s, bots alone: exit %d, want no table of calls\n%s%s", kind, code, out, errOut)
		}
	}
	fakeModel(t, nil)
	sim := demoCopy(t)
	arbiter(t, "run", sim, "-n", "1")
	code, out, errOut := arbiter(t, "status", sim)
	if code != 0 || !regexp.MustCompile(`calls by\s+calls\s+failed.*\nintention\s+6\s`).MatchString(out) {
		t.Errorf("status of a narrative run: exit %d, want the table of calls\n%s%s", code, out, errOut)
	}
}
