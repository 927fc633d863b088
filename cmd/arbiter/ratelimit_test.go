package main

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestRunSaysRateLimits: 429s the server answers are waited out (no call
// fails for them) and run's closing lines say how many there were and how
// low the calls in flight went.
func TestRunSaysRateLimits(t *testing.T) {
	cleanEnv(t)
	var n atomic.Int32
	fakeModel(t, func(c *openaitest.Call) openaitest.Reply {
		if n.Add(1) <= 3 {
			return openaitest.Status(429, "requests", "rate_limit_exceeded", "Rate limit reached")
		}
		return openaitest.FromSchema(nil)(c)
	})
	t.Setenv("ARBITER_LLM_BACKOFF_BASE", "1ms")
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "1")
	if code != 0 {
		t.Fatalf("run exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "0 failed") || !strings.Contains(out, "rate-limited 3 calls (429), each waited out") {
		t.Errorf("stdout does not say the 429s were absorbed:\n%s", out)
	}
	code, out, _ = arbiter(t, "run", sim, "--ticks", "1")
	if code != 0 || strings.Contains(out, "rate-limited") {
		t.Errorf("a run with no 429 mentions them (exit %d):\n%s", code, out)
	}
}
