package main

import (
	"context"
	"github.com/arbiter-sim/arbiter/games/chronicle"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// runCmd executes cmd (with the root's flag error handling) on args.
func runCmd(t *testing.T, build func(*IOStreams, *globals) *cobra.Command, args ...string) error {
	t.Helper()
	cleanEnv(t)
	io, _, _ := TestStreams("")
	g := &globals{}
	cmd := build(io, g)
	cmd.SetArgs(args)
	cmd.SetOut(io.Out)
	cmd.SetErr(io.ErrOut)
	return cmd.ExecuteContext(context.Background())
}

// TestFlagsReachOptions: each command's flags land in its options, without
// a model server or a database: the run function only records them.
func TestFlagsReachOptions(t *testing.T) {
	var run *RunOptions
	err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newRunCmd(io, g, func(_ context.Context, o *RunOptions) error { run = o; return nil })
	}, "sims/x", "-n", "4", "--model", "m1", "--timeout", "7s", "--depth", "0", "--token-budget", "99", "--phase-timeout", "2s")
	if err != nil || run == nil {
		t.Fatalf("run: %v", err)
	}
	if run.Dir != "sims/x" || run.Ticks != 4 || run.Config.LLM.Model != "m1" || run.Config.LLM.Timeout != 7*time.Second ||
		run.Config.LLM.Depth != 0 || run.Config.Run.TokenBudget != 99 || run.Config.Run.PhaseTimeout != 2*time.Second {
		t.Errorf("run options = %+v, config %+v", run, run.Config)
	}
	if err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newRunCmd(io, g, func(context.Context, *RunOptions) error { t.Error("ran with --ticks 0"); return nil })
	}, "sims/x", "--ticks", "0"); err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), "--ticks must be at least 1") {
		t.Errorf("--ticks 0: %v", err)
	}

	var exp *ExportOptions
	for _, tc := range []struct {
		args   []string
		tick   int
		latest bool
	}{{[]string{"d"}, 0, true}, {[]string{"d", "--tick", "0"}, 0, false}, {[]string{"d", "--tick", "3"}, 3, false}} {
		err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
			return newExportCmd(io, g, func(_ context.Context, o *ExportOptions) error { exp = o; return nil })
		}, tc.args...)
		if err != nil || exp.Tick != tc.tick || exp.Latest != tc.latest || exp.Dir != "d" {
			t.Errorf("export %v: %+v, %v", tc.args, exp, err)
		}
	}
	if err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newExportCmd(io, g, func(context.Context, *ExportOptions) error { return nil })
	}, "d", "--format", "yaml"); exitCode(err) != ExitUsage {
		t.Errorf("--format yaml: %v", err)
	}

	var rend *RenderOptions
	if err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newPromptsCmd(io, g, func(_ context.Context, o *RenderOptions) error { rend = o; return nil })
	}, "render", "d", "--phase", "intention", "--entity", "ada", "--part", "user", "--depth", "1"); err != nil ||
		rend.Phase != "intention" || rend.Entity != "ada" || rend.Part != "user" || !rend.Latest || rend.Config.LLM.Depth != 1 {
		t.Errorf("prompts render: %+v, %v", rend, err)
	}
	if err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newPromptsCmd(io, g, func(context.Context, *RenderOptions) error { return nil })
	}, "render", "d", "--phase", "chat", "--part", "half"); exitCode(err) != ExitUsage {
		t.Errorf("--part half: %v", err)
	}

	var chatOpts *ChatOptions
	if err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newChatCmd(io, g, func(_ context.Context, o *ChatOptions) error { chatOpts = o; return nil })
	}, "c", "--window", "0", "--temperature", "0.2", "--max-tokens", "77"); err != nil ||
		chatOpts.Config.Kinds["chronicle"].(*chronicle.Config).Window != 0 || chatOpts.Config.Kinds["chronicle"].(*chronicle.Config).Temperature != 0.2 ||
		chatOpts.Config.Kinds["chronicle"].(*chronicle.Config).MaxTokens != 77 {
		t.Errorf("chat: %+v, %v", chatOpts, err)
	}
}
