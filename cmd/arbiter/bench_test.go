package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/bench"
)

// TestBenchFlagsReachOptions: every flag lands in BenchOptions, --depth
// through the configuration, and the report's command line says what was set.
func TestBenchFlagsReachOptions(t *testing.T) {
	out := filepath.Join(t.TempDir(), "B.md")
	var got *BenchOptions
	err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newBenchCmd(io, g, func(_ context.Context, o *BenchOptions) error { got = o; return nil })
	}, "--characters", "50", "--locations", "5", "--ticks", "3", "--latency", "10ms", "--tail", "pareto",
		"--server-concurrency", "8", "--rpm", "600", "--concurrency", "4", "--depth", "1", "--sizes", "100,200:7",
		"--size-ticks", "1", "--sequential-ticks", "0", "--sequential-budget", "5s", "--world-timeout", "1m", "--seed", "9", "-o", out,
		"--endpoints", "2", "--kill-endpoint", "3")
	if err != nil || got == nil {
		t.Fatalf("bench: %v", err)
	}
	if got.Characters != 50 || got.Locations != 5 || got.Ticks != 3 || got.Latency != 10*time.Millisecond || got.Tail != "pareto" ||
		got.ServerConcurrency != 8 || got.RPM != 600 || got.Concurrency != 4 || got.SizeTicks != 1 || got.SeqTicks != 0 ||
		got.SeqBudget != 5*time.Second || got.WorldTimeout != time.Minute || got.Seed != 9 || got.Output != out ||
		got.Endpoints != 2 || got.KillEndpoint != 3 {
		t.Errorf("options %+v", got)
	}
	if want := []bench.Shape{{Characters: 100, Locations: 10}, {Characters: 200, Locations: 7}}; len(got.Sizes) != 2 || got.Sizes[0] != want[0] || got.Sizes[1] != want[1] {
		t.Errorf("sizes %v, want %v", got.Sizes, want)
	}
	if got.Config.LLM.Depth != 1 {
		t.Errorf("--depth 1 gave llm.depth %d", got.Config.LLM.Depth)
	}
	if exe, _ := os.Executable(); got.Launcher.Path != exe || strings.Join(got.Launcher.Args, " ") != "bench serve" {
		t.Errorf("launcher %+v, want this program's bench serve", got.Launcher)
	}
	for _, want := range []string{"bench --characters 50", "--sizes 100,200:7", "--tail pareto", "--output " + out} {
		if !strings.Contains(got.Command, want) {
			t.Errorf("command line %q lacks %q", got.Command, want)
		}
	}

	err = runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
		return newBenchCmd(io, g, func(_ context.Context, o *BenchOptions) error { got = o; return nil })
	})
	if err != nil || got.Characters != 10_000 || got.Locations != 1_000 || got.Ticks != 20 || got.Latency != 50*time.Millisecond ||
		got.ServerConcurrency != 64 || got.Tail != bench.TailFixed || got.Config.LLM.Depth != 3 || got.Output != "" {
		t.Errorf("defaults: %+v, %v; want issue 12's target settings", got, err)
	}
}

func TestBenchFlagErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--characters", "0"}, "--characters must be at least 1, got 0"},
		{[]string{"--locations", "-2"}, "--locations must be at least 1, got -2"},
		{[]string{"--characters", "2000000"}, "--characters/--locations: "},
		{[]string{"--ticks", "0"}, "--ticks must be at least 1"},
		{[]string{"--latency", "-1s"}, "--latency must not be negative"},
		{[]string{"--tail", "weibull"}, `--tail "weibull": must be one of fixed, pareto, lognormal`},
		{[]string{"--server-concurrency", "0"}, "--server-concurrency must be at least 1"},
		{[]string{"--rpm", "-1"}, "--rpm must not be negative"},
		{[]string{"--concurrency", "-1"}, "--concurrency must not be negative"},
		{[]string{"--sizes", "10k"}, `--sizes "10k": want characters or characters:locations`},
		{[]string{"--sizes", "100:x"}, `--sizes "100:x"`},
		{[]string{"--sizes", "100:0"}, `--sizes "100:0": a world needs at least 1 location`},
		{[]string{"--size-ticks", "0"}, "--size-ticks must be at least 1"},
		{[]string{"--sequential-ticks", "-1"}, "--sequential-ticks must not be negative"},
		{[]string{"--sequential-budget", "-1s"}, "--sequential-budget must not be negative"},
		{[]string{"--world-timeout", "-1s"}, "--world-timeout must not be negative"},
		{[]string{"--endpoints", "0"}, "--endpoints must be between 1 and --server-concurrency (64), got 0"},
		{[]string{"--endpoints", "3", "--server-concurrency", "2"}, "--endpoints must be between 1 and --server-concurrency (2), got 3"},
		{[]string{"--kill-endpoint", "2"}, "--kill-endpoint needs --endpoints 2 or more, got 1"},
		{[]string{"--kill-endpoint", "-1", "--endpoints", "2"}, "--kill-endpoint must not be negative"},
		{[]string{"-o", dir}, "is a folder"},
		{[]string{"-o", filepath.Join(dir, "nope", "B.md")}, "does not exist"},
		{[]string{"--cpuprofile", filepath.Join(dir, "nope", "cpu.prof")}, "--cpuprofile " + filepath.Join(dir, "nope", "cpu.prof") + ": folder"},
		{[]string{"--memprofile", dir}, "--memprofile " + dir + ": is a folder"},
		{[]string{"--depth", "-1"}, "config llm.depth: must be a whole number from 0 to 1000, got -1"},
		{[]string{"extra"}, "takes 0 arguments, got 1"},
	} {
		code, out, errOut := arbiter(t, append([]string{"bench"}, tc.args...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("bench %v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, errOut, tc.want)
		}
	}
	code, _, errOut := arbiter(t, "bench", "--ticks", "0", "--tail", "x")
	if code != ExitUsage || !strings.Contains(errOut, "--ticks") || !strings.Contains(errOut, "--tail") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("two bad flags: exit %d, %q; want both named on one line", code, errOut)
	}
}

// benchOptions are hand-built options for a small, quick bench whose
// stand-in server is this test binary run as arbiter (TestMain).
func benchOptions(t *testing.T, characters, locations int) (*BenchOptions, *IOStreams, func() (string, string)) {
	t.Helper()
	cleanEnv(t)
	cfg, err := loadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	io, out, errOut := TestStreams("")
	return &BenchOptions{
		IO: io, Globals: &globals{}, Config: cfg,
		Characters: characters, Locations: locations, Ticks: 2,
		Latency: 2 * time.Millisecond, Tail: bench.TailFixed, ServerConcurrency: 4,
		SizeTicks: 1, SeqTicks: 1, SeqBudget: time.Minute, Seed: 1,
		Launcher: bench.Launcher{Path: os.Args[0], Args: []string{"bench", "serve"}, Env: []string{"ARBITER_TEST_MAIN=1"}},
		Command:  "arbiter bench --characters 12",
	}, io, func() (string, string) { return out.String(), errOut.String() }
}

// TestBenchRuns runs a small bench for real through the arbiter binary's own
// hidden `bench serve` command: the report is printed and written to -o,
// and --json prints the same figures as JSON.
func TestBenchRuns(t *testing.T) {
	opts, _, output := benchOptions(t, 12, 3)
	opts.Sizes = []bench.Shape{{Characters: 6, Locations: 2}, {Characters: 12, Locations: 3}}
	opts.Output = filepath.Join(t.TempDir(), "BENCHMARKS.md")
	if err := runBench(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	out, errOut := output()
	for _, want := range []string{"# Benchmarks", "```sh\narbiter bench --characters 12\n```", "| main | 12 / 3 (1) | 2 | 30 |",
		"| sequential | 12 / 3 (1) | 1 | 15 |", "| size | 6 / 2 (1) | 1 | 8 |", "Speed-up: **", "b = **"} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
	file, err := os.ReadFile(opts.Output)
	if err != nil || string(file) != out {
		t.Errorf("-o %s holds %d bytes (%v), want the printed report", opts.Output, len(file), err)
	}
	if !strings.Contains(errOut, "wrote "+opts.Output) {
		t.Errorf("stderr %q does not say the file was written", errOut)
	}

	opts, _, output = benchOptions(t, 12, 3)
	opts.Globals.json, opts.SeqTicks = true, 0
	if err := runBench(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	out, _ = output()
	var rep bench.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if rep.Main == nil || rep.Main.Ticks != 2 || rep.Main.Calls != 30 || rep.Sequential != nil || len(rep.Targets) != 7 || rep.Settings.ClientConcurrency != 4 {
		t.Errorf("--json report %+v", rep)
	}
}

// TestBenchFailures: a main world that commits no tick fails the command
// (exit 1) after printing what was measured; a report that cannot be
// written fails it naming the file; `bench serve` run by hand says it is
// not meant to be.
func TestBenchFailures(t *testing.T) {
	opts, _, output := benchOptions(t, 1001, 1) // all in one location: 16 resolution calls, more than the timeout allows
	opts.SeqTicks, opts.WorldTimeout = 0, time.Millisecond
	err := runBench(context.Background(), opts)
	if err == nil || exitCode(err) != ExitError || !strings.Contains(err.Error(), "committed no tick") {
		t.Errorf("a world that commits no tick: %v", err)
	}
	if out, _ := output(); !strings.Contains(out, "| main | 1001 / 1 (1) | 0 |") {
		t.Errorf("the report of what was measured is not printed:\n%s", out)
	}

	opts, _, _ = benchOptions(t, 4, 2)
	opts.SeqTicks, opts.Ticks = 0, 1
	opts.Output = filepath.Join(t.TempDir(), "gone", "B.md")
	if err := runBench(context.Background(), opts); err == nil || !strings.Contains(err.Error(), opts.Output) {
		t.Errorf("-o into a missing folder: %v", err)
	}

	opts, _, _ = benchOptions(t, 4, 2)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := runBench(ctx, opts); exitCode(err) != ExitInterrupted {
		t.Errorf("interrupted before it starts: %v (exit %d)", err, exitCode(err))
	}

	code, _, errOut := arbiter(t, "bench", "serve")
	if code != ExitError || !strings.Contains(errOut, bench.ServerEnv) {
		t.Errorf("bench serve by hand: exit %d, %q", code, errOut)
	}
}
