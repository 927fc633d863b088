// Package filelock holds advisory locks on files (flock(2)), released by the
// kernel when the process ends, so a crash never leaves a stale lock behind.
package filelock

import (
	"context"
	"errors"
	"time"
)

// ErrLocked is returned by TryLock when another process holds the lock.
var ErrLocked = errors.New("locked by another process")

// Lock waits until it holds the lock of path (created when missing) or ctx
// ends, polling every 250ms.
func Lock(ctx context.Context, path string) (unlock func(), err error) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		unlock, err := TryLock(path)
		if !errors.Is(err, ErrLocked) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-tick.C:
		}
	}
}
