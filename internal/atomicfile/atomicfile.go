// Package atomicfile writes a file whole or not at all: the content goes to
// a temporary file beside it, which is then renamed over the path, so a
// failure (a full disk, a crash) leaves the old file, or no file, never half
// of the new one.
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
)

// Write replaces path with b, readable by everyone (0644). On failure the
// temporary file is removed and the error names path.
func Write(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
