package main

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"github.com/arbiter-sim/arbiter/session"
)

// TestRunBatch: `run --batch` plays the demo world to the state a live run
// with the same answers reaches, each phase of each tick as one Batch API
// job and no call made live; a kind whose calls cannot go as a batch
// refuses the flag before any call.
func TestRunBatch(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, byPrompt)
	live, batch := demoCopy(t), demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--ticks", "2", "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	liveCalls := srv.CallCount()
	if code, _, errOut := arbiter(t, "run", batch, "--ticks", "2", "--batch"); code != 0 {
		t.Fatalf("run --batch: exit %d\n%s", code, errOut)
	}
	if srv.BatchesCreated() != 4 {
		t.Errorf("%d batch jobs, want 4 (2 phases × 2 ticks)", srv.BatchesCreated())
	}
	for _, c := range srv.Calls()[liveCalls:] {
		if c.CustomID == "" {
			t.Errorf("call %d of the batch run was made live", c.N)
		}
	}
	for _, tick := range []string{"1", "2"} {
		_, want, _ := arbiter(t, "export", live, "--format", "json", "--tick", tick)
		code, got, errOut := arbiter(t, "export", batch, "--format", "json", "--tick", tick)
		if code != 0 || got != want || want == "" {
			t.Errorf("tick %s: batch export (exit %d, %s) differs from the live run's:\n%s\nlive:\n%s", tick, code, errOut, got, want)
		}
	}

	conquest := worldtest.Copy(t, filepath.Join(repoRoot, "simulations", "conquest-demo"))
	before := srv.CallCount()
	code, _, errOut := arbiter(t, "run", conquest, "--batch")
	if code == 0 || !strings.Contains(errOut, "Batch API") || srv.CallCount() != before {
		t.Errorf("run --batch on a conquest: exit %d, %d calls\n%s", code, srv.CallCount()-before, errOut)
	}
}

// TestProgressLineBatch: while a phase waits for its job, the progress line
// shows the job's counts, what the server wrote escaped.
func TestProgressLineBatch(t *testing.T) {
	io, _, errOut := TestStreams("")
	progressLine(io)(session.PhaseProgress{Tick: 1, LastTick: 2, Phase: "intention", Calls: 10,
		Batch: &session.BatchProgress{Job: "batch_1\x1b]0;owned\a", Status: "in_progress", Total: 10, Completed: 3, Failed: 1}})
	got := errOut.String()
	if !strings.Contains(got, "tick 1/2 · intention · batch job batch_1\\x1b]0;owned\\a in_progress · 3/10 answered, 1 failed") {
		t.Errorf("progress line = %q", got)
	}
	if strings.Contains(got, "\x1b]") {
		t.Errorf("the server's text reached the terminal raw: %q", got)
	}
}

// TestBatchPrices: the tokens a Batch API job answered are stored as batch
// tokens and priced at the model's batch_discount (0.5 unless set): a
// demo-sim tick of 11 calls, $1.98 live (see priced), costs $0.99 as a
// job, $1.485 at a discount of 0.25; usage, status and run --json say
// which tokens were batch tokens, and run.max_cost counts the discounted
// price.
func TestBatchPrices(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	usage := func(sim, cfg string) session.UsageReport {
		t.Helper()
		code, out, errOut := arbiter(t, "usage", sim, "--config", cfg, "--json")
		var rep session.UsageReport
		if code != 0 || json.Unmarshal([]byte(out), &rep) != nil || rep.Total.CostUSD == nil {
			t.Fatalf("usage --json: exit %d\n%s\n%s", code, out, errOut)
		}
		return rep
	}
	sim := demoCopy(t)
	cfg := priced(t, "")
	code, out, errOut := arbiter(t, "run", sim, "--batch", "--config", cfg, "--json")
	if code != 0 {
		t.Fatalf("run --batch: exit %d\n%s", code, errOut)
	}
	var rep session.RunReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.BatchUsage.PromptTokens != 11*120 || rep.BatchUsage != rep.Usage {
		t.Errorf("run --json: usage %+v, batch usage %+v (%v); want every token a batch token", rep.Usage, rep.BatchUsage, err)
	}
	u := usage(sim, cfg)
	if got := *u.Total.CostUSD; math.Abs(got-0.99) > 1e-9 || u.Total.BatchPromptTokens != 1320 || u.Total.BatchCompletionTokens != 330 {
		t.Errorf("usage: $%g, %d+%d batch tokens; want $0.99 and 1320+330", got, u.Total.BatchPromptTokens, u.Total.BatchCompletionTokens)
	}
	_, text, _ := arbiter(t, "usage", sim, "--config", cfg)
	if !strings.Contains(text, "1650 tokens answered through Batch API jobs (1320 prompt, 330 completion)") || !strings.Contains(text, "cost $0.9900") {
		t.Errorf("usage does not tell the batch tokens and their price:\n%s", text)
	}
	_, status, _ := arbiter(t, "status", sim)
	if !strings.Contains(status, "batch tokens: 1320 prompt + 330 completion = 1650") {
		t.Errorf("status does not tell the batch tokens:\n%s", status)
	}
	quarter := priced(t, "")
	os.WriteFile(quarter, []byte("prices:\n  - {model: test-model, prompt: 1000, completion: 2000, batch_discount: 0.25}\n"), 0o644)
	if got := *usage(sim, quarter).Total.CostUSD; math.Abs(got-1.485) > 1e-9 {
		t.Errorf("usage at batch_discount 0.25: $%g, want $1.485", got)
	}
	_, shown, _ := arbiter(t, "config", "show", "--config", cfg)
	if !strings.Contains(shown, "batch_discount: 0.5") {
		t.Errorf("config show does not say the default batch discount:\n%s", shown)
	}

	// run.max_cost counts what was spent at the batch price: $0.99 leaves
	// room under $2.5 for tick 2 ($0.99 more), which the live price would not.
	capped := priced(t, "run:\n  max_cost: 2.5\n")
	if code, _, errOut := arbiter(t, "run", sim, "--batch", "--config", capped); code != 0 {
		t.Errorf("run --batch under max_cost $2.5 after $0.99: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := arbiter(t, "run", sim, "--config", capped); code != ExitBudget || !strings.Contains(errOut, "$1.98 spent of run.max_cost $2.5") {
		t.Errorf("a live tick after $1.98 under $2.5: exit %d, want %d\n%s", code, ExitBudget, errOut)
	}

	bad := priced(t, "")
	os.WriteFile(bad, []byte("prices:\n  - {model: test-model, prompt: 1, completion: 2, batch_discount: 1.5}\n"), 0o644)
	if code, _, errOut := arbiter(t, "validate", sim, "--config", bad); code != ExitUsage || !strings.Contains(errOut, "config prices[0] (test-model).batch_discount: must be within 0..1") {
		t.Errorf("batch_discount 1.5: exit %d\n%s", code, errOut)
	}
}

// TestPhaseModeBatch: phases.<name>.mode: batch sends that phase alone as
// a Batch API job each tick, the other phase live, to the state a live run
// reaches with the same answers; run --batch is recorded in the manifest
// as both phases' mode; a mode other than live or batch is refused by
// validate and run, naming the file (or variable) and the key.
func TestPhaseModeBatch(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, byPrompt)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("phases:\n  resolution:\n    mode: batch\n"), 0o644)
	live, mixed := demoCopy(t), demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--ticks", "2", "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	before := srv.CallCount()
	if code, _, errOut := arbiter(t, "run", mixed, "--ticks", "2", "--config", cfg); code != 0 {
		t.Fatalf("run with phases.resolution.mode batch: exit %d\n%s", code, errOut)
	}
	if srv.BatchesCreated() != 2 {
		t.Errorf("%d batch jobs, want 2 (the resolution phase of 2 ticks)", srv.BatchesCreated())
	}
	var jobs, lives int
	for _, c := range srv.Calls()[before:] {
		switch {
		case strings.HasPrefix(c.CustomID, "resolution:"):
			jobs++
		case c.CustomID == "":
			lives++
		default:
			t.Errorf("call %d went as %q; only the resolution phase goes as a job", c.N, c.CustomID)
		}
	}
	if jobs != 10 || lives != 12 {
		t.Errorf("%d resolution calls in jobs and %d live calls; want 10 and the 12 intentions", jobs, lives)
	}
	for _, tick := range []string{"1", "2"} {
		_, want, _ := arbiter(t, "export", live, "--format", "json", "--tick", tick)
		if _, got, _ := arbiter(t, "export", mixed, "--format", "json", "--tick", tick); got != want || want == "" {
			t.Errorf("tick %s: the export differs from the live run's:\n%s\nlive:\n%s", tick, got, want)
		}
	}
	_, status, _ := arbiter(t, "status", mixed, "--config", cfg)
	if !strings.Contains(status, "phases.resolution.mode=batch") || strings.Contains(status, "phases.intention.mode=batch") {
		t.Errorf("status does not show the run's phase modes:\n%s", status)
	}
	all := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", all, "--batch"); code != 0 {
		t.Fatalf("run --batch: exit %d\n%s", code, errOut)
	}
	if _, status, _ := arbiter(t, "status", all); !strings.Contains(status, "phases.intention.mode=batch") || !strings.Contains(status, "phases.resolution.mode=batch") {
		t.Errorf("status of a run --batch does not show both phases in batch mode:\n%s", status)
	}

	os.WriteFile(cfg, []byte("phases:\n  resolution:\n    mode: bach\n"), 0o644)
	calls := srv.CallCount()
	for _, cmd := range []string{"validate", "run"} {
		code, _, errOut := arbiter(t, cmd, mixed, "--config", cfg)
		if code != ExitUsage || !strings.Contains(errOut, "config "+cfg+`: phases.resolution.mode: "bach" is not a phase mode: live`) {
			t.Errorf("%s with mode bach: exit %d\n%s", cmd, code, errOut)
		}
	}
	t.Setenv("ARBITER_PHASES_INTENTION_MODE", "Batch")
	if code, _, errOut := arbiter(t, "validate", mixed); code != ExitUsage || !strings.Contains(errOut, `ARBITER_PHASES_INTENTION_MODE (phases.intention.mode): "Batch" is not a phase mode`) {
		t.Errorf("ARBITER_PHASES_INTENTION_MODE=Batch: exit %d\n%s", code, errOut)
	}
	if srv.CallCount() != calls {
		t.Errorf("a refused mode made %d calls", srv.CallCount()-calls)
	}
}

// byPrompt answers valid JSON as a function of the prompt alone, not of
// the order calls arrive in, so that a live run and a batch run (or one
// resumed) get the same answers.
func byPrompt(c *openaitest.Call) openaitest.Reply {
	h := fnv.New32a()
	h.Write([]byte(c.SystemMessage() + c.LastUserMessage()))
	cc := *c
	cc.N = int(h.Sum32() % 100000)
	return openaitest.FromSchema(nil)(&cc)
}

// TestBatchInterruptExitsInterrupted: Ctrl-C while a run waits for its
// Batch API job ends it as an interrupted live run ends: exit 130, the
// tick rolled back and said so, not an unrecoverable error.
func TestBatchInterruptExitsInterrupted(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, byPrompt)
	srv.HoldBatches(true)
	sim := demoCopy(t)
	code, _, errOut := interruptBatch(t, sim)
	if code != ExitInterrupted || !strings.Contains(errOut, "nterrupted") || strings.Contains(errOut, "canceled while waiting") || strings.Contains(errOut, "prompt_invalid") {
		t.Errorf("Ctrl-C while the job is pending: exit %d, want %d\n%s", code, ExitInterrupted, errOut)
	}
}

// TestBatchStopBeforeFirstTickKeepsJob: a batch run stopped before its
// first tick commits, by Ctrl-C while its job is pending or by a failure
// after the job was submitted, keeps state.db and the job stored in it:
// the next run polls that job and submits none again (the server sees one
// job per phase and tick).
func TestBatchStopBeforeFirstTickKeepsJob(t *testing.T) {
	t.Run("interrupted", func(t *testing.T) {
		cleanEnv(t)
		srv := fakeModel(t, byPrompt)
		srv.HoldBatches(true)
		sim := demoCopy(t)
		interruptBatch(t, sim)
		srv.HoldBatches(false)
		rerunPaysOnce(t, srv, sim)
	})
	t.Run("failed", func(t *testing.T) {
		cleanEnv(t)
		srv := fakeModel(t, byPrompt)
		srv.FailFileContent(true)
		sim := demoCopy(t)
		if code, _, errOut := arbiter(t, "run", sim, "--batch"); code == 0 || srv.BatchesCreated() != 1 {
			t.Fatalf("run whose output cannot be downloaded: exit %d, %d jobs\n%s", code, srv.BatchesCreated(), errOut)
		}
		srv.FailFileContent(false)
		rerunPaysOnce(t, srv, sim)
	})
}

// interruptBatch runs `run sim --batch` in process and cancels it (Ctrl-C)
// once its first job id is stored; it returns the run's exit and output.
func interruptBatch(t *testing.T, sim string) (int, string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ios, out, errOut := TestStreams("")
	done := make(chan int, 1)
	go func() { done <- Execute(ctx, ios, []string{"run", sim, "--batch"}) }()
	for deadline := time.Now().Add(60 * time.Second); storedJob(t, filepath.Join(sim, "state.db")) == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("the run stored no batch job id within a minute")
		}
	}
	cancel()
	select {
	case code := <-done:
		return code, out.String(), errOut.String()
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not stop within 30s of Ctrl-C")
	}
	return 0, "", ""
}

// rerunPaysOnce runs sim again after a run that stopped with its tick 1
// intention job submitted: the job is polled, not submitted again, and
// the tick commits with one job per phase.
func rerunPaysOnce(t *testing.T, srv *openaitest.Server, sim string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(sim, "state.db")); err != nil {
		t.Errorf("state.db, which holds the submitted job, is gone: %v", err)
	}
	if code, out, errOut := arbiter(t, "run", sim, "--batch"); code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Fatalf("rerun: exit %d\n%s\n%s", code, out, errOut)
	}
	if got := srv.BatchesCreated(); got != 2 {
		t.Errorf("the server saw %d jobs for tick 1, want 2 (one per phase): the stopped run's job was submitted again", got)
	}
}

// TestBatchOutputTooLongOrRepeated: a job's output whose first line is
// over the bound of a line (600 KiB; each call's answer may take 256 KiB
// here) and whose second comes twice does not fail the tick: the long
// line's call is made live, the repeated one's first answer used and the
// repeat reported once; the tick is a live run's.
func TestBatchOutputTooLongOrRepeated(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, byPrompt)
	live, batch := demoCopy(t), demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	var longIDs []string
	srv.EditBatchOutput(func(out []byte) []byte {
		lines := bytes.SplitAfter(out, []byte("\n"))
		if len(lines) < 2 {
			return out
		}
		first := string(lines[0])
		i := strings.Index(first, `",`) + 2 // after the custom_id, which the stand-in writes first
		longIDs = append(longIDs, first[len(`{"custom_id":"`):i-2])
		lines[0] = []byte(first[:i] + `"pad":"` + strings.Repeat("x", 600<<10) + `",` + first[i:])
		return bytes.Join(append(lines, lines[1]), nil)
	})
	before := srv.CallCount()
	code, _, errOut := arbiter(t, "run", batch, "--batch")
	if code != 0 {
		t.Fatalf("run --batch with a line of 600 KiB: exit %d\n%s", code, errOut)
	}
	asked, liveAsks := map[string]string{}, []string{} // custom_id → the prompt it was sent
	for _, c := range srv.Calls()[before:] {
		if c.CustomID == "" {
			liveAsks = append(liveAsks, c.LastUserMessage())
		} else {
			asked[c.CustomID] = c.LastUserMessage()
		}
	}
	if len(longIDs) != 2 || len(liveAsks) != 2 || liveAsks[0] != asked[longIDs[0]] || liveAsks[1] != asked[longIDs[1]] {
		t.Errorf("%d calls made live, want those of the long lines, %q", len(liveAsks), longIDs)
	}
	if n := strings.Count(errOut, "more than once"); n != 2 {
		t.Errorf("the repeated line was reported %d times, want once per job:\n%s", n, errOut)
	}
	_, want, _ := arbiter(t, "export", live, "--format", "json")
	if _, got, _ := arbiter(t, "export", batch, "--format", "json"); got != want {
		t.Errorf("the batch run's tick differs from the live run's:\n%s\nlive:\n%s", got, want)
	}
}
