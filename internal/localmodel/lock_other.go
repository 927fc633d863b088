//go:build !unix

package localmodel

import "context"

// lockInstall is a no-op where flock(2) does not exist: concurrent builds are
// merely slower, not wrong.
func lockInstall(context.Context) (unlock func(), err error) {
	return func() {}, nil
}
