package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
)

// TestRunMeasuresEveryFigure runs a small main world, the sequential loop
// and two sizes for real, and checks that each figure was measured and
// written: this is the harness working, not a timing.
func TestRunMeasuresEveryFigure(t *testing.T) {
	t.Parallel()
	o := testOptions(t, Shape{Characters: 30, Locations: 5}, 3)
	o.Sizes, o.SizeTicks, o.SeqTicks = []Shape{{Characters: 20, Locations: 4}, {Characters: 40, Locations: 8}}, 1, 1
	var progress []string
	o.Progress = func(s string) { progress = append(progress, s) }
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Main
	if m.Error != "" || m.Ticks != 3 || m.Calls != 3*35 || m.Failed != 0 {
		t.Fatalf("main world %+v, want 3 ticks of 35 calls, none failed", m)
	}
	for name, ok := range map[string]bool{
		"T":                     m.Tick > 0,
		"T*":                    m.Ideal == Ideal(o.Shape, 8, 5*time.Millisecond) && m.Ideal == 5*5*time.Millisecond,
		"T/T*":                  m.Ratio > 0,
		"engine CPU per call":   m.CPUPerCall > 0,
		"allocations per call":  m.AllocsPerCall > 0 && m.AllocBytesPerCall > 0,
		"peak RSS":              m.PeakRSS > 0,
		"commit time":           m.Commit > 0 && m.CommitMax >= m.Commit,
		"state.db after a tick": len(m.DBAfter) == 3 && m.DBAfter[0] > 0 && m.DBAfter[2] > m.DBAfter[0],
		"state.db growth":       m.DBGrowth == (m.DBAfter[2]-m.DBAfter[0])/2 && m.DBBytes > 0,
		"prompt per tick":       len(m.Prompt) == 3 && m.Prompt[0] > 0 && m.Prompt[2] > m.Prompt[0],
		"server answered":       m.Server.Answered == int64(m.Calls) && m.Server.MaxInFlight <= 8,
		"open time":             m.Open > 0 && m.Generate > 0,
		"shared prompt prefix": len(m.Prefix) == 2 && m.Prefix[0].Phase == "intention" && m.Prefix[0].Calls == 30 &&
			m.Prefix[1].Phase == "resolution" && m.Prefix[1].Calls == 5 &&
			m.Prefix[0].Shared > m.Prefix[0].Mean/2 && m.Prefix[0].Shared < m.Prefix[0].Mean,
	} {
		if !ok {
			t.Errorf("%s not measured: %+v", name, m)
		}
	}
	if q := rep.Sequential; q == nil || q.World.Concurrency != 1 || q.World.Ticks != 1 || q.SpeedUp <= 0 || q.World.Server.MaxInFlight != 1 {
		t.Errorf("sequential loop %+v", q)
	}
	if len(rep.Sizes) != 2 || rep.Exponent == nil || len(rep.Exponent.Characters) != 2 {
		t.Errorf("sizes %v, exponent %+v", rep.Sizes, rep.Exponent)
	}
	if len(rep.Targets) != 7 {
		t.Errorf("%d targets, want 7", len(rep.Targets))
	}
	if len(progress) == 0 || !strings.Contains(strings.Join(progress, "\n"), "tick 3/3 committed") {
		t.Errorf("progress: %q", progress)
	}

	var b bytes.Buffer
	if err := WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"| main | 30 / 5 (1) | 3 | 105 |",
		seconds(m.Tick), seconds(m.Ideal), fmt.Sprintf("%.3f", m.Ratio), cpuMillis(m.CPUPerCall),
		fmt.Sprintf("%.0f (%.1f KB)", m.AllocsPerCall, m.AllocBytesPerCall/1e3), megabytes(m.PeakRSS),
		millis(m.Commit), megabytes(m.DBGrowth), promptText(m),
		"| sequential | 30 / 5 (1) | 1 | 35 |", fmt.Sprintf("**%.1fx**", rep.Sequential.SpeedUp),
		fmt.Sprintf("b = **%.2f**", rep.Exponent.CPU),
		"server concurrency C=8", "client concurrency (llm.concurrency) 8", "depth (llm.depth) 3",
		"getrusage", "## Targets", "## Shared prompt prefix",
		fmt.Sprintf("| intention | 30 | %d bytes | %d bytes |", m.Prefix[0].Shared, m.Prefix[0].Mean),
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md)
		}
	}
}

// TestRunCountsRateLimits: with an rpm limit the server answers 429s, the
// client waits them out (Retry-After), and the report counts them.
func TestRunCountsRateLimits(t *testing.T) {
	t.Parallel()
	o := testOptions(t, Shape{Characters: 6, Locations: 1}, 1)
	o.Server.RPM = 120 // 2 a second, in bursts of 2
	o.Client.RateLimitWaits = 20
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Main
	if m.Error != "" || m.Ticks != 1 {
		t.Fatalf("main world: %+v", m)
	}
	if m.Server.RateLimited == 0 {
		t.Errorf("no 429: %+v", m.Server)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("| %d | %d |", m.Server.RateLimited, m.Failed); m.Failed != 0 || !strings.Contains(b.String(), want) {
		t.Errorf("the worlds table lacks the 429s and failed calls %q:\n%s", want, b.String())
	}
	if !strings.Contains(b.String(), "120 requests per minute") {
		t.Errorf("the settings do not state the rpm limit:\n%s", b.String())
	}
}

// TestRunCrowdInOneLocation: a world whose 1,001 characters all stand in
// one location, which the engine refused before crowds were split, runs:
// its location is resolved in 16 calls of at most 64 characters. Not
// parallel: its 1,017 calls would starve the other worlds' stand-in
// servers of the two cores (TestProfiles' did not start in time).
func TestRunCrowdInOneLocation(t *testing.T) {
	o := testOptions(t, Shape{Characters: 1001, Locations: 1}, 1)
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.Main; m.Ticks != 1 || m.Error != "" || m.Calls != 1001+16 {
		t.Errorf("main world: error %q, ticks %d, calls %d; want 1 tick of 1,017 calls", m.Error, m.Ticks, m.Calls)
	}
}

// TestRunReportsAWorldThatFails: a world stopped by the world timeout is
// reported with what went wrong; its targets are not measured.
func TestRunReportsAWorldThatFails(t *testing.T) {
	t.Parallel()
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		o := testOptions(t, Shape{Characters: 4, Locations: 2}, 50)
		o.Server.Latency, o.WorldTimeout = 100*time.Millisecond, 700*time.Millisecond
		rep, err := Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		m := rep.Main
		if !strings.Contains(m.Error, "world timeout") || m.Ticks >= 50 {
			t.Errorf("main world: %d ticks, error %q; want stopped by the timeout", m.Ticks, m.Error)
		}
		var b bytes.Buffer
		if err := WriteMarkdown(&b, rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "world timeout") {
			t.Errorf("BENCHMARKS.md does not say why the world stopped:\n%s", b.String())
		}
	})
}

func TestOptionsCheck(t *testing.T) {
	t.Parallel()
	base := testOptions(t, Shape{Characters: 10, Locations: 2}, 1)
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"ticks", func(o *Options) { o.Ticks = 0 }, "ticks must be at least 1"},
		{"characters", func(o *Options) { o.Shape.Characters = 0 }, "at least 1 character"},
		{"latency", func(o *Options) { o.Server.Latency = -time.Second }, "latency must not be negative"},
		{"tail", func(o *Options) { o.Server.Tail = "weibull" }, `tail "weibull"`},
		{"server concurrency", func(o *Options) { o.Server.Concurrency = 0 }, "server concurrency"},
		{"rpm", func(o *Options) { o.Server.RPM = -1 }, "rpm must not be negative"},
		{"client concurrency", func(o *Options) { o.Client.Concurrency = 0 }, "client concurrency"},
		{"depth", func(o *Options) { o.Client.Depth = -1 }, "depth must not be negative"},
		{"sizes", func(o *Options) { o.Sizes, o.SizeTicks = []Shape{{Characters: 5, Locations: 0}}, 1 }, "sizes: a world needs at least 1 location"},
		{"size ticks", func(o *Options) { o.Sizes = []Shape{{Characters: 5, Locations: 1}} }, "size ticks must be at least 1"},
		{"sequential ticks", func(o *Options) { o.SeqTicks = -1 }, "sequential ticks"},
		{"world timeout", func(o *Options) { o.WorldTimeout = -1 }, "world timeout"},
		{"endpoints", func(o *Options) { o.Endpoints = -1 }, "endpoints must not be negative"},
		{"endpoints over C", func(o *Options) { o.Endpoints = 9 }, "endpoints (9) must not outnumber the server concurrency (8)"},
		{"kill one endpoint", func(o *Options) { o.KillEndpoint = 1 }, "kill-endpoint needs two endpoints or more"},
		{"kill endpoint", func(o *Options) { o.Endpoints, o.KillEndpoint = 2, -1 }, "kill-endpoint must not be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := base
			tc.edit(&o)
			err := o.Check()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Check() = %v, want %q", err, tc.want)
			}
			if _, err := Run(context.Background(), o); err == nil {
				t.Error("Run accepted options that Check refuses")
			}
		})
	}
	if err := base.Check(); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

// issue 27: the stand-in's capacity split over two servers that the client
// gets as llm.endpoints, and the last one killed mid-run: both answer
// before the kill, the other alone after it, and no call falls back.
func TestRunOverEndpointsWithOneKilled(t *testing.T) {
	t.Parallel()
	o := testOptions(t, Shape{Characters: 30, Locations: 5}, 3)
	o.Endpoints, o.KillEndpoint = 2, 1
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Main
	if m.Error != "" || m.Ticks != 3 || m.Endpoints != 2 || m.KilledAfter != 1 {
		t.Fatalf("main world: error %q, %d ticks, %d endpoints, killed after %d; want 3 ticks over 2, one killed after tick 1", m.Error, m.Ticks, m.Endpoints, m.KilledAfter)
	}
	// The killed server's count stops at its kill (what it answered as it
	// died is not counted), so the servers' answers are not compared with
	// the calls.
	if m.Fallbacks != 0 || m.Failed != 0 || m.Server.Answered == 0 || m.Server.MaxInFlight > 8 {
		t.Errorf("fallbacks %d, failed %d, servers %+v for %d calls", m.Fallbacks, m.Failed, m.Server, m.Calls)
	}
	var kill *Target
	for i := range rep.Targets {
		if strings.Contains(rep.Targets[i].Name, "killed") {
			kill = &rep.Targets[i]
		}
	}
	if kill == nil || kill.Status != Pass || !strings.Contains(kill.Figure, "killed after tick 1 of 3") {
		t.Errorf("kill target %+v in %+v", kill, rep.Targets)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "shared by 2 stand-in servers given to the client as llm.endpoints (the last one killed as tick 1") {
		t.Errorf("BENCHMARKS.md does not say how the endpoints were set up:\n%s", b.String())
	}
}

// A config.yaml's endpoints and batch mode never reach bench's worlds: its
// calls go live to the stand-in alone, not to a server the user pays for.
func TestRunIgnoresConfiguredEndpointsAndBatch(t *testing.T) {
	t.Parallel()
	o := testOptions(t, Shape{Characters: 10, Locations: 2}, 1)
	elsewhere := []llm.Endpoint{{Name: "paid", BaseURL: "http://127.0.0.1:1/v1"}}
	o.Client.Endpoints, o.Client.PhaseEndpoints = elsewhere, map[string][]llm.Endpoint{"resolution": elsewhere}
	o.Session.Batch, o.Session.BatchPhases = true, []string{"intention"}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.Main; m.Error != "" || m.Ticks != 1 || m.Failed != 0 || m.Server.Answered != int64(m.Calls) {
		t.Errorf("main world: error %q, %d ticks, %d failed, stand-in answered %d of %d calls", m.Error, m.Ticks, m.Failed, m.Server.Answered, m.Calls)
	}
}

func TestShare(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ total, n, i, want int }{{64, 2, 0, 32}, {64, 2, 1, 32}, {7, 2, 0, 4}, {7, 2, 1, 3}, {1, 2, 1, 1}} {
		if got := share(tc.total, tc.n, tc.i); got != tc.want {
			t.Errorf("share(%d, %d, %d) = %d, want %d", tc.total, tc.n, tc.i, got, tc.want)
		}
	}
}

func TestSeqShape(t *testing.T) {
	t.Parallel()
	o := Options{Shape: Shape{Characters: 10_000, Locations: 1_000}, Server: ServerConfig{Latency: 50 * time.Millisecond}, SeqBudget: time.Minute}
	if got := o.seqShape(); got != (Shape{Characters: 1090, Locations: 109}) {
		t.Errorf("seqShape() = %s, want 1090 characters in 109 locations (a minute of 50 ms calls)", got)
	}
	o.SeqBudget = time.Hour
	if got := o.seqShape(); got != o.Shape {
		t.Errorf("within the budget: %s, want the main world", got)
	}
	o.Server.Latency = 0
	o.SeqBudget = time.Second
	if got := o.seqShape(); got != o.Shape {
		t.Errorf("latency 0: %s, want the main world", got)
	}
}

func TestFitExponent(t *testing.T) {
	t.Parallel()
	sizes := func(power float64) []*World {
		var ws []*World
		for _, n := range []int{1000, 10000, 100000} {
			cost := time.Duration(1e3 * pow(float64(n), power))
			ws = append(ws, &World{Shape: Shape{Characters: n}, Ticks: 2, CPU: 2 * cost, Tick: cost})
		}
		return ws
	}
	for _, p := range []float64{1, 1.5, 2} {
		e := fitExponent(sizes(p))
		if e == nil || abs(e.CPU-p) > 1e-6 || abs(e.Wall-p) > 1e-6 {
			t.Errorf("cost ~ n^%g: fitted %+v", p, e)
		}
	}
	one := sizes(1)[:1]
	failed := append(sizes(1)[:1], &World{Shape: Shape{Characters: 5}})
	if fitExponent(one) != nil || fitExponent(failed) != nil {
		t.Error("an exponent from fewer than two measured sizes")
	}
}

func TestIdeal(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    Shape
		c    int
		want time.Duration
	}{
		{Shape{Characters: 10_000, Locations: 1_000}, 64, (157 + 16) * 50 * time.Millisecond},
		{Shape{Characters: 64, Locations: 64}, 64, 2 * 50 * time.Millisecond},
		{Shape{Characters: 65, Locations: 1}, 64, 3 * 50 * time.Millisecond},
		{Shape{Characters: 1, Locations: 1}, 0, 0},
	} {
		if got := Ideal(tc.s, tc.c, 50*time.Millisecond); got != tc.want {
			t.Errorf("Ideal(%s, C=%d) = %s, want %s", tc.s, tc.c, got, tc.want)
		}
	}
}

func pow(x, y float64) float64 { return math.Pow(x, y) }
func abs(x float64) float64    { return math.Abs(x) }

// TestProfiles: --cpuprofile and --memprofile write pprof profiles (gzip
// streams) of the main world's ticks; a profile that cannot be written is
// the world's error, not a crash or a silent skip.
func TestProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	o := testOptions(t, Shape{Characters: 20, Locations: 4}, 2)
	o.CPUProfile, o.HeapProfile = filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "heap.prof")
	rep, err := Run(context.Background(), o)
	if err != nil || rep.Main.Error != "" {
		t.Fatalf("run with profiles: %v, %q", err, rep.Main.Error)
	}
	for _, p := range []string{o.CPUProfile, o.HeapProfile} {
		b, err := os.ReadFile(p)
		if err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Errorf("%s: %d bytes, %v; want a gzipped pprof profile", p, len(b), err)
		}
	}
	o = testOptions(t, Shape{Characters: 20, Locations: 4}, 1)
	o.CPUProfile = filepath.Join(dir, "no", "cpu.prof")
	if rep, err := Run(context.Background(), o); err != nil || !strings.Contains(rep.Main.Error, "cpu profile") {
		t.Errorf("an unwritable cpu profile: %v, main world error %q", err, rep.Main.Error)
	}
	o = testOptions(t, Shape{Characters: 20, Locations: 4}, 1)
	o.HeapProfile = filepath.Join(dir, "no", "heap.prof")
	if rep, err := Run(context.Background(), o); err != nil || !strings.Contains(rep.Main.Error, "heap profile") {
		t.Errorf("an unwritable heap profile: %v, main world error %q", err, rep.Main.Error)
	}
}
