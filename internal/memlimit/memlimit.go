// Package memlimit keeps the memory of a process near its working set.
//
// By default (GOGC=100) the Go collector lets the heap grow to twice what
// was live at its last cycle. A tick of a large world builds up everything
// it will commit, so the live heap peaks once a tick, and at that peak the
// default lets the process hold twice it. Govern sets the runtime's soft
// memory limit to Headroom times the largest live heap the process has
// had, read again after every collection, and at least MinHeadroom over
// it: the heap of a large world may then grow past the peak by half of it,
// not by all of it, for some more CPU spent collecting, and a small world
// keeps room enough that collecting does not cost more than its calls (the
// figures are in BENCHMARKS.md, section "Memory, export and scale after
// schema 10").
//
// Once Headroom times the peak is over the Floor, the limit alone paces
// the collector (GOGC off): the process may use the limit all through a
// tick, since it reaches it at the peak anyway, and GOGC's pacing only
// added collections early in each tick, when little was live. The limit
// follows the world: it is never a fixed size that a larger world would
// exceed, and the runtime caps what its collector may spend to honour a
// limit.
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

// MinHeadroom is the least room the limit leaves above the largest live
// heap seen. The collector runs each time the process allocates the room
// left above what is live, and marks all that is live each time: half of a
// small world's heap is little room, and its ticks spend more on the
// collector than on their calls.
const MinHeadroom = 112 << 20

// Floor is where the limit starts to pace the collector: while Headroom
// times the largest live heap is under it, GOGC does (a small process is
// left to it, the limit above it only a cap).
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

// adjust raises the limit to what limitFor gives for the largest live
// heap so far, and reports whether to go on.
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
	debug.SetMemoryLimit(limitFor(g.peak))
	if float64(g.peak)*Headroom > Floor && g.gcPercent == -2 {
		g.gcPercent = debug.SetGCPercent(-1)
	}
	return true
}

// limitFor is the limit for a largest live heap of peak bytes: Headroom
// times it, or MinHeadroom over it when that is more.
func limitFor(peak uint64) int64 {
	l := max(float64(peak)*Headroom, float64(peak)+MinHeadroom)
	if l >= math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(l)
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
