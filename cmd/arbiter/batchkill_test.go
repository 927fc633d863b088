package main

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
