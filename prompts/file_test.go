package prompts

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

// TestOverrideStaysInFolder: an override that is a symlink out of the
// simulation folder, or not a regular file, is refused with one message and
// never read; a symlink to another file of the folder is fine.
func TestOverrideStaysInFolder(t *testing.T) {
	t.Parallel()
	secret := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(secret, []byte("top secret {{.X}}"), 0o644)
	for _, tc := range []struct {
		name string
		make func(dir, path string) error
		want string
	}{
		{"outside", func(dir, path string) error { return os.Symlink(secret, path) }, "outside the simulation folder"},
		{"fifo", func(dir, path string) error { return syscall.Mkfifo(path, 0o644) }, "named pipe"},
		{"inside", func(dir, path string) error {
			os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("You are {{.Name}}."), 0o644)
			return os.Symlink(filepath.Join(dir, "mine.txt"), path)
		}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			os.Mkdir(filepath.Join(dir, OverrideDir), 0o755)
			path := filepath.Join(dir, OverrideDir, "phase1_intention_system.md")
			if err := tc.make(dir, path); err != nil {
				t.Fatal(err)
			}
			done := make(chan struct{})
			var err error
			go func() { defer close(done); _, err = New(dir) }()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("New blocked")
			}
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !errors.Is(err, world.ErrFile) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("err = %v, want ErrFile naming %s and %q", err, path, tc.want)
			}
			if strings.Contains(err.Error(), "top secret") {
				t.Error("the outside file was read")
			}
		})
	}
}

// TestEveryTemplateOfTheFolderIsADefault: a kind's template added to this
// folder (<kind>_<name>.md) is a default with no line of code, and
// README.md is none.
func TestEveryTemplateOfTheFolderIsADefault(t *testing.T) {
	files, err := filepath.Glob("*.md")
	if err != nil || len(files) < 2 {
		t.Fatalf("templates of the folder: %v, %v", files, err)
	}
	for _, name := range files {
		_, err := DefaultText(name)
		if (err == nil) != (name != "README.md") {
			t.Errorf("DefaultText(%s): %v", name, err)
		}
	}
}
