//go:build unix

package bench

import (
	"os"
	"runtime"
	"runtime/debug"
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

// resetPeakRSS makes the peak resident set size the current one, after
// giving the memory the collector has freed back to the system, so that
// the next world's peak is its own and not an earlier world's. Linux
// allows it (/proc/self/clear_refs, 5); elsewhere it reports false and the
// peak stays the process's.
func resetPeakRSS() bool {
	if runtime.GOOS != "linux" {
		return false
	}
	debug.FreeOSMemory()
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
}
