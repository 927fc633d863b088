package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/arbiter-sim/arbiter/bench"
	"github.com/arbiter-sim/arbiter/session"
)

// benchFlags maps the bench flags that are configuration keys.
var benchFlags = map[string]string{"depth": "llm.depth"}

// BenchOptions are the inputs of `arbiter bench`, flags already parsed.
type BenchOptions struct {
	IO      *IOStreams
	Globals *globals
	Config  *Config

	Characters, Locations, Ticks int
	Connected                    bool // one region: every character can reach every location
	Latency                      time.Duration
	Tail                         string
	ServerConcurrency, RPM       int
	Concurrency                  int // the client's; 0: ServerConcurrency
	Sizes                        []bench.Shape
	SizeTicks, SeqTicks          int
	Lockstep                     bool // --lockstep: the main world in lockstep too
	Endpoints, KillEndpoint      int  // stand-in servers sharing C, and the tick after which one dies
	SeqBudget, WorldTimeout      time.Duration
	Seed                         uint64
	Output                       string // BENCHMARKS.md to write; "": print only
	CPUProfile, HeapProfile      string // pprof files of the main world's ticks
	// Launcher starts the stand-in server's child process: this binary's
	// hidden `bench serve` command.
	Launcher bench.Launcher
	// Command is the command line, as the report states it.
	Command string
}

func newBenchCmd(io *IOStreams, g *globals, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	opts := &BenchOptions{IO: io, Globals: g}
	var sizes []string
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure what a tick of characters in locations costs at scale, against a stand-in model server",
		Long: `bench generates worlds of characters and locations of the given size, runs them as ` + "`arbiter run`" + ` would
against a stand-in OpenAI-compatible server on 127.0.0.1 that it starts in a child
process (answers valid for every request, with the latency, concurrency cap and rpm
limit given), and reports T against the ideal T* of two waves of calls, engine CPU
and allocations per call, peak RSS, commit time, state.db bytes per tick, prompt
tokens per call at tick 1 and tick 20, 429s, the speed-up over a sequential loop
(client concurrency 1, same invocation) and the cost exponent over --sizes, with
the scale targets (bench/targets.go) marked pass or FAIL. It prints the report as Markdown (--json:
JSON) and writes it to -o. Worlds are written in a temporary folder and removed.`,
		Example: `  arbiter bench --characters 1000 --locations 100 --ticks 5
  arbiter bench --sizes 100,1000,10000,100000 --size-ticks 2 -o BENCHMARKS.md`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := opts.check(sizes); err != nil {
				return err
			}
			cfg, err := loadConfig(g.configFile, cmd.Flags(), benchFlags)
			if err != nil {
				return err
			}
			opts.Config = cfg
			opts.Command = commandLine(cmd)
			if opts.Launcher.Path == "" {
				exe, err := os.Executable()
				if err != nil {
					return fmt.Errorf("bench: find this program to start the stand-in server with: %w", err)
				}
				opts.Launcher = bench.Launcher{Path: exe, Args: []string{"bench", "serve"}}
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runBench(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.IntVar(&opts.Characters, "characters", 10_000, "characters of the main world")
	f.IntVar(&opts.Locations, "locations", 1_000, "locations of the main world")
	f.BoolVar(&opts.Connected, "connected", false, "generate connected worlds: every character can walk into every location (default: regions of 500 characters that do not connect)")
	f.IntVarP(&opts.Ticks, "ticks", "n", 20, "ticks of the main world (the prompt figure needs 20)")
	f.DurationVar(&opts.Latency, "latency", 50*time.Millisecond, "the stand-in server's latency per call (L; the mean with a tail)")
	f.StringVar(&opts.Tail, "tail", bench.TailFixed, "latency distribution: "+strings.Join(bench.Tails, ", "))
	f.IntVar(&opts.ServerConcurrency, "server-concurrency", 64, "calls the server works on at once (C); more queue")
	f.IntVar(&opts.RPM, "rpm", 0, "requests per minute the server accepts, 429 with Retry-After above (0: no limit)")
	f.IntVar(&opts.Concurrency, "concurrency", 0, "the client's calls in flight, llm.concurrency (0: --server-concurrency)")
	f.Int("depth", 0, "past exchanges per entity sent back (llm.depth)")
	f.StringSliceVar(&sizes, "sizes", nil, "further worlds for the cost exponent: characters or characters:locations, comma-separated (locations default to the main world's proportion)")
	f.IntVar(&opts.SizeTicks, "size-ticks", 2, "ticks of each --sizes world")
	f.BoolVar(&opts.Lockstep, "lockstep", true, "run the main world again in lockstep (no out-of-order ticks) and report both side by side")
	f.IntVar(&opts.SeqTicks, "sequential-ticks", 1, "ticks of the sequential loop (client concurrency 1); 0 skips it")
	f.DurationVar(&opts.SeqBudget, "sequential-budget", time.Minute, "longest sequential tick: past it the loop runs a smaller world of the same proportions")
	f.IntVar(&opts.Endpoints, "endpoints", 1, "stand-in servers sharing --server-concurrency (and the client's), given to the client as llm.endpoints")
	f.IntVar(&opts.KillEndpoint, "kill-endpoint", 0, "kill the last stand-in endpoint as this tick of each world commits (needs --endpoints 2 or more; 0: none)")
	f.DurationVar(&opts.WorldTimeout, "world-timeout", 0, "stop a world still running after this long and report what it measured (0: none)")
	f.Uint64Var(&opts.Seed, "seed", 1, "seed of the generated worlds and the server's draws")
	f.StringVarP(&opts.Output, "output", "o", "", "also write the Markdown report to this file (e.g. BENCHMARKS.md)")
	f.StringVar(&opts.CPUProfile, "cpuprofile", "", "write a CPU profile of the main world's ticks to this file (go tool pprof)")
	f.StringVar(&opts.HeapProfile, "memprofile", "", "write a heap profile of the main world's ticks, taken at their largest live heap, to this file (go tool pprof)")

	serve := &cobra.Command{
		Use:    "serve",
		Short:  "Run the stand-in model server (started by arbiter bench itself)",
		Hidden: true,
		Args:   exactArgs(0),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// Ctrl-C at the terminal reaches the whole process group: the
			// bench that started this server ends it (closing its stdin)
			// once it has read what the server counted.
			signal.Ignore(os.Interrupt)
			return bench.ServeChild(cmd.Context(), io.In, io.Out)
		},
	}
	cmd.AddCommand(serve)
	return cmd
}

// check validates the flags, naming each bad one, before anything runs.
func (o *BenchOptions) check(sizes []string) error {
	var problems []string
	bad := func(ok bool, format string, args ...any) {
		if !ok {
			problems = append(problems, fmt.Sprintf(format, args...))
		}
	}
	bad(o.Characters >= 1, "--characters must be at least 1, got %d", o.Characters)
	bad(o.Locations >= 1, "--locations must be at least 1, got %d", o.Locations)
	bad(o.Ticks >= 1, "--ticks must be at least 1, got %d", o.Ticks)
	bad(o.Latency >= 0, "--latency must not be negative, got %s", o.Latency)
	bad(slices.Contains(bench.Tails, o.Tail), "--tail %q: must be one of %s", o.Tail, strings.Join(bench.Tails, ", "))
	bad(o.ServerConcurrency >= 1, "--server-concurrency must be at least 1, got %d", o.ServerConcurrency)
	bad(o.RPM >= 0, "--rpm must not be negative, got %d", o.RPM)
	bad(o.Concurrency >= 0, "--concurrency must not be negative, got %d", o.Concurrency)
	bad(o.SizeTicks >= 1, "--size-ticks must be at least 1, got %d", o.SizeTicks)
	bad(o.SeqTicks >= 0, "--sequential-ticks must not be negative, got %d", o.SeqTicks)
	bad(o.SeqBudget >= 0, "--sequential-budget must not be negative, got %s", o.SeqBudget)
	bad(o.WorldTimeout >= 0, "--world-timeout must not be negative, got %s", o.WorldTimeout)
	bad(o.Endpoints >= 1 && o.Endpoints <= max(1, o.ServerConcurrency), "--endpoints must be between 1 and --server-concurrency (%d), got %d", o.ServerConcurrency, o.Endpoints)
	bad(o.KillEndpoint >= 0, "--kill-endpoint must not be negative, got %d", o.KillEndpoint)
	bad(o.KillEndpoint == 0 || o.Endpoints >= 2, "--kill-endpoint needs --endpoints 2 or more, got %d", o.Endpoints)
	main := bench.Shape{Characters: o.Characters, Locations: o.Locations, Connected: o.Connected}
	if err := main.Check(); err != nil && o.Characters >= 1 && o.Locations >= 1 {
		problems = append(problems, "--characters/--locations: "+err.Error())
	}
	o.Sizes = nil
	for _, s := range sizes {
		shape, err := parseSize(s, main)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		o.Sizes = append(o.Sizes, shape)
	}
	for _, out := range []struct{ flag, path, example string }{
		{"-o", o.Output, "BENCHMARKS.md"}, {"--cpuprofile", o.CPUProfile, "cpu.prof"}, {"--memprofile", o.HeapProfile, "heap.prof"},
	} {
		if out.path == "" {
			continue
		}
		if err := checkOutput(out.flag, out.path, out.example); err != nil {
			problems = append(problems, err.Error())
		}
	}
	if len(problems) > 0 {
		return usageErrorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// parseSize reads one --sizes entry: "characters" (locations in main's
// proportion) or "characters:locations".
func parseSize(s string, main bench.Shape) (bench.Shape, error) {
	c, l, pair := strings.Cut(strings.TrimSpace(s), ":")
	chars, err := strconv.Atoi(c)
	locs := 0
	if err == nil && pair {
		locs, err = strconv.Atoi(l)
	}
	if err != nil {
		return bench.Shape{}, fmt.Errorf("--sizes %q: want characters or characters:locations, e.g. 1000 or 1000:100", s)
	}
	if !pair && main.Characters > 0 {
		locs = max(1, int(int64(chars)*int64(main.Locations)/int64(main.Characters)))
	}
	shape := bench.Shape{Characters: chars, Locations: locs, Connected: main.Connected}
	if err := shape.Check(); err != nil {
		return bench.Shape{}, fmt.Errorf("--sizes %q: %v", s, err)
	}
	return shape, nil
}

// commandLine is `arbiter bench` with the flags that were set, to run it again.
func commandLine(cmd *cobra.Command) string {
	parts := []string{cmd.CommandPath()}
	cmd.Flags().Visit(func(f *pflag.Flag) {
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		if f.Value.Type() == "bool" {
			parts = append(parts, "--"+f.Name+"="+v) // "--connected true" would read true as an argument
			return
		}
		parts = append(parts, "--"+f.Name+" "+v)
	})
	return strings.Join(parts, " ")
}

// runBench measures, prints the report (Markdown, or JSON with --json) and
// writes it to -o. It fails when the main world committed no tick; a
// target missed is a figure, not a failure.
func runBench(ctx context.Context, opts *BenchOptions) (err error) {
	io, g := opts.IO, opts.Globals
	cfg := opts.Config
	// Traced as `arbiter run` is (otel.*, OTEL_*), so that what tracing
	// costs a run is measured.
	ctx, untrace, err := traced(ctx, io, cfg, "bench", "", "")
	if err != nil {
		return err
	}
	defer func() { untrace(err) }()
	// Each world is opened with the settings `arbiter run` opens a
	// simulation with; bench gives them the stand-in server as the client.
	set, err := cfg.settings(false, "run")
	if err != nil {
		return err
	}
	set.Logger = g.logger(io)
	client := cfg.llmConfig("")
	client.Concurrency = opts.Concurrency
	if client.Concurrency == 0 {
		client.Concurrency = opts.ServerConcurrency
	}
	o := bench.Options{
		Shape:        bench.Shape{Characters: opts.Characters, Locations: opts.Locations, Connected: opts.Connected},
		Ticks:        opts.Ticks,
		Server:       bench.ServerConfig{Latency: opts.Latency, Tail: opts.Tail, Concurrency: opts.ServerConcurrency, RPM: opts.RPM, Seed: opts.Seed},
		Session:      set,
		Client:       client,
		Sizes:        opts.Sizes,
		SizeTicks:    opts.SizeTicks,
		SeqTicks:     opts.SeqTicks,
		Lockstep:     opts.Lockstep,
		SeqBudget:    opts.SeqBudget,
		WorldTimeout: opts.WorldTimeout,
		Endpoints:    opts.Endpoints,
		KillEndpoint: opts.KillEndpoint,
		Seed:         opts.Seed,
		Launcher:     opts.Launcher,
		CPUProfile:   opts.CPUProfile,
		HeapProfile:  opts.HeapProfile,
	}
	if io.ErrTTY || g.verbose > 0 {
		o.Progress = func(s string) { fmt.Fprintln(io.ErrOut, "bench: "+s) }
	}
	rep, err := bench.Run(ctx, o)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("bench: %w before a world was measured", session.ErrInterrupted)
		}
		return err
	}
	rep.Command = opts.Command
	var md bytes.Buffer
	if err := bench.WriteMarkdown(&md, rep); err != nil {
		return err
	}
	if ex := g.exporter(); ex != nil {
		err = ex.Write(io, rep)
	} else {
		_, err = io.Out.Write(md.Bytes())
	}
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		// A report cut short does not replace a whole one in -o.
		unwritten := ""
		if opts.Output != "" {
			unwritten = fmt.Sprintf(" (%s left as it was)", opts.Output)
		}
		return fmt.Errorf("bench: %w; the report above is what was measured before%s", session.ErrInterrupted, unwritten)
	}
	if opts.Output != "" {
		if err := bench.WriteFile(opts.Output, rep); err != nil {
			return err
		}
		fmt.Fprintf(io.ErrOut, "wrote %s\n", opts.Output)
	}
	if m := rep.Main; m.Ticks == 0 {
		return fmt.Errorf("bench: the main world (%s) committed no tick: %s", m.Shape, m.Error)
	}
	return nil
}
