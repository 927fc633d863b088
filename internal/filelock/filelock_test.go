//go:build unix

package filelock

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func TestTryLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	// flock is per open file: a second open in this process is refused too.
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock: %v, want ErrLocked", err)
	}
	unlock()
	unlock2, err := TryLock(path)
	if err != nil {
		t.Fatalf("TryLock after unlock: %v", err)
	}
	unlock2()
}

func TestTryLockDirectory(t *testing.T) {
	dir := t.TempDir()
	unlock, err := TryLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(dir); !errors.Is(err, ErrLocked) {
		t.Fatalf("second TryLock of the directory: %v, want ErrLocked", err)
	}
	unlock()
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("locking a directory created %d entries in it", len(entries))
	}
}

func TestLockWaitsAndGivesUp(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Lock(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Lock while held: %v, want the context's end", err)
	}
	go func() { time.Sleep(100 * time.Millisecond); unlock() }()
	unlock2, err := Lock(context.Background(), path)
	if err != nil {
		t.Fatalf("Lock after release: %v", err)
	}
	unlock2()
}

// TestLockDiesWithProcess: a lock held by a process that is killed is free
// at once (no stale lock file to clean up).
func TestLockDiesWithProcess(t *testing.T) {
	// The child holds the lock until it is killed, so it must not make a
	// temporary directory of its own: nothing would remove it.
	if os.Getenv("FILELOCK_HOLD") != "" {
		if _, err := TryLock(os.Getenv("FILELOCK_HOLD")); err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("held\n")
		time.Sleep(time.Minute)
		return
	}
	path := filepath.Join(t.TempDir(), "x.lock")
	cmd := exec.Command(os.Args[0], "-test.run=TestLockDiesWithProcess")
	cmd.Env = append(os.Environ(), "FILELOCK_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	if _, err := TryLock(path); !errors.Is(err, ErrLocked) {
		t.Fatalf("lock held by the child: %v, want ErrLocked", err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	unlock, err := TryLock(path)
	if err != nil {
		t.Fatalf("lock after the holder died: %v", err)
	}
	unlock()
}
