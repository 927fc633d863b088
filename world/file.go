package world

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// MaxFileSize is the largest authored file read from a simulation folder
// (simulation.yaml, a character, a location, a prompt override).
const MaxFileSize = 1 << 20

// ErrFile is the reason every refused file gives: arbiter reads nothing
// outside the simulation folder, nothing that is not a regular file (a FIFO
// would block, /dev/zero never ends) and nothing over MaxFileSize.
var ErrFile = errors.New("arbiter reads only regular files inside the simulation folder, of bounded size (1 MiB for an authored file)")

// ReadFile reads the file at path, which must be a regular file inside the
// simulation folder dir once symlinks are resolved (a symlink to another
// file of the folder is fine), no larger than MaxFileSize. Any other file is
// refused with an error wrapping ErrFile that says what it is; it is never
// opened for reading when it is not a regular file, so a FIFO cannot block.
func ReadFile(dir, path string) ([]byte, error) { return ReadFileUpTo(dir, path, MaxFileSize) }

// ReadFileUpTo is ReadFile with another size limit, for a file of the
// folder that may be larger than an authored one (a saved game).
func ReadFileUpTo(dir, path string, limit int64) ([]byte, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	if rel, err := filepath.Rel(root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("it resolves to %s, outside the simulation folder: %w", real, ErrFile)
	}
	info, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if err := checkFile(info, limit); err != nil {
		return nil, err
	}
	// O_NONBLOCK: a file swapped for a FIFO since the Stat above must not
	// block the open; the descriptor's own Stat then refuses it.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	opened, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := checkFile(opened, limit); err != nil {
		return nil, err
	}
	if !os.SameFile(info, opened) {
		return nil, fmt.Errorf("it changed while being read: %w", ErrFile)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("it is larger than %d bytes: %w", limit, ErrFile)
	}
	return b, nil
}

// checkFile refuses what is not a regular file of at most limit bytes.
func checkFile(info fs.FileInfo, limit int64) error {
	switch m := info.Mode(); {
	case m.IsDir():
		return fmt.Errorf("it is not a regular file but a folder: %w", ErrFile)
	case !m.IsRegular():
		return fmt.Errorf("it is not a regular file but a %s: %w", modeName(m), ErrFile)
	case info.Size() > limit:
		return fmt.Errorf("it is larger than %d bytes (%d): %w", limit, info.Size(), ErrFile)
	}
	return nil
}

func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "device"
	case m&fs.ModeSocket != 0:
		return "socket"
	}
	return "special file (" + m.Type().String() + ")"
}
