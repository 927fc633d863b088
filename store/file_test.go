//go:build unix

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStateDBNotRegularFileRefused: a state.db, or a file beside it, that
// is a symbolic link (out of the folder, inside it, to /dev/zero), a FIFO
// or a folder is refused by both opens, naming it; SQLite never sees it, so
// nothing is created or written where a link points.
func TestStateDBNotRegularFileRefused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		make  func(t *testing.T, path, outside string)
		named string // the file the error names, relative to state.db
		what  string
	}{
		{"link out of the folder", func(t *testing.T, path, outside string) { symlink(t, outside, path) }, "", "symbolic link to "},
		{"link to /dev/zero", func(t *testing.T, path, _ string) { symlink(t, "/dev/zero", path) }, "", "symbolic link to /dev/zero"},
		{"link inside the folder", func(t *testing.T, path, _ string) {
			if err := os.WriteFile(path+".real", nil, 0o644); err != nil {
				t.Fatal(err)
			}
			symlink(t, path+".real", path)
		}, "", "symbolic link"},
		{"-wal a link out", func(t *testing.T, path, outside string) { symlink(t, outside, path+"-wal") }, "-wal", "symbolic link"},
		{"-shm a link out", func(t *testing.T, path, outside string) { symlink(t, outside, path+"-shm") }, "-shm", "symbolic link"},
		{"a FIFO", func(t *testing.T, path, _ string) {
			if err := syscall.Mkfifo(path, 0o644); err != nil {
				t.Fatal(err)
			}
		}, "", "special file (a FIFO"},
		{"a folder", func(t *testing.T, path, _ string) {
			if err := os.Mkdir(path, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "", "folder"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), FileName)
			outside := filepath.Join(t.TempDir(), "x.db")
			tc.make(t, path, outside)
			eachOpen(t, path, func(name string, err error) {
				if !errors.Is(err, ErrNotRegularFile) || !strings.Contains(err.Error(), path+tc.named+" is a "+tc.what) ||
					!strings.Contains(err.Error(), "arbiter reset") {
					t.Errorf("%s: err = %v; want ErrNotRegularFile naming %s as a %s, and the way out", name, err, path+tc.named, tc.what)
				}
			})
			if _, err := os.Lstat(outside); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created outside the folder", outside)
			}
			for _, side := range sideFiles {
				if side != tc.named {
					if _, err := os.Lstat(path + side); err == nil {
						t.Errorf("the refused open created %s", path+side)
					}
				}
			}
		})
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestResetRemovesLinkNotTarget: Reset, the way out of a refused link,
// removes the link and leaves the file it points to.
func TestResetRemovesLinkNotTarget(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	outside := filepath.Join(t.TempDir(), "x.db")
	if err := os.WriteFile(outside, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	symlink(t, outside, path)
	if err := Reset(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Error("the link is still there")
	}
	if b, err := os.ReadFile(outside); err != nil || string(b) != "theirs" {
		t.Errorf("the target: %q, %v; want it untouched", b, err)
	}
}
