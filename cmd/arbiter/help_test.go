package main

import (
	"strings"
	"testing"
)

// TestUsageErrorsPointAtTheirHelp: an argument or flag error names the
// command once and points at its own help.
func TestUsageErrorsPointAtTheirHelp(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"status"}, "arbiter status: takes 1 argument, got 0 (usage: arbiter status <simulation-dir> [flags]; see arbiter status --help)\n"},
		{[]string{"config", "show", "x", "y"}, "arbiter config show: takes 0 arguments, got 2 (usage: arbiter config show [flags]; see arbiter config show --help)\n"},
		{[]string{"run", "sim", "--tikcs", "2"}, "arbiter run: unknown flag: --tikcs (usage: arbiter run <simulation-dir> [flags]; see arbiter run --help)\n"},
		{[]string{"story", "sim", "--tick", "x"}, "; see arbiter story --help)\n"},
		{[]string{"config", "shwo"}, "arbiter config: unknown command \"shwo\" for \"arbiter config\" (see arbiter config --help)\n"},
		{[]string{"frobnicate"}, "arbiter: unknown command \"frobnicate\" for \"arbiter\" (see arbiter --help)\n"},
	} {
		code, out, errOut := arbiter(t, tc.args...)
		if code != ExitUsage || out != "" || !strings.HasSuffix(errOut, tc.want) || strings.Contains(errOut, "arbiter: arbiter") || strings.Count(errOut, "\n") != 1 {
			t.Errorf("arbiter %v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}
