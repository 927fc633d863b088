package chronicle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

// TestReadSavedStaysInFolder: a chronicle.json that links out of its folder
// is refused, not read.
func TestReadSavedStaysInFolder(t *testing.T) {
	t.Parallel()
	outside := filepath.Join(t.TempDir(), "save.json")
	os.WriteFile(outside, []byte(`{"version":1,"messages":[]}`), 0o644)
	path := filepath.Join(t.TempDir(), FileName)
	if err := os.Symlink(outside, path); err != nil {
		t.Fatal(err)
	}
	_, err := ReadSaved(path)
	if !errors.Is(err, world.ErrFile) || !strings.Contains(err.Error(), "outside the simulation folder") {
		t.Fatalf("err = %v, want ErrFile", err)
	}
}
