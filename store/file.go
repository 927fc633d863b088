package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ErrNotRegularFile is returned by Open and OpenReadOnly when state.db, or
// one of the files SQLite keeps beside it (-wal, -shm, -journal), exists
// but is not a regular file: a symbolic link, a device, a FIFO or a folder.
// SQLite follows a link and keeps its WAL beside the target, so the run
// state would be written outside the simulation folder (or read from
// /dev/zero as an empty run); nothing is opened.
var ErrNotRegularFile = errors.New("not a regular file")

// sideFiles are the suffixes of the files SQLite keeps beside a database.
var sideFiles = []string{"-wal", "-shm", "-journal"}

// checkFiles refuses a database at path, or a file beside it, that exists
// and is not a regular file. It does not follow links: a link is refused
// wherever it points, even inside the folder, since the WAL would be
// written beside its target.
func checkFiles(path string) error {
	for _, p := range append([]string{path}, suffixed(path)...) {
		info, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if info.Mode().IsRegular() {
			continue
		}
		what := "a " + kindOf(info.Mode())
		if info.Mode()&fs.ModeSymlink != 0 {
			if to, err := os.Readlink(p); err == nil {
				what += " to " + to
			}
		}
		return fmt.Errorf("%s is %s, %w: arbiter keeps run state only in regular files inside the simulation folder; remove it (`arbiter reset` removes the link, not what it points to) or put the database file itself in its place",
			p, what, ErrNotRegularFile)
	}
	return nil
}

func suffixed(path string) []string {
	out := make([]string, len(sideFiles))
	for i, s := range sideFiles {
		out[i] = path + s
	}
	return out
}

// kindOf names the type of a file that is not regular.
func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m.IsDir():
		return "folder"
	}
	return "special file (a FIFO, a device or a socket)"
}
