package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
)

// Options are the settings of one benchmark run.
type Options struct {
	Shape Shape // the main world
	Ticks int   // ticks of the main world

	Server ServerConfig
	// Session is what each world is opened with: the settings `arbiter run`
	// opens a simulation with (config.yaml and the flags, through the CLI's
	// one path). Per world, bench gives it the model client (Client, at the
	// stand-in server) and its own Lockstep and OnTick.
	Session session.Settings
	// Client is the model client's configuration (from config.yaml and the
	// flags); its BaseURL and APIKey are the stand-in server's, and its
	// Concurrency the client concurrency of the main world.
	Client llm.Config

	// Sizes are further worlds, run SizeTicks ticks each, from which the
	// cost exponent is fitted.
	Sizes     []Shape
	SizeTicks int
	// SeqTicks ticks of the main world run with client concurrency 1 (the
	// sequential loop); when (characters + locations) x latency would pass
	// SeqBudget per tick, a smaller world of the same proportions is run
	// instead, and the speed-up compares time per call.
	SeqTicks  int
	SeqBudget time.Duration
	// Lockstep runs the main world a second time with out-of-order ticks
	// off, reported side by side with it (Report.Lockstep).
	Lockstep bool
	// Endpoints splits the stand-in's capacity (Server.Concurrency, and the
	// client's concurrency) over this many stand-in servers, each a child
	// process of its own, which the client is given as llm.endpoints (0 or
	// 1: one server at one base URL).
	Endpoints int
	// KillEndpoint, when set, kills the last stand-in server as tick
	// KillEndpoint of a world commits: the other endpoints then answer its
	// calls, and the fallbacks its loss cost are the figure.
	KillEndpoint int
	// WorldTimeout stops a world that has not finished its ticks by then
	// (0: none); what it did measure is reported with the reason.
	WorldTimeout time.Duration

	Seed     uint64
	Launcher Launcher
	// CPUProfile and HeapProfile, when set, are files that receive a pprof
	// CPU profile of the main world's ticks and a heap profile taken when
	// their live heap was largest (go tool pprof reads both).
	CPUProfile, HeapProfile string
	TempDir                 string       // where worlds are generated ("": the system's)
	Progress                func(string) // told of each step; nil: silent

	// timer, when set, is stopped while a world is generated and opened,
	// and runs during its ticks (a testing.B, so ns/op is ticks alone).
	timer interface {
		StartTimer()
		StopTimer()
	}
}

// Check reports every option out of range, naming it.
func (o *Options) Check() error {
	var errs []error
	add := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	if err := o.Shape.Check(); err != nil {
		errs = append(errs, err)
	}
	add(o.Ticks >= 1, "ticks must be at least 1, got %d", o.Ticks)
	if err := o.Server.Check(); err != nil {
		errs = append(errs, err)
	}
	add(o.Client.Concurrency >= 1, "client concurrency must be at least 1, got %d", o.Client.Concurrency)
	add(o.Client.Depth >= 0, "depth must not be negative, got %d", o.Client.Depth)
	for _, s := range o.Sizes {
		if err := s.Check(); err != nil {
			errs = append(errs, fmt.Errorf("sizes: %w", err))
		}
	}
	add(len(o.Sizes) == 0 || o.SizeTicks >= 1, "size ticks must be at least 1, got %d", o.SizeTicks)
	add(o.SeqTicks >= 0, "sequential ticks must not be negative, got %d", o.SeqTicks)
	add(o.SeqBudget >= 0, "sequential budget must not be negative, got %s", o.SeqBudget)
	add(o.Endpoints >= 0, "endpoints must not be negative, got %d", o.Endpoints)
	add(o.Endpoints <= max(1, o.Server.Concurrency), "endpoints (%d) must not outnumber the server concurrency (%d): each needs a slot", o.Endpoints, o.Server.Concurrency)
	add(o.KillEndpoint >= 0, "kill-endpoint must not be negative, got %d", o.KillEndpoint)
	add(o.KillEndpoint == 0 || o.Endpoints >= 2, "kill-endpoint needs two endpoints or more (--endpoints), got %d", max(1, o.Endpoints))
	add(o.WorldTimeout >= 0, "world timeout must not be negative, got %s", o.WorldTimeout)
	return errors.Join(errs...)
}

// Run measures the main world, the sequential loop and the sizes, in that
// order, and sums them up against the scale targets. A world that fails or
// times out is reported with its error; Run itself fails only when nothing
// could be measured (bad options, no stand-in server). When ctx ends (Ctrl-C,
// SIGTERM) the world in progress stops, and the report holds what was
// measured up to then: the worlds after it are not run.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.Check(); err != nil {
		return nil, err
	}
	if _, _, err := usage(); err != nil {
		return nil, err
	}
	rep := &Report{Date: time.Now().UTC(), Machine: machine(), Settings: settingsOf(o)}
	main, err := o.world(ctx, "main", o.Shape, o.Ticks, o.Client.Concurrency)
	if err != nil {
		return nil, err
	}
	rep.Main = main
	// next runs a world after the main one; nil when ctx ended before it or
	// while it was generated or its server started.
	next := func(role string, s Shape, ticks, concurrency int) (*World, error) {
		if ctx.Err() != nil {
			return nil, nil
		}
		w, err := o.world(ctx, role, s, ticks, concurrency)
		if err != nil && ctx.Err() != nil {
			return nil, nil
		}
		return w, err
	}
	if o.Lockstep {
		if rep.Lockstep, err = next("main, lockstep", o.Shape, o.Ticks, o.Client.Concurrency); err != nil {
			return nil, err
		}
	}
	if o.SeqTicks > 0 {
		seq, err := next("sequential", o.seqShape(), o.SeqTicks, 1)
		if err != nil {
			return nil, err
		}
		if seq != nil {
			rep.Sequential = &Sequential{World: seq}
			if main.Calls > 0 && seq.Calls > 0 {
				rep.Sequential.PerCall = seq.Wall / time.Duration(seq.Calls)
				rep.Sequential.SpeedUp = float64(seq.Wall) / float64(seq.Calls) / (float64(main.Wall) / float64(main.Calls))
			}
		}
	}
	for _, s := range o.Sizes {
		w, err := next("size", s, o.SizeTicks, o.Client.Concurrency)
		if err != nil {
			return nil, err
		}
		if w == nil {
			break
		}
		rep.Sizes = append(rep.Sizes, w)
	}
	rep.Exponent = fitExponent(rep.Sizes)
	rep.Targets = targets(rep)
	return rep, nil
}

// seqShape is the world of the sequential loop: the main world, or a
// smaller one of the same proportions when a sequential tick of the main
// world would take longer than SeqBudget.
func (o *Options) seqShape() Shape {
	s := o.Shape
	calls := float64(s.Characters + s.Locations)
	if o.SeqBudget <= 0 || o.Server.Latency <= 0 || calls*float64(o.Server.Latency) <= float64(o.SeqBudget) {
		return s
	}
	f := float64(o.SeqBudget) / (calls * float64(o.Server.Latency))
	return Shape{Characters: max(1, int(float64(s.Characters)*f)), Locations: max(1, int(float64(s.Locations)*f)), Connected: s.Connected}
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(fmt.Sprintf(format, args...))
	}
}

// world generates a world of shape s, starts a stand-in server for it, runs
// ticks ticks through the session layer with the given client concurrency,
// and measures them. A failure of the world itself (the engine refused it,
// a tick failed, the timeout passed, ctx ended) is its Error; an error is
// returned only when the harness itself cannot go on, or ctx ended before
// the world could start. The world's folder and its servers are gone when
// it returns.
func (o *Options) world(ctx context.Context, role string, s Shape, ticks, concurrency int) (*World, error) {
	w := &World{Role: role, Shape: s, Regions: s.Regions(), Concurrency: concurrency, Ideal: Ideal(s, o.Server.Concurrency, o.Server.Latency)}
	o.progress("%s world, %s, %d ticks, client concurrency %d: generating", role, s, ticks, concurrency)
	dir, err := os.MkdirTemp(o.TempDir, "arbiter-bench-")
	if err != nil {
		return nil, fmt.Errorf("bench: a folder for the world: %w", err)
	}
	simDir := filepath.Join(dir, "sim")
	defer func() {
		// An open left behind by an interrupt may write in the folder as
		// it is removed (its lock, state.db): then it is removed again
		// once that open has ended.
		if os.RemoveAll(dir) != nil && w.opening != nil {
			<-w.opening
			os.RemoveAll(dir)
		}
	}()
	// Each world's peak RSS is its own, generation included, where the
	// system lets the peak be reset: the worlds before it are done.
	resetPeakRSS()
	start := time.Now()
	if err := Generate(ctx, simDir, s, o.Seed); err != nil {
		return nil, fmt.Errorf("bench: generate %s: %w", s, err)
	}
	w.Generate = time.Since(start)

	children, err := o.startServers(ctx)
	if err != nil {
		return nil, err
	}
	w.Endpoints = len(children)
	defer func() {
		for _, child := range children {
			cpu, err := child.Close()
			w.ServerCPU += cpu
			if err != nil && w.Error == "" && ctx.Err() == nil {
				w.Error = err.Error()
			}
		}
	}()
	w.measure(ctx, o, children, simDir, ticks, concurrency)
	return w, nil
}

// startServers starts the stand-in servers of a world: one, or Endpoints
// sharing Server.Concurrency (the first ones take what does not divide).
func (o *Options) startServers(ctx context.Context) ([]*Child, error) {
	n := max(1, o.Endpoints)
	var children []*Child
	for i := range n {
		cfg := o.Server
		cfg.Concurrency = share(o.Server.Concurrency, n, i)
		child, err := StartServer(ctx, o.Launcher, cfg)
		if err != nil {
			for _, c := range children {
				_, _ = c.Close()
			}
			return nil, err
		}
		children = append(children, child)
	}
	return children, nil
}

// share is part i of total split into n parts, the first ones taking what
// does not divide, and at least 1.
func share(total, n, i int) int {
	s := total / n
	if i < total%n {
		s++
	}
	return max(1, s)
}

// Ideal is T*: the two waves of calls of a tick at server concurrency c and
// latency l, ceil(characters/c)·l + ceil(locations/c)·l.
func Ideal(s Shape, c int, l time.Duration) time.Duration {
	if c < 1 {
		return 0
	}
	waves := (s.Characters+c-1)/c + (s.Locations+c-1)/c
	return time.Duration(waves) * l
}

// fitExponent fits cost = a·characters^b by least squares on the logs, for
// engine CPU per tick and for T, over the sizes that committed a tick.
func fitExponent(sizes []*World) *Exponent {
	var xs, cpu, wall []float64
	var used []int
	for _, w := range sizes {
		if w.Ticks == 0 || w.CPU <= 0 {
			continue
		}
		xs = append(xs, math.Log(float64(w.Characters)))
		cpu = append(cpu, math.Log(float64(w.CPU)/float64(w.Ticks)))
		wall = append(wall, math.Log(float64(w.Tick)))
		used = append(used, w.Characters)
	}
	if len(xs) < 2 {
		return nil
	}
	b, ok := slope(xs, cpu)
	if !ok {
		return nil
	}
	t, _ := slope(xs, wall)
	return &Exponent{Characters: used, CPU: b, Wall: t}
}

func slope(xs, ys []float64) (float64, bool) {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	n := float64(len(xs))
	mx, my = mx/n, my/n
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	if sxx == 0 {
		return 0, false
	}
	return sxy / sxx, true
}
