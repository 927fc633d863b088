package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-sim/arbiter/session"
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

// flagPlaceholder is what a help line may show between a flag and its
// usage: one word naming the value (pflag takes a `quoted` word of the
// usage for it, so a usage quoting a command garbles the line).
var flagPlaceholder = regexp.MustCompile(`^[A-Za-z0-9_|.,/=-]*$`)

// TestEveryHelpRendersItsFlags: every command's --help exits 0 and shows
// each of its flags on a line of its own, the flag, at most a one-word
// placeholder, then its usage.
func TestEveryHelpRendersItsFlags(t *testing.T) {
	cleanEnv(t)
	var walk func(c *cobra.Command)
	commands := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if !sub.Hidden && sub.Name() != "help" && sub.Name() != "completion" {
				walk(sub)
			}
		}
		commands++
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, out, errOut := arbiter(t, args...)
		if code != 0 || errOut != "" {
			t.Errorf("arbiter %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		for _, problem := range helpFlagProblems(c, out) {
			t.Errorf("arbiter %s: %s\n%s", strings.Join(args, " "), problem, out)
		}
	}
	io, _, _ := TestStreams("")
	walk(newRootCmd(io))
	if commands < 25 {
		t.Errorf("walked %d commands: the command tree was not walked", commands)
	}
}

// helpFlagProblems says what is wrong with how help, c's --help, shows
// its flags.
func helpFlagProblems(c *cobra.Command, help string) []string {
	var out []string
	seen := map[string]bool{}
	check := func(f *pflag.Flag) {
		if f.Hidden || seen[f.Name] {
			return
		}
		seen[f.Name] = true
		name, usage := pflag.UnquoteUsage(f)
		if !flagPlaceholder.MatchString(name) {
			out = append(out, fmt.Sprintf("--%s shows %q as its value's name", f.Name, name))
		}
		line := regexp.MustCompile(`(?m)^\s+(-\w, )?--` + regexp.QuoteMeta(f.Name) + `( \S+)?\s{2,}(\S.*)$`).FindStringSubmatch(help)
		switch {
		case line == nil:
			out = append(out, fmt.Sprintf("--%s has no line of its own", f.Name))
		case !strings.HasPrefix(line[3], strings.SplitN(usage, "\n", 2)[0]):
			out = append(out, fmt.Sprintf("--%s reads %q, not its usage %q", f.Name, line[3], usage))
		}
	}
	c.LocalFlags().VisitAll(check)
	c.InheritedFlags().VisitAll(check)
	return out
}

// TestKindsSayTheirPartOfTheHelp: what a shared command's --help says of a
// kind, the kind says (session.Helper), under its name: every registered
// kind's lines for the command are in it, a kind outside the module (the
// toy) included, and the phases of prompts render are the kinds' own.
func TestKindsSayTheirPartOfTheHelp(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		command string
		example string // a line of one kind's, as it writes it
	}{
		{[]string{"--help"}, "arbiter", "narrative:\n  A model plays every character"},
		{[]string{"play", "--help"}, "play", "toy:\n  Add 1 or 2 to the count.\n"},
		{[]string{"report", "--help"}, "report", "conquest:\n  How the game ended, the star map"},
		{[]string{"story", "--help"}, "story", "duel:\n  Each turn's log"},
		{[]string{"eval", "--help"}, "eval", "Assertions moves_to and mentions_present"},
		{[]string{"chat", "--help"}, "chat", "chronicle:\n  You and the model build its history"},
		{[]string{"prompts", "render", "--help"}, "prompts render", "  duel: build (--entity: a player), charges (--entity: a player)\n  toy: count (no --entity)\n"},
	} {
		code, out, _ := arbiter(t, tc.args...)
		if code != 0 || !strings.Contains(out, session.Help(tc.command)) || !strings.Contains(out, tc.example) {
			t.Errorf("%s (exit %d) lacks the kinds' lines %q or %q:\n%s", strings.Join(tc.args, " "), code, session.Help(tc.command), tc.example, out)
		}
	}
}
