package bench

import (
	"math"
	"runtime/debug"
	"strings"
	"testing"
)

// TestCollector: the report says how the collector was paced, the user's
// settings first.
func TestCollector(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	before := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(before)
	if got := collector(); !strings.HasPrefix(got, "Go's defaults") {
		t.Errorf("no limit, nothing set: %q", got)
	}
	debug.SetMemoryLimit(1 << 30)
	if got := collector(); !strings.Contains(got, "× the largest live heap") {
		t.Errorf("a limit set, not by the user: %q", got)
	}
	t.Setenv("GOGC", "50")
	t.Setenv("GOMEMLIMIT", "1GiB")
	if got := collector(); got != "GOGC=50 GOMEMLIMIT=1GiB" {
		t.Errorf("the user's settings: %q", got)
	}
}
