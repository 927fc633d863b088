package world_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/world"
)

// TestReadFileStaysInFolder: only regular files inside the folder are read,
// symlinks resolving inside it included, each under MaxFileSize; the rest is
// refused with ErrFile and a message saying why, without blocking.
func TestReadFileStaysInFolder(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "ok.yaml"), []byte("id: ok"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.Symlink(filepath.Join(dir, "ok.yaml"), filepath.Join(dir, "sub", "inside.yaml"))
	os.Symlink("../ok.yaml", filepath.Join(dir, "sub", "relative.yaml"))
	os.Symlink(secret, filepath.Join(dir, "outside.yaml"))
	os.Symlink("/dev/zero", filepath.Join(dir, "zero.yaml"))
	os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "dir.yaml"))
	os.WriteFile(filepath.Join(dir, "big.yaml"), make([]byte, world.MaxFileSize+1), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"ok.yaml", ""},
		{"sub/inside.yaml", ""},
		{"sub/relative.yaml", ""},
		{"outside.yaml", "outside the simulation folder"},
		{"zero.yaml", "outside the simulation folder"},
		{"dir.yaml", "not a regular file"},
		{"fifo.yaml", "not a regular file"},
		{"big.yaml", "larger than"},
		{"missing.yaml", "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done := make(chan struct{})
			var (
				b   []byte
				err error
			)
			go func() {
				defer close(done)
				b, err = world.ReadFile(dir, filepath.Join(dir, tc.name))
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("ReadFile blocked")
			}
			if tc.want == "" {
				if err != nil || string(b) != "id: ok" {
					t.Fatalf("got %q, %v", b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if tc.name != "missing.yaml" && !errors.Is(err, world.ErrFile) {
				t.Errorf("err = %v is not ErrFile", err)
			}
			if strings.Contains(string(b), "secret") {
				t.Error("read the outside file")
			}
		})
	}
}

// TestLoadRefusesOutsideCharacter: a character file that is a symlink out of
// the folder is a problem of that file, and its text is not loaded.
func TestLoadRefusesOutsideCharacter(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, nil)
	outside := filepath.Join(t.TempDir(), "x.yaml")
	os.WriteFile(outside, []byte("id: stranger\nname: Stranger\n"), 0o644)
	os.Symlink(outside, filepath.Join(dir, "characters", "stranger.yaml"))
	_, err := Load(dir)
	if err == nil || !strings.Contains(err.Error(), "stranger.yaml") || !strings.Contains(err.Error(), "outside the simulation folder") {
		t.Fatalf("err = %v", err)
	}
}
