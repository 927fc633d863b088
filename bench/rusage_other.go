//go:build !unix

package bench

import (
	"errors"
	"time"
)

func usage() (time.Duration, int64, error) {
	return 0, 0, errors.New("arbiter bench measures CPU time and peak RSS with getrusage, which this system lacks")
}

func resetPeakRSS() bool { return false }
