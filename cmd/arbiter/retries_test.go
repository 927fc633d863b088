package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/internal/texttest"
)

// failing answers the server's first request with a 500, and every other
// with then; with then nil, every request fails.
func failing(then openaitest.Handler) openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		if c.N == 1 || then == nil {
			return openaitest.Status(500, "server_error", "", "the GPU caught fire")
		}
		return then(c)
	}
}

// retryEmitted checks stderr for seed 002's lines of a call of tool that
// failed with a 500 and was retried: TOOL_FAILURE, then RECOVERY_ATTEMPT
// strategy=retry with whether the retry got past it, and, when it did
// not, the TOOL_FAILURE of the retry, and no other failure of that call.
func retryEmitted(t *testing.T, errOut, tool string, success bool) {
	t.Helper()
	lines := []string{"EMIT: TOOL_FAILURE tool=" + tool, "the GPU caught fire", "kind=server\n",
		"EMIT: RECOVERY_ATTEMPT strategy=retry success=" + strconv.FormatBool(success) + "\n"}
	failures := 1
	if !success {
		lines = append(lines, "EMIT: TOOL_FAILURE tool="+tool, "(2 attempts)", "kind=server\n")
		failures = 2
	}
	texttest.InOrder(t, errOut, lines...)
	if n := strings.Count(errOut, "EMIT: TOOL_FAILURE tool="+tool+" "); n != failures {
		t.Errorf("%d TOOL_FAILURE lines of %s, want %d:\n%s", n, tool, failures, errOut)
	}
}

// quickRetries makes the client's retry wait a few milliseconds at most.
func quickRetries(t *testing.T) {
	t.Helper()
	t.Setenv("ARBITER_LLM_MAX_ATTEMPTS", "2")
	t.Setenv("ARBITER_LLM_BACKOFF_BASE", "1ms")
	t.Setenv("ARBITER_LLM_BACKOFF_MAX", "20ms")
}

// seatModel makes p1 of the game in dir a model seat.
func seatModel(t *testing.T, dir string) {
	t.Helper()
	yaml := filepath.Join(dir, "simulation.yaml")
	b, err := os.ReadFile(yaml)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "p1: bot") {
		t.Fatalf("%s has no p1: bot seat to make a model", yaml)
	}
	if err := os.WriteFile(yaml, []byte(strings.Replace(string(b), "p1: bot", "p1: model", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
}

// issue 21 item 13: seed 002's "emit before recovery" holds for a game's
// model seat as for the narrative (TestRetriesAndRepairsAreEmitted): under
// -v, a model call that failed once and was retried prints TOOL_FAILURE,
// then RECOVERY_ATTEMPT strategy=retry, on stderr. Conquest's seat calls
// tools (llm.CompleteTools), the duel's asks for JSON (llm.Complete).
func TestModelSeatRetriesAreEmitted(t *testing.T) {
	submit := func(*openaitest.Call) openaitest.Reply {
		return openaitest.ToolCalls(openaitest.Tool("submit", "submit_orders", map[string]any{"orders": []any{}}))
	}
	for _, tc := range []struct {
		sim, tool string
		then      openaitest.Handler
	}{
		{"conquest-demo", "conquest:p1", submit},
		{"duel-demo", "duel:p1:build", openaitest.FromSchema(nil)},
	} {
		for _, retried := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/retry_succeeds=%v", tc.sim, retried), func(t *testing.T) {
				cleanEnv(t)
				quickRetries(t)
				then := tc.then
				if !retried {
					then = nil
				}
				fakeModel(t, failing(then))
				dir := gameCopy(t, tc.sim)
				seatModel(t, dir)
				code, out, errOut := arbiter(t, "run", dir, "--ticks", "1", "-v")
				if retried && (code != 0 || !strings.Contains(out, "tick 1 committed")) {
					t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
				}
				retryEmitted(t, errOut, tc.tool, retried)
			})
		}
	}
}

// issue 21 item 13: the chronicle's chat call emits its retried failure
// too: `arbiter chat -v` prints TOOL_FAILURE, then RECOVERY_ATTEMPT
// strategy=retry, on stderr; the retried answer is shown, or the failure
// said when the retry failed too.
func TestChatRetriesAreEmitted(t *testing.T) {
	for _, retried := range []bool{true, false} {
		t.Run(fmt.Sprintf("retry_succeeds=%v", retried), func(t *testing.T) {
			cleanEnv(t)
			quickRetries(t)
			then, want := openaitest.Always(openaitest.Content("Hello, co-author.")), "Hello, co-author."
			if !retried {
				then, want = nil, "Model call failed"
			}
			fakeModel(t, failing(then))
			code, out, errOut := arbiterIn(t, "Hi\n/quit\n", "chat", chronicleCopy(t), "-v")
			if code != 0 || !strings.Contains(out, want) {
				t.Fatalf("chat: exit %d, want %q shown\n%s%s", code, want, out, errOut)
			}
			retryEmitted(t, errOut, "chronicle:chronicle-demo", retried)
		})
	}
}

// Seed 002's "Emit before recovery", live: under -v a model seat's failed
// call prints TOOL_FAILURE as it fails, before the client logs (with its
// timestamp) that it retries, and RECOVERY_ATTEMPT after the retry.
func TestEmitBeforeRecoveryOnVerbose(t *testing.T) {
	cleanEnv(t)
	quickRetries(t)
	fakeModel(t, failing(func(*openaitest.Call) openaitest.Reply {
		return openaitest.ToolCalls(openaitest.Tool("submit", "submit_orders", map[string]any{"orders": []any{}}))
	}))
	dir := gameCopy(t, "conquest-demo")
	seatModel(t, dir)
	code, out, errOut := arbiter(t, "run", dir, "--ticks", "1", "-v")
	if code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	texttest.InOrder(t, errOut, "EMIT: STATE_ENTRY state=ORDERS\n", "EMIT: TOOL_FAILURE tool=conquest:p1 ",
		"| WARNING | ⚖️ ", "model call failed, retrying", "EMIT: RECOVERY_ATTEMPT strategy=retry success=true\n", "EMIT: STATE_ENTRY state=APPLY\n")
}
