package main

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
)

// TestBatchSIGKILLResumes kills a real `arbiter run --batch` (SIGKILL, no
// chance to clean up) while its first Batch API job is pending on the
// stand-in server, then runs it again: the job stored in state.db is polled,
// never submitted again (the server counts one job per phase and tick),
// and the ticks are those of a live run with the same answers.
func TestBatchSIGKILLResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not in -short")
	}
	bin := buildArbiter(t)
	cleanEnv(t)
	srv := fakeModel(t, byPrompt)
	live, batch := demoCopy(t), demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--ticks", "2", "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL, "ARBITER_LLM_MODEL=test-model")

	srv.HoldBatches(true)
	cmd := exec.CommandContext(context.Background(), bin, "run", batch, "--ticks", "2", "--batch")
	cmd.Dir, cmd.Env = batch, env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	job := ""
	for deadline := time.Now().Add(60 * time.Second); job == ""; {
		job = storedJob(t, filepath.Join(batch, "state.db"))
		if job == "" && time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the run stored no batch job id within a minute")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGKILL)
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the run ended by %v before the SIGKILL", err)
	}
	if srv.BatchesCreated() != 1 {
		t.Fatalf("killed while its first job was pending: %d jobs submitted", srv.BatchesCreated())
	}

	srv.HoldBatches(false)
	resume := exec.CommandContext(context.Background(), bin, "run", batch, "--ticks", "2", "--batch")
	resume.Dir, resume.Env = batch, env
	if out, err := resume.CombinedOutput(); err != nil {
		t.Fatalf("resumed run: %v\n%s", err, out)
	}
	if got := srv.BatchesCreated(); got != 4 {
		t.Errorf("the server saw %d jobs, want 4 (2 phases × 2 ticks): job %s, pending when killed, was submitted again", got, job)
	}
	for _, tick := range []string{"1", "2"} {
		_, want, _ := arbiter(t, "export", live, "--format", "json", "--tick", tick)
		code, got, errOut := arbiter(t, "export", batch, "--format", "json", "--tick", tick)
		if code != 0 || got != want || want == "" {
			t.Errorf("tick %s: the resumed batch run's export (exit %d, %s) differs from the live run's:\n%s\nlive:\n%s", tick, code, errOut, got, want)
		}
	}
}

// TestBatchStopsPayOnce: a real `arbiter run --batch` on a world with no
// state.db, stopped before its first tick commits, by Ctrl-C (SIGINT) or
// SIGTERM while its first job is pending, or by a failure after that job
// was submitted (its output cannot be downloaded), keeps state.db and the
// job in it; run again, it polls that job: the stand-in server sees
// exactly one job per phase and tick, and the ticks are a live run's.
func TestBatchStopsPayOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary: not in -short")
	}
	bin := buildArbiter(t)
	cleanEnv(t)
	fakeModel(t, byPrompt) // the live run's
	live := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", live, "--ticks", "2", "--lockstep"); code != 0 {
		t.Fatalf("live run: exit %d\n%s", code, errOut)
	}
	for _, stop := range []string{"SIGINT", "SIGTERM", "failed first tick"} {
		t.Run(stop, func(t *testing.T) {
			srv := openaitest.New(t, byPrompt)
			sim := demoCopy(t)
			run := func() *exec.Cmd {
				cmd := exec.CommandContext(context.Background(), bin, "run", sim, "--ticks", "2", "--batch")
				cmd.Dir, cmd.Env = sim, append(os.Environ(), "OPENAI_BASE_URL="+srv.URL, "ARBITER_LLM_MODEL=test-model")
				return cmd
			}
			if stop == "failed first tick" {
				srv.FailFileContent(true)
				if out, err := run().CombinedOutput(); err == nil {
					t.Fatalf("a run whose job output cannot be downloaded succeeded:\n%s", out)
				}
				srv.FailFileContent(false)
			} else {
				srv.HoldBatches(true)
				signalPendingBatch(t, run(), sim, map[string]syscall.Signal{"SIGINT": syscall.SIGINT, "SIGTERM": syscall.SIGTERM}[stop])
				srv.HoldBatches(false)
			}
			if srv.BatchesCreated() != 1 {
				t.Fatalf("stopped while its first job was pending: %d jobs submitted", srv.BatchesCreated())
			}
			if storedJob(t, filepath.Join(sim, "state.db")) == "" {
				t.Fatal("the stopped run did not keep its job in state.db")
			}
			if out, err := run().CombinedOutput(); err != nil {
				t.Fatalf("run again: %v\n%s", err, out)
			}
			if got := jobsPerPhaseTick(t, srv); len(got) != 4 || slices.ContainsFunc(slices.Collect(maps.Values(got)), func(n int) bool { return n != 1 }) {
				t.Errorf("jobs per phase and tick %v; want exactly one for each phase of ticks 1 and 2", got)
			}
			for _, tick := range []string{"1", "2"} {
				_, want, _ := arbiter(t, "export", live, "--format", "json", "--tick", tick)
				if code, got, errOut := arbiter(t, "export", sim, "--format", "json", "--tick", tick); code != 0 || got != want {
					t.Errorf("tick %s: the export (exit %d, %s) differs from the live run's", tick, code, errOut)
				}
			}
		})
	}
}

// signalPendingBatch starts cmd, sends it sig once it has stored its
// first job's id, and checks that it ends as an interrupted run: exit 130
// saying so.
func signalPendingBatch(t *testing.T, cmd *exec.Cmd, sim string, sig syscall.Signal) {
	t.Helper()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); storedJob(t, filepath.Join(sim, "state.db")) == ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatal("the run stored no batch job id within a minute")
		}
	}
	cmd.Process.Signal(sig)
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitInterrupted || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("%v while the job was pending: %v, want exit %d\n%s", sig, err, ExitInterrupted, stderr.String())
	}
}

// jobsPerPhaseTick counts the jobs srv was sent per phase and tick, as
// their tag (metadata arbiter_job: phase/tick/stored-at) names them.
func jobsPerPhaseTick(t *testing.T, srv *openaitest.Server) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, b := range srv.Batches() {
		tag, _ := b.Metadata[llm.TagKey].(string)
		parts := strings.Split(tag, "/")
		if len(parts) != 3 {
			t.Fatalf("job %s has tag %q, not phase/tick/time", b.ID, tag)
		}
		n[parts[0]+"/"+parts[1]]++
	}
	return n
}

// storedJob is the id of the batch job state.db at path holds, "" while
// none is stored (or the file is not there yet).
func storedJob(t *testing.T, path string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.QueryRow("SELECT job_id FROM batch_jobs WHERE job_id <> '' LIMIT 1").Scan(&id); err != nil {
		return "" // no row yet, or no table yet
	}
	return id
}
