// Package memlimit keeps the memory of a process near its working set.
//
// By default (GOGC=100) the Go collector lets the heap grow to twice what
// was live at its last cycle. A tick of a large world builds up everything
// it will commit, so the live heap peaks once a tick, and at that peak the
// default lets the process hold twice it. Govern sets the runtime's soft
// memory limit to Headroom times the largest live heap the process has
// had, read again after every collection: the heap may then grow past the
// peak by half of it, not by all of it, for some more CPU spent collecting
// (the figures are in BENCHMARKS.md, section Collector).
//
// Once the limit is over the Floor, it alone paces the collector (GOGC
// off): the process may use the limit all through a tick, since it reaches
// it at the peak anyway, and GOGC's pacing only added collections early in
// each tick, when little was live. The limit follows the world: it is never
// a fixed size that a larger world would exceed, and the runtime caps what
// its collector may spend to honour a limit.
package memlimit

import (
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Headroom is the limit over the largest live heap seen.
const Headroom = 1.5

// Floor is the smallest limit set: a small process is left alone.
const Floor = 64 << 20

const liveMetric = "/gc/heap/live:bytes"

// Govern governs the memory limit of the process until stop is called,
// which puts back the limit in place before. It does nothing, and stop
// nothing, when the user tuned the collector (GOMEMLIMIT or GOGC set).
func Govern() (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" || os.Getenv("GOGC") != "" {
		return func() {}
	}
	g := &governor{before: debug.SetMemoryLimit(-1), gcPercent: -2, sample: []metrics.Sample{{Name: liveMetric}}}
	g.adjust()
	g.arm()
	return g.stop
}

type governor struct {
	mu      sync.Mutex
	stopped bool
	before  int64 // the limit before Govern
	// gcPercent is GOGC before Govern turned it off, -2 while it has not.
	gcPercent int
	peak      uint64
	sample    []metrics.Sample
}

// sentinel is garbage as soon as it is made: its finalizer runs after the
// next collection, which is when the live heap is known again.
type sentinel struct{ g *governor }

func (g *governor) arm() {
	runtime.SetFinalizer(&sentinel{g}, func(s *sentinel) {
		if s.g.adjust() {
			s.g.arm()
		}
	})
}

// adjust raises the limit to Headroom times the largest live heap so far,
// and reports whether to go on.
func (g *governor) adjust() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.stopped {
		return false
	}
	metrics.Read(g.sample)
	if g.sample[0].Value.Kind() == metrics.KindUint64 {
		g.peak = max(g.peak, g.sample[0].Value.Uint64())
	}
	limit := limitFor(g.peak)
	debug.SetMemoryLimit(limit)
	if limit > Floor && g.gcPercent == -2 {
		g.gcPercent = debug.SetGCPercent(-1)
	}
	return true
}

// limitFor is the limit for a largest live heap of peak bytes.
func limitFor(peak uint64) int64 {
	l := float64(peak) * Headroom
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(Floor, int64(l))
}

func (g *governor) stop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.stopped {
		g.stopped = true
		if g.gcPercent != -2 {
			debug.SetGCPercent(g.gcPercent)
		}
		debug.SetMemoryLimit(g.before)
	}
}
