//go:build unix

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestBenchStopsOnSignal runs `arbiter bench` as a real process and stops it
// mid-tick: with Ctrl-C as a terminal sends it (SIGINT to the process group,
// the stand-in server included) and with SIGTERM to the bench alone. Either
// way it exits 130 promptly, prints the report of the ticks it measured,
// leaves -o as it was, and leaves no world folder and no stand-in server.
func TestBenchStopsOnSignal(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	if runtime.GOOS != "linux" {
		t.Skip("looks for the stand-in server in /proc")
	}
	for _, tc := range []struct {
		name  string
		group bool
		sig   syscall.Signal
	}{{"Ctrl-C", true, syscall.SIGINT}, {"SIGTERM", false, syscall.SIGTERM}} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			tmp, dir := t.TempDir(), t.TempDir()
			out := filepath.Join(dir, "BENCHMARKS.md")
			if err := os.WriteFile(out, []byte("the figures before\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mark := fmt.Sprintf("ARBITER_BENCH_TEST_MARK=%s-%d", t.Name(), os.Getpid())
			cmd := exec.Command(os.Args[0], "bench", "--characters", "20", "--locations", "4", "-n", "50", "--latency", "20ms",
				"--server-concurrency", "4", "--lockstep=false", "-v", "-o", out)
			cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1", "TMPDIR="+tmp, mark)
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			stdout, stderr := &watchedOutput{}, &watchedOutput{}
			second := stderr.watch("tick 2/50 committed")
			cmd.Stdout, cmd.Stderr = stdout, stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			select {
			case <-second:
			case <-time.After(60 * time.Second):
				t.Fatalf("tick 2 never committed; stderr:\n%s", stderr)
			}
			pid := cmd.Process.Pid
			if tc.group {
				pid = -pid
			}
			if err := syscall.Kill(pid, tc.sig); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(20 * time.Second):
				t.Fatalf("bench did not stop within 20s of %s; stderr:\n%s", tc.name, stderr)
			}
			if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, ExitInterrupted, stderr)
			}
			if !strings.Contains(stdout.String(), "| main | 20 / 4 (1) |") || !strings.Contains(stdout.String(), "interrupted with the tick in flight rolled back") {
				t.Errorf("the report of the ticks measured is not printed, or does not say it was interrupted:\n%s", stdout)
			}
			if !strings.Contains(stderr.String(), "interrupted; the report above is what was measured before ("+out+" left as it was)") {
				t.Errorf("stderr does not say the bench was interrupted:\n%s", stderr)
			}
			if b, _ := os.ReadFile(out); !bytes.Equal(b, []byte("the figures before\n")) {
				t.Errorf("-o replaced by the report of an interrupted bench:\n%s", b)
			}
			if left, _ := filepath.Glob(filepath.Join(tmp, "arbiter-bench-*")); len(left) > 0 {
				t.Errorf("world folders left: %v", left)
			}
			if pids := processesWith(mark); len(pids) > 0 {
				t.Errorf("stand-in servers still running: pids %v", pids)
			}
		})
	}
}

// processesWith lists the processes whose environment holds the variable
// kv (from /proc).
func processesWith(kv string) []string {
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var pids []string
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone, or not ours
		}
		for _, v := range bytes.Split(b, []byte{0}) {
			if string(v) == kv {
				pids = append(pids, filepath.Base(filepath.Dir(p)))
			}
		}
	}
	return pids
}
