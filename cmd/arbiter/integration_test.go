//go:build integration

package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/localmodel"
	"github.com/arbiter-sim/arbiter/store"
)

// runTests shares one local model server across the package's integration
// tests and stops it at the end.
func runTests(m *testing.M) int { return localmodel.Main(m) }

// realModel points arbiter at the real endpoint (configured, or the local
// server, with the history depth that fits its window and the timeout, as
// scripts/local-model.sh sets them) for the rest of the test.
func realModel(t *testing.T) (baseURL, model string) {
	t.Helper()
	_, configured, _ := localmodel.EndpointFromEnv(os.Getenv)
	url, key, model := localmodel.ForTest(t)
	cleanEnv(t)
	t.Setenv("OPENAI_BASE_URL", url)
	t.Setenv("OPENAI_API_KEY", key)
	t.Setenv("ARBITER_LLM_MODEL", model)
	if !configured {
		t.Setenv("ARBITER_LLM_DEPTH", strconv.Itoa(localmodel.Depth))
		t.Setenv("ARBITER_LLM_TIMEOUT", localmodel.Timeout.String())
	}
	return url, model
}

// checkNoTruncation fails the test when a command warned of a prompt cut
// to the model's context (its stderr is errOut) or the run state in sim
// counts one.
func checkNoTruncation(t *testing.T, sim, errOut string) {
	t.Helper()
	if strings.Contains(errOut, "filled the model's context") || strings.Contains(errOut, "filled a context") {
		t.Errorf("a prompt was cut to the model's context:\n%s", errOut)
	}
	code, out, _ := arbiter(t, "status", sim, "--json")
	var st struct {
		Truncated *int `json:"truncated_prompts"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || st.Truncated == nil || *st.Truncated != 0 {
		t.Errorf("status: exit %d, %v, truncated_prompts %v; want 0\n%s", code, err, st.Truncated, out)
	}
}

// TestIntegrationDemoSim runs demo-sim for 3 ticks on the real model through
// the CLI: every tick commits, every location has an arbiter entry, the usage
// is the server's, nothing crashes. It logs the figures README reports.
func TestIntegrationDemoSim(t *testing.T) {
	url, model := realModel(t)
	sim := demoCopy(t)
	const ticks = 3
	start := time.Now()
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "3", "--json")
	elapsed := time.Since(start)
	if code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	checkNoTruncation(t, sim, errOut)
	var rep struct {
		LastTick int    `json:"last_tick"`
		Stop     string `json:"stop"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.LastTick != ticks || rep.Stop != "completed" {
		t.Fatalf("report %+v (%v):\n%s", rep, err, out)
	}

	db, err := store.Open(context.Background(), filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var f callFigures
	for tick := 1; tick <= ticks; tick++ {
		f.add(t, db, tick)
		checkMemories(t, db, tick)
	}
	sum, err := db.Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if sum.Total.PromptTokens == 0 || sum.Total.CompletionTokens == 0 {
		t.Errorf("no tokens counted: %+v", sum.Total)
	}
	t.Logf("FIGURES endpoint=%s model=%s ticks=%d calls=%d first_answer_valid=%d/%d (%.0f%%) repairs=%d fallbacks=%d truncated=%d crashes=0 wall=%s completion_tokens=%d tokens_per_s=%.0f",
		url, model, ticks, f.calls, f.firstValid, f.calls, 100*float64(f.firstValid)/float64(f.calls), f.repairs, f.fallbacks, f.truncated,
		elapsed.Round(time.Millisecond), f.completion, float64(f.completion)/f.latency.Seconds())
}

// callFigures are the figures README reports of a run's calls.
type callFigures struct {
	calls, firstValid, repairs, fallbacks, truncated, completion int
	latency                                                      time.Duration
}

// add counts the calls of tick into f, checking that every location had
// its arbiter call and every successful call the server's usage.
func (f *callFigures) add(t *testing.T, db *store.Store, tick int) {
	t.Helper()
	recs, err := db.Calls(context.Background(), tick)
	if err != nil {
		t.Fatal(err)
	}
	locations := map[string]bool{}
	for _, c := range recs {
		f.calls++
		if !c.Failed() && c.Attempts == 1 && c.Repairs == 0 {
			f.firstValid++
		}
		f.repairs += c.Repairs
		if c.Fallback {
			f.fallbacks++
		}
		if c.ErrorKind == "truncated" {
			f.truncated++
		}
		f.completion += c.CompletionTokens
		f.latency += time.Duration(c.LatencyMS) * time.Millisecond
		if c.Phase == "resolution" {
			locations[strings.TrimPrefix(c.EntityKey, "resolution:")] = true
		}
		if !c.Failed() && c.PromptTokens == 0 {
			t.Errorf("tick %d %s: a successful call with no prompt tokens: usage not the server's", tick, c.EntityKey)
		}
	}
	if len(locations) != 5 {
		t.Errorf("tick %d: arbiter calls for %d locations, want all 5", tick, len(locations))
	}
}

// checkMemories checks that after tick each of demo-sim's six characters
// has one memory per tick, the last not empty.
func checkMemories(t *testing.T, db *store.Store, tick int) {
	t.Helper()
	mems, err := db.Memories(context.Background(), tick)
	if err != nil {
		t.Fatal(err)
	}
	count, last := map[string]int{}, map[string]string{}
	for _, m := range mems {
		count[m.CharacterID]++
		last[m.CharacterID] = m.Entry
	}
	if len(count) != 6 {
		t.Errorf("tick %d: memories of %d characters, want all 6", tick, len(count))
	}
	for id, n := range count {
		if n != tick || last[id] == "" {
			t.Errorf("tick %d: %s has %d memories (want %d, last non-empty)", tick, id, n, tick)
		}
	}
}

// TestIntegrationDoctor: the real server is reachable, serves the model and
// honours json_schema and (at least with a forced shape) tools.
func TestIntegrationDoctor(t *testing.T) {
	realModel(t)
	code, out, errOut := arbiter(t, "doctor")
	if code != 0 {
		t.Fatalf("doctor exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"ok   reachable", "ok   json_schema", "ok   tools"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	t.Logf("doctor:\n%s", out)
}

// TestIntegrationChronicleChat plays three turns of the chronicle through
// `arbiter chat` with the model seat on the real server: every turn ends in a
// model message (applied, or rejected with its parsing error) or in the
// model-call failure line, nothing crashes, and the conversation is saved and
// reloads. The local test model writes stories, not commands, and rarely
// stops before max_tokens, so which of those happens is logged, not asserted.
func TestIntegrationChronicleChat(t *testing.T) {
	realModel(t)
	sim := chronicleCopy(t)
	input := strings.Join([]string{
		"Let's set up the bookends of our history.",
		"CREATE PERIOD The First Fire FIRST TONE light DESCRIPTION A fire on the cliffs.",
		"What should come last?",
		"/timeline",
		"/quit",
	}, "\n")
	code, out, errOut := arbiterIn(t, input, "chat", sim, "--max-tokens", "120")
	if code != 0 {
		t.Fatalf("chat exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	checkNoTruncation(t, sim, errOut)
	turns := strings.Count(out, "model:\n") + strings.Count(out, "Model call failed")
	if turns < 2 {
		t.Errorf("%d model turns in the chat, want one per person message that asked the model (2+):\n%s", turns, out)
	}
	if !strings.Contains(out, `created light period "The First Fire"`) {
		t.Errorf("the person's own command was not applied:\n%s", out)
	}
	t.Logf("model messages: %d (cut off at max_tokens: %d), parsing errors: %d, failed calls: %d",
		strings.Count(out, "model:\n"), strings.Count(out, "was cut off before it ended"), strings.Count(out, "Command parsing error"), strings.Count(out, "Model call failed"))
	code, show, _ := arbiter(t, "chronicle", "show", sim)
	if code != 0 || !strings.Contains(show, "The First Fire (light, FIRST bookend)") {
		t.Errorf("the saved chronicle does not reload: exit %d\n%s", code, show)
	}
}
