package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFaultUnknownConfigKeys: a key of config.yaml arbiter does not read
// (llm.endpointz) is named with its file and line by validate (a problem,
// exit 2), run and config show (a warning, one line each); documented keys,
// prices entries and the deprecated llm.rate_limit are not unknown.
func TestFaultUnknownConfigKeys(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("llm:\n  endpointz: 3\n  context_tokens: 0\n  rate_limit: 5\nrun:\n  max_cost: 0\nprices:\n  - {model: m, prompt: 1, completion: 2, cached: 0}\nextra: true\n"), 0o644)
	want := []string{cfg + ":2: llm.endpointz: unknown key, ignored (llm holds ", cfg + ":8: prices[0].cached: unknown key", cfg + ":9: extra: unknown key"}
	code, out, errOut := arbiter(t, "validate", sim, "--config", cfg)
	if code != ExitUsage || !strings.Contains(errOut, "3 problem(s)") {
		t.Errorf("validate: exit %d, want %d and 3 problems\n%s%s", code, ExitUsage, out, errOut)
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("validate does not say %q:\n%s", w, out)
		}
	}
	if !strings.Contains(out, "warning: "+cfg+": llm.rate_limit is deprecated") || strings.Contains(out, "context_tokens: unknown") || strings.Contains(out, "rate_limit: unknown") {
		t.Errorf("validate: the deprecated key is a warning, the documented ones nothing:\n%s", out)
	}
	for _, args := range [][]string{{"run", sim}, {"config", "show"}} {
		code, out, errOut := arbiter(t, append(args, "--config", cfg)...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, errOut)
		}
		for _, w := range want {
			if strings.Count(errOut, "warning: "+w) != 1 {
				t.Errorf("%s: stderr does not say %q once:\n%s", args[0], "warning: "+w, errOut)
			}
		}
	}
}

// TestFaultMessagesOneLinePerProblem: a bad flag value is one line
// prefixed arbiter:, not two contradicting each other; NaN is not called
// negative; several problems are each a line of their own, each prefixed.
func TestFaultMessagesOneLinePerProblem(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--timeout", "-1s"}, []string{"arbiter: config llm.timeout: must be positive, got -1s"}},
		{[]string{"--concurrency", "-3"}, []string{"arbiter: config llm.concurrency: must be a whole number from 1 to 10000, got -3"}},
		{[]string{"--max-cost", "NaN"}, []string{"arbiter: config run.max_cost: must be a number of US dollars (0: no limit), got NaN"}},
		{[]string{"--timeout", "-1s", "--concurrency", "-3"}, []string{"arbiter: config llm.concurrency: must be a whole number from 1 to 10000, got -3", "arbiter: config llm.timeout: must be positive, got -1s"}},
	} {
		code, out, errOut := arbiter(t, append([]string{"run", sim}, tc.args...)...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		if code != ExitUsage || out != "" || strings.Join(lines, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("run %v: exit %d, stderr:\n%s\nwant exit %d and exactly:\n%s", tc.args, code, errOut, ExitUsage, strings.Join(tc.want, "\n"))
		}
	}
}

// TestFaultCheckOrdersStdinBound: check-orders does not cut a list past its
// 64 MiB bound without a word: it refuses it, saying so.
func TestFaultCheckOrdersStdinBound(t *testing.T) {
	cleanEnv(t)
	game := filepath.Join(t.TempDir(), "game.json")
	code, out, errOut := arbiter(t, "export", gameCopy(t, "conquest-demo"))
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	os.WriteFile(game, []byte(out), 0o644)
	big := `[{"from":"A","to":"B","ships":1}` + strings.Repeat(" ", 64<<20) + "]"
	code, out, errOut = arbiterIn(t, big, "conquest", "check-orders", "--game", game, "--player", "p1")
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "stdin: more than 64 MiB of orders") {
		t.Errorf("a 64 MiB list: exit %d, want %d saying so\n%s%s", code, ExitUsage, out, errOut)
	}
}
