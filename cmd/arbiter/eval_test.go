package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
)

// writeSuite writes text as the suite of sim and returns its path.
func writeSuite(t *testing.T, sim, text string) string {
	t.Helper()
	path := filepath.Join(sim, "evals.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestEvalDemoSuite(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	before := srv.CallCount()
	code, out, errOut := arbiter(t, "eval", sim)
	if code != 0 {
		t.Fatalf("eval exit %d\n%s\n%s", code, out, errOut)
	}
	// 2 ticks x (6 characters + 5 locations) x 2 variants; terse changes
	// the intention prompt only, so the resolution calls of both variants
	// are one request, asked once.
	if got := srv.CallCount() - before; got != 44-10 {
		t.Errorf("eval made %d calls, want 34", got)
	}
	// terse caps an intention at 80 characters in its schema and its
	// prompt alike (settings.answer laid over simulation.yaml's).
	capped := 0
	for _, c := range srv.Calls()[before:] {
		if strings.Contains(string(c.Schema()), `"maxLength":80`) && strings.Contains(c.SystemMessage(), "1 to 80 characters") &&
			strings.Contains(c.LastUserMessage(), "One short sentence of at most 80 characters") {
			capped++
		}
	}
	if capped != 12 {
		t.Errorf("%d calls had terse's 80-character cap in schema and prompt, want 12", capped)
	}
	for _, want := range []string{"eval 1 of demo-sim", "22 cases x 2 variants x 1 repeat: 44 answers, 10 from the cache",
		"baseline: 22 answers", "terse: 22 answers", "intention   short        12/12  100%  [76%, 100%]",
		"terse vs baseline  intention short", "thresholds: all 14 met"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	code, out, errOut = arbiter(t, "eval", sim)
	if code != 0 || srv.CallCount()-before != 34 || !strings.Contains(out, "eval 2 of demo-sim") || !strings.Contains(out, "44 answers, 44 from the cache") {
		t.Errorf("rerun: exit %d, %d calls in all; want every answer from the cache:\n%s\n%s", code, srv.CallCount()-before, out, errOut)
	}
	code, out, _ = arbiter(t, "eval", sim, "--no-cache")
	if code != 0 || srv.CallCount()-before != 68 || !strings.Contains(out, "44 answers, 10 from the cache") {
		t.Errorf("--no-cache: exit %d, %d calls in all, want 68:\n%s", code, srv.CallCount()-before, out)
	}
}

// judgeOr answers a judge's call with verdict (raw JSON), every other
// call from its schema.
func judgeOr(verdict func(c *openaitest.Call) string) openaitest.Handler {
	comply := openaitest.FromSchema(nil)
	return func(c *openaitest.Call) openaitest.Reply {
		if c.SchemaName() == "JudgeVerdict" {
			return openaitest.Content(verdict(c))
		}
		return comply(c)
	}
}

func TestEvalRepeatsJudgeThresholdsJUnitAndPage(t *testing.T) {
	cleanEnv(t)
	var judged atomic.Int64
	fakeModel(t, judgeOr(func(c *openaitest.Call) string {
		judged.Add(1)
		if strings.Contains(c.Messages()[1].Content, "Ida") { // the judge's first user message, repairs included
			return `{"pass": "maybe"}` // not the judge's schema: a judge error
		}
		return `{"pass": true, "score": 0.75, "reason": "one concrete action"}`
	}))
	sim := tryDemo(t)
	writeSuite(t, sim, `
cases: {ticks: "2", phases: [intention], entities: [ida, pip]}
repeat: 2
variants: [{name: cold, temperature: 0}]
judge: {model: test-model}
assertions:
  intention:
    - {name: tiny, length: {pointer: /intention, max: 5}, min_pass_rate: 0.5}
    - {name: concrete, judge: "The intention is one concrete action.", min_pass_rate: 0.9}
    - {max_latency: 1m}
`)
	junit, page := filepath.Join(t.TempDir(), "junit.xml"), filepath.Join(t.TempDir(), "eval.html")
	code, out, errOut := arbiter(t, "eval", sim, "--junit", junit, "--html", page)
	if code != ExitEvalFailed || !strings.Contains(errOut, "eval 1: 2 of 10 thresholds not met") {
		t.Fatalf("eval exit %d, stderr %q; want 5 and the thresholds not met\n%s", code, errOut, out)
	}
	for _, want := range []string{"2 cases x 2 variants x 2 repeats: 8 answers",
		"intention  concrete     2/2   100%  [34%, 100%]   2             0.75",
		"baseline intention tiny: 0% of 4 answers, want at least 50%"} {
		if !strings.Contains(out, want) {
			t.Errorf("eval output lacks %q:\n%s", want, out)
		}
	}
	x, _ := os.ReadFile(junit)
	for _, want := range []string{`<testsuite name="baseline" tests="5" failures="1">`, `<testcase name="intention tiny" classname="demo-sim.baseline">`,
		`<failure message="pass rate 0% of 4 answers, want at least 50%">`, "t2 intention ida #2: length"} {
		if !strings.Contains(string(x), want) {
			t.Errorf("JUnit lacks %q:\n%s", want, x)
		}
	}
	if b, _ := os.ReadFile(page); !strings.Contains(string(b), `id="cases"`) || !strings.Contains(string(b), "judge schema: ") {
		t.Errorf("the page lacks its cases or the judge errors:\n%.2000s", b)
	}
	if judged.Load() != 12 {
		t.Errorf("the judge was asked %d times, want 12 (2 cases x 2 variants x 2 repeats, ida's 4 each repaired once)", judged.Load())
	}
}

func TestEvalConsequencesAndHandWrittenCase(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	os.MkdirAll(filepath.Join(sim, "evals"), 0o755)
	os.WriteFile(filepath.Join(sim, "evals", "flood.yaml"), []byte(`tick: 2
phase: resolution
entity: wharf
state: {locations: {wharf: {moment: "The river is over the quay."}}}
`), 0o644)
	writeSuite(t, sim, "cases: {ticks: '1', phases: [resolution], entities: [wharf], files: [evals/flood.yaml]}\n")
	code, out, errOut := arbiter(t, "--json", "eval", sim)
	if code != 0 {
		t.Fatalf("eval exit %d\n%s\n%s", code, out, errOut)
	}
	var res eval.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Cases) != 2 || res.Cases[1].File == "" || len(res.Answers) != 2 {
		t.Fatalf("cases %+v, %d answers", res.Cases, len(res.Answers))
	}
	changes := strings.Join(res.Answers[0].Verdict.Changes, "\n")
	if !strings.Contains(changes, "wharf now: location/moment") {
		t.Errorf("the resolution answer's consequences are not shown: %q", changes)
	}
	seen := 0
	for _, c := range srv.Calls() {
		if strings.Contains(c.LastUserMessage(), "The river is over the quay.") {
			seen++
		}
	}
	if seen != 1 {
		t.Errorf("%d prompts held the hand-written case's moment, want 1", seen)
	}
}

func TestEvalCompareAndList(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := tryDemo(t)
	writeSuite(t, sim, "cases: {ticks: '2', phases: [intention]}\nassertions: {intention: [{name: has i, matches: {pointer: /intention, regex: 'i'}}]}\n")
	for range 2 {
		if code, out, errOut := arbiter(t, "eval", sim, "--no-cache"); code != 0 {
			t.Fatalf("eval exit %d\n%s\n%s", code, out, errOut)
		}
	}
	code, out, _ := arbiter(t, "eval", sim, "--list")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "id  started") || !regexp.MustCompile(`^1 .*evals\.yaml +baseline +6 +6 +met$`).MatchString(lines[1]) {
		t.Errorf("--list: exit %d; want a header and a line per eval with its variants, cases, answers and verdict:\n%s", code, out)
	}
	page := filepath.Join(t.TempDir(), "both.html")
	code, out, errOut := arbiter(t, "eval", sim, "--compare", "1,latest", "--html", page)
	if code != 0 || !strings.Contains(out, "eval 2 against eval 1") || !strings.Contains(out, "baseline@2 vs baseline@1  intention has i") || !strings.Contains(out, "0 wins, 0 losses, 6 ties") {
		t.Errorf("--compare: exit %d\n%s\n%s", code, out, errOut)
	}
	if html, err := os.ReadFile(page); err != nil || !strings.Contains(string(html), "<h1>eval 2 against eval 1 of demo-sim</h1>") || strings.Count(string(html), "<th>baseline@") != 2 {
		t.Errorf("--compare --html wrote no page of the two evals side by side: %v\n%.800s", err, html)
	}
	for _, args := range [][]string{{"--junit", "x.xml", "--list"}, {"--variant", "terse", "--compare", "1,2"}, {"--html", "x.html", "--list"}, {"--no-cache", "--compare", "1,2"}} {
		code, _, errOut := arbiter(t, append([]string{"eval", sim}, args...)...)
		if code != ExitUsage || !strings.Contains(errOut, "reads the evals stored in eval.db and runs none: "+args[0]+" is for a run of the suite") {
			t.Errorf("eval %v: exit %d, %q; want 2 and the flag named", args, code, errOut)
		}
	}
	if code, _, errOut := arbiter(t, "eval", sim, "--compare", "1,9"); code != ExitUsage || !strings.Contains(errOut, `no stored eval "9"`) {
		t.Errorf("--compare of a missing eval: exit %d, %q", code, errOut)
	}
}

// TestEvalVariantNarrows: --variant runs the named variants beside the
// baseline and no other; a name the suite lacks is refused before a call.
func TestEvalVariantNarrows(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	writeSuite(t, sim, "cases: {ticks: 2, phases: [intention]}\nvariants:\n  - {name: terse, templates: evals/terse}\n  - {name: hot, temperature: 1.5}\n")
	before := srv.CallCount()
	code, out, errOut := arbiter(t, "eval", sim, "--variant", "hot", "--variant", "hot")
	if code != 0 || !strings.Contains(out, "6 cases x 2 variants x 1 repeat: 12 answers") || strings.Contains(out, "terse") {
		t.Errorf("eval --variant hot: exit %d; want the baseline and hot alone:\n%s\n%s", code, out, errOut)
	}
	if got := srv.CallCount() - before; got != 12 {
		t.Errorf("eval --variant hot made %d calls, want 12", got)
	}
	// --sample and --repeat set the suite's for one run.
	before = srv.CallCount()
	code, out, errOut = arbiter(t, "eval", sim, "--variant", "baseline", "--sample", "2", "--repeat", "3", "--no-cache")
	if code != 0 || !strings.Contains(out, "2 cases x 1 variant x 3 repeats: 6 answers") || srv.CallCount()-before != 6 {
		t.Errorf("eval --sample 2 --repeat 3: exit %d, %d calls; want 2 cases asked 3 times:\n%s\n%s", code, srv.CallCount()-before, out, errOut)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sample", "-1"}, "--sample must be at least 1, got -1"},
		{[]string{"--repeat", "101"}, "--repeat must be 1 to 100, got 101"},
	} {
		if code, _, errOut := arbiter(t, append([]string{"eval", sim}, c.args...)...); code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("eval %v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	before = srv.CallCount()
	code, _, errOut = arbiter(t, "eval", sim, "--variant", "hott")
	if code != ExitUsage || !strings.Contains(errOut, `--variant hott: no variant "hott" in `+sim+"/evals.yaml (its variants: terse, hot; baseline is the simulation as it is)") || srv.CallCount() != before {
		t.Errorf("eval --variant hott: exit %d, %d calls, stderr %q", code, srv.CallCount()-before, errOut)
	}
}

func TestEvalBadInput(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	os.MkdirAll(filepath.Join(sim, "evals", "broken"), 0o755)
	os.WriteFile(filepath.Join(sim, "evals", "broken", "phase1_intention_user.md"), []byte("Hello\n{{.Character.Nmae}\n"), 0o644)
	before := srv.CallCount()
	for _, c := range []struct{ suite, want string }{
		{"cases: {ticks: 2..3}", "cases.ticks 2..3: tick 3 is not committed (committed ticks: 1..2)"},
		{"cases: {phases: [chat]}", `cases.phases: "chat": the simulation's model calls are intention, resolution`},
		{"cases: {entities: [zed]}", `cases.entities: "zed" is called by none of the phases intention, resolution`},
		{"assertions: {intention: [{lenght: 3}]}", `evals.yaml:1: assertions.intention: unknown assertion "lenght" (known: contains, equals, judge, length, matches, max_cost, max_latency, mentions_present, moves_to, no_fallback)`},
		{"judge: {model: j, endpoint: nowhere}\nassertions: {intention: [{judge: fine}]}", `judge: endpoint "nowhere": neither a base URL`},
		{"variants: [{name: broken, templates: evals/broken}]", "phase1_intention_user.md:2"},
		{"assertions: {resolution: [{moves_to: {character: zed, one_of: [wharf]}}]}", `moves_to: no character "zed"`},
	} {
		writeSuite(t, sim, c.suite)
		code, _, errOut := arbiter(t, "eval", sim)
		if code != ExitUsage || !strings.Contains(errOut, c.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("suite %q: exit %d, stderr %q; want 2 and one line with %q", c.suite, code, errOut, c.want)
		}
	}
	if srv.CallCount() != before {
		t.Errorf("bad suites made %d calls; none should be paid for", srv.CallCount()-before)
	}
	if code, _, errOut := arbiter(t, "eval", sim, "--suite", filepath.Join(sim, "nope.yaml")); code != ExitUsage || !strings.Contains(errOut, "nope.yaml: stat") {
		t.Errorf("a missing suite: exit %d, %q", code, errOut)
	}
}

func TestEvalInterruptedKeepsWhatWasAnswered(t *testing.T) {
	cleanEnv(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var calls atomic.Int64
	comply := openaitest.FromSchema(nil)
	srv := fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if calls.Add(1) == 22+5 { // the run's 22, then 5 of the eval's
			cancel()
		}
		return comply(c)
	})
	sim := tryDemo(t)
	writeSuite(t, sim, "cases: {ticks: 1..2, phases: [intention]}\n")
	io, out, errOut := TestStreams("")
	if code := Execute(ctx, io, []string{"eval", sim, "--concurrency", "1"}); code != ExitInterrupted {
		t.Fatalf("interrupted eval: exit %d\n%s\n%s", code, out, errOut)
	}
	asked := srv.CallCount() - 22
	code, o, e := arbiter(t, "eval", sim)
	if code != 0 {
		t.Fatalf("rerun exit %d\n%s\n%s", code, o, e)
	}
	again := srv.CallCount() - 22 - asked
	var kept int
	if _, err := fmt.Sscanf(o[strings.Index(o, "12 answers, ")+len("12 answers, "):], "%d from the cache", &kept); err != nil {
		t.Fatalf("rerun output: %v\n%s", err, o)
	}
	if kept == 0 || kept+again != 12 || kept >= asked+1 {
		t.Errorf("interrupted after %d calls, the rerun took %d from the cache and asked %d: want the answered ones kept, the rest asked", asked, kept, again)
	}
}

// waitFor waits until out holds n copies of s, or fails after a minute.
func waitFor(t *testing.T, out *texttest.Buffer, s string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for strings.Count(out.String(), s) < n {
		if time.Now().After(deadline) {
			t.Fatalf("no %d× %q in a minute:\n%s", n, s, out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestEvalWatchRerunsOnTemplateChange: --watch runs the eval, then again
// when a variant's template changes, asking only the calls it changed.
func TestEvalWatchRerunsOnTemplateChange(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := tryDemo(t)
	writeSuite(t, sim, "cases: {ticks: '2', phases: [intention]}\nvariants: [{name: terse, templates: evals/terse}]\n")
	ctx, cancel := context.WithCancel(context.Background())
	out, errOut := &texttest.Buffer{}, &texttest.Buffer{}
	done := make(chan int)
	go func() {
		done <- Execute(ctx, &IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, []string{"eval", sim, "--watch"})
	}()
	waitFor(t, errOut, "waiting for a template or the suite to change", 1)
	before := srv.CallCount()
	tmpl := filepath.Join(sim, "evals", "terse", "phase1_intention_user.md")
	b, _ := os.ReadFile(tmpl)
	if err := os.WriteFile(tmpl, append(b, []byte("\nBe brief.\n")...), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor(t, errOut, "waiting for a template or the suite to change", 2)
	cancel()
	if code := <-done; code != ExitInterrupted {
		t.Errorf("--watch ended with exit %d, want 130", code)
	}
	if got := srv.CallCount() - before; got != 6 {
		t.Errorf("the rerun asked %d calls, want 6 (terse's intentions; the baseline's from the cache)", got)
	}
	if !strings.Contains(out.String(), "eval 2 of demo-sim") || !strings.Contains(out.String(), "12 answers, 6 from the cache") {
		t.Errorf("the second eval is not shown:\n%s", out.String())
	}
}

// TestEvalProgressOnATerminal: on a terminal the progress line is redrawn
// in place (a real carriage return, not an escaped one) and cleared at the
// end; elsewhere there is none.
func TestEvalProgressOnATerminal(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := tryDemo(t)
	writeSuite(t, sim, "cases: {ticks: '2', phases: [intention]}\n")
	io, _, errOut := TestStreams("")
	io.ErrTTY = true
	if code := Execute(context.Background(), io, []string{"eval", sim}); code != 0 {
		t.Fatalf("eval exit %d\n%s", code, errOut)
	}
	if e := errOut.String(); !strings.Contains(e, "\r\033[Keval: 6/6 answers (0 cached)") || !strings.HasSuffix(e, "\r\033[K") || strings.Contains(e, `\r`) {
		t.Errorf("progress on a terminal: %q", e)
	}
	io, _, errOut = TestStreams("")
	if code := Execute(context.Background(), io, []string{"eval", sim}); code != 0 || errOut.Len() != 0 {
		t.Errorf("eval off a terminal wrote to stderr: %q", errOut)
	}
}

func TestEvalRefusesWhatItCannotDo(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	fresh := demoCopy(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", fresh}, "has no committed tick: cases are situations of its runs (`arbiter run " + fresh + "` first), or hand-written (cases.files)"},
		{[]string{"eval", fresh, "--compare", "1"}, "--compare takes two stored evals joined by a comma, --compare A,B (ids from --list, or latest), got 1"},
		{[]string{"eval", fresh, "--compare", "1", "2"}, "--compare A,B (ids from --list, or latest): got --compare 1 and 2 arguments"},
		{[]string{"eval", filepath.Join(fresh, "nope"), "--list"}, "no such simulation folder"},
		{[]string{"eval", fresh, "--list"}, "no eval stored yet (`arbiter eval " + fresh + "` runs one)"},
		{[]string{"eval", fresh, "--compare", "1,2"}, "no eval stored yet"},
		{[]string{"eval", gameCopy(t, "duel-demo"), "--suite", filepath.Join(fresh, "evals.yaml")}, "assertions: phase \"intention\": the simulation's model calls are build"},
	} {
		code, _, errOut := arbiter(t, c.args...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	if srv.CallCount() != 0 || exists(filepath.Join(fresh, eval.DBFile)) {
		t.Errorf("refused evals made %d calls, or left an eval.db", srv.CallCount())
	}
}
