package memlimit

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// The tests change the process's memory limit: none runs in parallel.

// TestGovernFollowsThePeak: after collections with about 200 MB live, the
// limit is at least limitFor of that; when that memory goes, the limit
// stays at the peak's; stop puts the limit back.
func TestGovernFollowsThePeak(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "")
	t.Setenv("GOGC", "")
	before := debug.SetMemoryLimit(-1)
	stop := Govern()
	t.Cleanup(stop) // on failure too: the next test needs the limit back
	if got := debug.SetMemoryLimit(-1); got < MinHeadroom || got == math.MaxInt64 {
		t.Errorf("limit %d right after Govern; want at least the headroom %d", got, MinHeadroom)
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("GOGC %d right after Govern, a few MB live; want 100: a small process is left to GOGC", got)
	}
	const live = 200 << 20
	hold := make([][]byte, 0, live>>20)
	for range live >> 20 {
		hold = append(hold, make([]byte, 1<<20))
	}
	want := limitFor(live)
	waitFor(t, func() bool { return debug.SetMemoryLimit(-1) >= want }, "a limit of 200 MB and its headroom")
	if got := gcPercent(); got != -1 {
		t.Errorf("GOGC %d with a limit over the floor; want it off (-1), the limit pacing the collector", got)
	}
	runtime.KeepAlive(hold)
	hold = nil
	runtime.GC()
	runtime.GC()
	if got := debug.SetMemoryLimit(-1); got < want {
		t.Errorf("limit fell to %d once the memory went; want it to stay at the peak's %d", got, want)
	}
	stop()
	stop() // twice is harmless
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after stop, want %d back", got, before)
	}
	if got := gcPercent(); got != 100 {
		t.Errorf("GOGC %d after stop, want 100 back", got)
	}
	runtime.GC()
	runtime.GC()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after stop and two collections; the governor still runs", got)
	}
}

// TestGovernLeavesTheUsersSetting: with GOMEMLIMIT or GOGC set, the limit
// is the user's.
func TestGovernLeavesTheUsersSetting(t *testing.T) {
	for _, env := range []string{"GOMEMLIMIT", "GOGC"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", "")
			t.Setenv("GOGC", "")
			t.Setenv(env, "100")
			before := debug.SetMemoryLimit(-1)
			stop := Govern()
			defer stop()
			runtime.GC()
			runtime.GC()
			if got := debug.SetMemoryLimit(-1); got != before {
				t.Errorf("limit %d with %s set; want %d untouched", got, env, before)
			}
			if got := gcPercent(); got != 100 {
				t.Errorf("GOGC %d with %s set; want 100 untouched", got, env)
			}
		})
	}
}

func TestLimitFor(t *testing.T) {
	for _, tt := range []struct {
		peak uint64
		want int64
	}{
		{0, MinHeadroom},
		{Floor / 2, Floor/2 + MinHeadroom},
		{100 << 20, 100<<20 + MinHeadroom}, // half of it would leave too little room
		{2 * MinHeadroom, 3 * MinHeadroom}, // where the two rules meet
		{1 << 30, 1536 << 20},              // a large world: half of it
		{math.MaxUint64, math.MaxInt64},
	} {
		if got := limitFor(tt.peak); got != tt.want {
			t.Errorf("limitFor(%d) = %d, want %d", tt.peak, got, tt.want)
		}
	}
}

func waitFor(t *testing.T, ok func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s after 10 s: limit %d", what, debug.SetMemoryLimit(-1))
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
}

// gcPercent is the collector's GOGC now.
func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
