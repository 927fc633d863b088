package localmodel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/internal/filelock"
)

// lockInstall takes a machine-wide lock around `go install`, so that test
// binaries run in parallel by `go test ./...` build the server once rather
// than each at the same time. It waits with ctx.
func lockInstall(ctx context.Context) (unlock func(), err error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	dir = filepath.Join(dir, "arbiter")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("lock for go install: %w", err)
	}
	name := filepath.Join(dir, "ollama-install.lock")
	unlock, err = filelock.Lock(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("waiting for another go install of ollama (%s): %w", name, err)
	}
	return unlock, nil
}
