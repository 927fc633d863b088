package main

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/sashabaranov/go-openai"

	"github.com/arbiter-sim/arbiter/internal/filelock"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// tryDemo runs two ticks of a copy of demo-sim against the test server and
// returns it.
func tryDemo(t *testing.T) string {
	t.Helper()
	sim := demoCopy(t)
	if code, out, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	return sim
}

func TestPromptsTryCommitsNothing(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	before := srv.CallCount()
	_, status, _ := arbiter(t, "status", sim)
	code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "resolution", "--entity", "common", "--tick", "2", "--repeat", "2")
	if code != 0 {
		t.Fatalf("try exit %d\n%s\n%s", code, out, errOut)
	}
	if got := srv.CallCount() - before; got != 2 {
		t.Errorf("try made %d calls, want 2 (--repeat 2)", got)
	}
	for _, want := range []string{"# resolution call resolution:common at tick 2 (model test-model)", "answer 2 of 2", "schema: valid", "kind checks: passed", "would change:"} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
	if _, after, _ := arbiter(t, "status", sim); after != status {
		t.Errorf("status changed after try:\n%s\nthen\n%s", status, after)
	}
}

func TestPromptsTrySendsWhatTheRunSent(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	// The run's own call of tick 2 for ada, then try's of the same.
	var runUser string
	for _, c := range srv.Calls() {
		if strings.Contains(c.SystemMessage(), "Ida") && c.SchemaName() == "IntentionResponse" {
			runUser = c.LastUserMessage() // the last is tick 2's
		}
	}
	code, out, errOut := arbiter(t, "--json", "prompts", "try", sim, "--phase", "intention", "--entity", "ida", "--tick", "2")
	if code != 0 {
		t.Fatalf("try exit %d\n%s\n%s", code, out, errOut)
	}
	calls := srv.Calls()
	last := calls[len(calls)-1]
	if last.LastUserMessage() != runUser {
		t.Errorf("try sent a user prompt other than the run's at tick 2:\n%s\nrun:\n%s", last.LastUserMessage(), runUser)
	}
	var rep tryReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("try --json: %v\n%s", err, out)
	}
	if rep.Tick != 2 || len(rep.Answers) != 1 || rep.Answers[0].Output == nil || len(rep.Messages) != len(last.Messages()) {
		t.Errorf("try --json = %+v", rep)
	}
}

func TestPromptsTryBadInput(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := tryDemo(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--phase", "chat", "--entity", "ida"}, `phase "chat": a narrative simulation's model calls are intention or resolution`},
		{[]string{"--phase", "intention", "--entity", "zed"}, `entity "zed": no such character`},
		{[]string{"--phase", "resolution", "--entity", "zed"}, `entity "zed": no such location`},
		{[]string{"--phase", "intention", "--entity", "ida", "--tick", "9"}, "tick 9: not a tick a call can be made at (committed ticks: 0..2; a call belongs to ticks 1..3"},
		{[]string{"--phase", "intention", "--entity", "ida", "--repeat", "0"}, "--repeat must be at least 1"},
		{[]string{"--phase", "intention", "--entity", "ida", "--templates", "/nonexistent"}, "prompt overrides"},
	} {
		code, _, errOut := arbiter(t, append([]string{"prompts", "try", sim}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("try %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

func TestPromptsTryShowsWhatTheAnswerWouldChange(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := tryDemo(t)
	code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "resolution", "--entity", "common")
	if code != 0 {
		t.Fatalf("try exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"# resolution call resolution:common at tick 3", "hollis remembers: characters/hollis/memory_entry", "common now: location/moment"} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
}

func TestPromptsTryFailedAnswerExits3(t *testing.T) {
	cleanEnv(t)
	var bad atomic.Bool
	comply := openaitest.FromSchema(nil)
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if bad.Load() {
			return openaitest.Content(`{"intention": 7}`)
		}
		return comply(c)
	})
	sim := tryDemo(t)
	bad.Store(true)
	code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "intention", "--entity", "ida")
	if code != ExitModel || !strings.Contains(errOut, "1 of 1 answers failed their checks") {
		t.Errorf("try of a bad answer: exit %d, stderr %q; want 3", code, errOut)
	}
	for _, want := range []string{"answer: FAILED (schema): ", `raw answer:`, "kind checks: FAILED", "the call failed (schema): a run falls back", "1 repair(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
}

func TestPromptsTryConquestSeat(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "conquest-demo")
	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "2"); code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	srv := fakeModel(t, openaitest.Always(openaitest.ToolCalls(
		openaitest.Tool("c1", "propose_orders", map[string]any{"orders": []map[string]any{{"from": "Zz", "to": "A", "ships": 3}}}))))
	code, out, errOut := arbiter(t, "prompts", "try", dir, "--phase", "orders", "--entity", "p2", "--tick", "3")
	if code != ExitModel {
		t.Fatalf("try of an order from a star that does not exist: exit %d, want 3\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"# orders call conquest:p2 at tick 3", `"name": "propose_orders"`, "kind checks: FAILED", "call 1 (propose_orders): ", "p2 proposes 1 orders"} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
	if c := srv.Calls(); len(c) != 1 || !strings.Contains(c[0].LastUserMessage(), "Turn 3 of 40. You are p2.") {
		t.Errorf("the server saw %d calls; want turn 3's opening call of p2", len(c))
	}
}

func TestPromptsTryChronicleReply(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, openaitest.Always(openaitest.Content("CREATE PERIOD The Drowning TONE dark DESCRIPTION The sea rose.")))
	dir := chronicleCopy(t)
	code, out, errOut := arbiter(t, "prompts", "try", dir, "--phase", "chat")
	if code != 0 && code != ExitModel {
		t.Fatalf("try exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"# chat call", `"CREATE PERIOD The Drowning TONE dark DESCRIPTION The sea rose."`, "schema: valid"} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
	if code, _, errOut := arbiter(t, "prompts", "try", dir, "--phase", "chat", "--entity", "ida"); code != ExitUsage || !strings.Contains(errOut, `entity "ida": a chronicle's calls are the model's`) {
		t.Errorf("try with an entity a chronicle lacks: exit %d, %q", code, errOut)
	}
}

func TestPromptsTryDuelSeat(t *testing.T) {
	cleanEnv(t)
	dir := gameCopy(t, "duel-demo")
	if code, out, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != 0 {
		t.Fatalf("run exit %d\n%s\n%s", code, out, errOut)
	}
	srv := fakeModel(t, nil)
	code, out, errOut := arbiter(t, "prompts", "try", dir, "--phase", "build", "--entity", "p1", "--repeat", "2")
	if code != 0 {
		t.Fatalf("try exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"# build call duel:p1:build at tick 2", "schema: valid", "kind checks: passed", "p1 builds: "} {
		if !strings.Contains(out, want) {
			t.Errorf("try output lacks %q:\n%s", want, out)
		}
	}
	calls := srv.Calls()
	if len(calls) != 2 || calls[0].LastUserMessage() != calls[1].LastUserMessage() || calls[0].SchemaName() != "DuelBuild" {
		t.Errorf("the server saw %d calls; want the same build call of turn 2 twice", len(calls))
	}
	if code, _, errOut := arbiter(t, "prompts", "try", dir, "--phase", "charges", "--entity", "p1"); code != ExitUsage || !strings.Contains(errOut, `phase "charges": a duel simulation's model calls are build`) {
		t.Errorf("try --phase charges: exit %d, %q", code, errOut)
	}
}

// TestTryAndEvalWhileARunHoldsTheSimulation: neither takes the lock a run
// holds, nor writes state.db.
func TestTryAndEvalWhileARunHoldsTheSimulation(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := tryDemo(t)
	unlock, err := filelock.TryLock(sim)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "intention", "--entity", "ida"); code != 0 {
		t.Errorf("try while a run holds the simulation: exit %d\n%s\n%s", code, out, errOut)
	}
	writeSuite(t, sim, "cases: {ticks: '2', phases: [intention]}\n")
	if code, out, errOut := arbiter(t, "eval", sim); code != 0 {
		t.Errorf("eval while a run holds the simulation: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestTryAndEvalFailATruncatedPrompt: an answer whose prompt reached the
// model's context answers a prompt cut short: try fails it (exit 3) and
// eval counts it as failed, saying why.
func TestTryAndEvalFailATruncatedPrompt(t *testing.T) {
	cleanEnv(t)
	var cut atomic.Bool
	comply := openaitest.FromSchema(nil)
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		r := comply(c)
		if cut.Load() {
			r = r.WithUsage(openai.Usage{PromptTokens: 32768, CompletionTokens: 20, TotalTokens: 32788})
		}
		return r
	})
	sim := tryDemo(t)
	cut.Store(true)
	t.Setenv("ARBITER_LLM_CONTEXT_TOKENS", "32768")
	code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "intention", "--entity", "ida")
	if code != ExitModel || !strings.Contains(out, "answer: FAILED (prompt_truncated): prompt truncated: 32768 prompt tokens reached the model's context of 32768") {
		t.Errorf("try of a truncated prompt: exit %d\n%s\n%s", code, out, errOut)
	}
	writeSuite(t, sim, "cases: {ticks: '2', phases: [intention]}\n")
	code, out, errOut = arbiter(t, "eval", sim)
	if code != ExitEvalFailed || !strings.Contains(out, "intention  schema       0/6") {
		t.Errorf("eval of truncated prompts: exit %d, want 5 and the schema failed for all 6\n%s\n%s", code, out, errOut)
	}
}

// TestPromptsTryVariant: --variant makes the call as the eval suite's
// variant makes it (its templates, and its answer settings in the schema
// and the prompt alike), and the same call as eval's for that variant.
func TestPromptsTryVariant(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	code, out, errOut := arbiter(t, "prompts", "try", sim, "--phase", "intention", "--entity", "ida", "--tick", "2", "--variant", "terse")
	if code != 0 {
		t.Fatalf("try --variant terse: exit %d\n%s\n%s", code, out, errOut)
	}
	calls := srv.Calls()
	last := calls[len(calls)-1]
	if !strings.Contains(string(last.Schema()), `"maxLength":80`) || !strings.Contains(last.LastUserMessage(), "One short sentence of at most 80 characters") {
		t.Errorf("try --variant terse sent no 80-character cap:\nschema %s\nuser %s", last.Schema(), last.LastUserMessage())
	}
	if !strings.Contains(out, "(model test-model, variant terse, templates "+sim+"/evals/terse over the simulation's)") {
		t.Errorf("try --variant terse does not say so:\n%s", out)
	}
	// baseline is the simulation as it is: the call the run made.
	code, out, errOut = arbiter(t, "prompts", "try", sim, "--phase", "intention", "--entity", "ida", "--tick", "2", "--variant", "baseline")
	calls = srv.Calls()
	if last = calls[len(calls)-1]; code != 0 || strings.Contains(string(last.Schema()), `"maxLength":80`) {
		t.Errorf("try --variant baseline: exit %d, schema %s\n%s\n%s", code, last.Schema(), out, errOut)
	}
	before := srv.CallCount()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--variant", "tersee"}, `--variant tersee: no variant "tersee" in ` + sim + "/evals.yaml (its variants: terse; baseline is the simulation as it is)"},
		{[]string{"--variant", "terse", "--suite", sim + "/nope.yaml"}, "nope.yaml: stat"},
		{[]string{"--suite", sim + "/evals.yaml"}, "names the suite whose variant --variant gives: give --variant NAME too"},
	} {
		code, _, errOut := arbiter(t, append([]string{"prompts", "try", sim, "--phase", "intention", "--entity", "ida"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("try %v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if srv.CallCount() != before {
		t.Errorf("refused variants made %d calls", srv.CallCount()-before)
	}
}
