//go:build unix

package bench

import (
	"runtime"
	"syscall"
	"time"
)

// usage is the CPU time this process has used (user + system) and its peak
// resident set size in bytes, from getrusage(RUSAGE_SELF).
func usage() (cpu time.Duration, peakRSS int64, err error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, err
	}
	cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	peakRSS = int64(ru.Maxrss)
	if runtime.GOOS != "darwin" { // kilobytes everywhere else
		peakRSS *= 1024
	}
	return cpu, peakRSS, nil
}
