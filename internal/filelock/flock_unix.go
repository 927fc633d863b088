//go:build unix

package filelock

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// TryLock takes the lock of path without waiting; ErrLocked when another
// process holds it. path may be a directory (locked as is, nothing created)
// or a file (created when missing).
func TryLock(path string) (unlock func(), err error) {
	flag := os.O_CREATE | os.O_RDWR
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		flag = os.O_RDONLY
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return func() {
			_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			_ = f.Close()
		}, nil
	case errors.Is(err, syscall.EWOULDBLOCK):
		_ = f.Close()
		return nil, ErrLocked
	default:
		_ = f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
}
