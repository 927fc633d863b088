package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestFilesOutsideFolderRefused: validate and run refuse a character that
// links out of the folder and a prompt override that is a FIFO, with one
// message naming the file, exit 2, and never block.
func TestFilesOutsideFolderRefused(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/v1")
	outside := filepath.Join(t.TempDir(), "ada.yaml")
	os.WriteFile(outside, []byte("id: ada\n"), 0o644)
	for _, tc := range []struct {
		name string
		make func(dir string) (string, error)
		want string
	}{
		{"symlink", func(dir string) (string, error) {
			p := filepath.Join(dir, "characters", "zz.yaml")
			return p, os.Symlink(outside, p)
		}, "outside the simulation folder"},
		{"fifo", func(dir string) (string, error) {
			os.MkdirAll(filepath.Join(dir, "prompts"), 0o755)
			p := filepath.Join(dir, "prompts", "phase1_intention_system.md")
			return p, syscall.Mkfifo(p, 0o644)
		}, "named pipe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := demoCopy(t)
			path, err := tc.make(dir)
			if err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"validate", dir}, {"run", dir, "--ticks", "1"}} {
				code, out, errOut := arbiter(t, args...)
				if code != ExitUsage || !strings.Contains(out+errOut, path) || !strings.Contains(out+errOut, tc.want) {
					t.Errorf("%v: exit %d, want %d and a message naming %s, %q:\n%s%s", args, code, ExitUsage, path, tc.want, out, errOut)
				}
			}
		})
	}
}
