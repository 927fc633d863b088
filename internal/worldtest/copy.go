package worldtest

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Copy copies the simulation folder src into a temporary folder of t,
// leaving out any run state (state.db and its WAL files), and returns the
// copy's path.
func Copy(t testing.TB, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), filepath.Base(src))
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if strings.HasPrefix(d.Name(), "state.db") {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
