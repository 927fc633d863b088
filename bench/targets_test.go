package bench

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// report is a hand-built report of a run at the targets' settings.
func report(main *World, sizes ...*World) *Report {
	r := &Report{
		Settings: Settings{Latency: targetL, Tail: TailFixed, ServerConcurrency: targetC, ClientConcurrency: 64, Depth: 3, Ticks: 20},
		Main:     main,
		Sizes:    sizes,
	}
	r.Exponent = fitExponent(sizes)
	r.Targets = targets(r)
	return r
}

func goodMain() *World {
	prompt := make([]float64, 20)
	for i := range prompt {
		prompt[i] = 1000 + 40*float64(i)
	}
	ideal := Ideal(targetShape, targetC, targetL)
	return &World{Role: "main", Shape: targetShape, Ticks: 20, Calls: 220_000, Tick: ideal * 102 / 100, Ideal: ideal, Ratio: 1.02,
		CPUPerCall: 250 * time.Microsecond, PeakRSS: 200e6, Prompt: prompt}
}

func size(n int, cpuPerTick time.Duration, growth int64) *World {
	return &World{Role: "size", Shape: Shape{Characters: n, Locations: n / 10}, Ticks: 5, CPU: 5 * cpuPerTick, Tick: time.Second,
		DBAfter: []int64{growth, 2 * growth, 3 * growth, 4 * growth, 5 * growth}, DBGrowth: growth}
}

func statuses(r *Report) map[string]string {
	m := map[string]string{}
	for _, t := range r.Targets {
		m[t.Name] = t.Status
	}
	return m
}

func TestTargets(t *testing.T) {
	t.Parallel()
	good := report(goodMain(), size(100, time.Millisecond, 500e3), size(1000, 10*time.Millisecond, 0),
		size(100_000, time.Second, 0))
	for name, status := range statuses(good) {
		if status != Pass {
			t.Errorf("%s: %s, want pass", name, status)
		}
	}

	bad := goodMain()
	bad.Ratio, bad.CPUPerCall, bad.PeakRSS = 1.7, time.Millisecond, 900e6
	bad.Prompt[19] = 5.5 * bad.Prompt[0]
	huge := size(100_000, 0, 0)
	huge.Ticks, huge.CPU, huge.Error = 0, 0, "stopped by the world timeout"
	r := report(bad, size(100, time.Millisecond, 4.5e6), size(1000, 10*time.Millisecond, 0), size(10_000, time.Second, 0), huge)
	for name, status := range statuses(r) {
		if status != Fail {
			t.Errorf("%s: %s, want FAIL", name, status)
		}
	}

	few := size(100, time.Millisecond, 500e3)
	few.DBAfter = few.DBAfter[:4]
	if tg := targets(report(goodMain(), few)); tg[3].Status != NotMeasured || !strings.Contains(tg[3].Figure, "5 ticks or more") {
		t.Errorf("state.db growth from 4 ticks at depth 3: %+v, want not measured (the history is not full)", tg[3])
	}

	short := goodMain()
	short.Prompt = short.Prompt[:5]
	r = report(short)
	r.Settings.Depth = 3
	got := statuses(r)
	for _, name := range []string{"state.db growth per tick at 100 characters", "prompt per call at tick 20 vs tick 1",
		"100,000 characters in 10,000 locations completes a tick", "cost exponent (engine CPU per tick over characters)"} {
		if got[name] != NotMeasured {
			t.Errorf("%s: %s, want not measured", name, got[name])
		}
	}
	r.Settings.Depth = 0
	if tg := targets(r); tg[4].Status != NotMeasured || !strings.Contains(tg[4].Figure, "depth 0") {
		t.Errorf("prompt target at depth 0: %+v", tg[4])
	}

	other := goodMain()
	other.Shape = Shape{Characters: 100, Locations: 10}
	r = report(other)
	if !strings.Contains(r.Targets[0].Figure, "the target is stated for 10000 characters in 1000 locations") {
		t.Errorf("a run at other settings does not say so: %q", r.Targets[0].Figure)
	}
}

func TestWriteMarkdownStatesEachTarget(t *testing.T) {
	t.Parallel()
	bad := goodMain()
	bad.Ratio = 1.7
	r := report(bad, size(100, time.Millisecond, 500e3), size(1000, 10*time.Millisecond, 0))
	r.Command = "arbiter bench --sizes 100,1000"
	r.Sequential = &Sequential{World: &World{Role: "sequential", Shape: Shape{Characters: 1090, Locations: 109}, Ticks: 1, Calls: 1199, Wall: time.Minute}, PerCall: 50 * time.Millisecond, SpeedUp: 61.3}
	r.Main.Wall, r.Main.Error = 3*time.Minute, "run: interrupted"
	var b bytes.Buffer
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{
		"```sh\narbiter bench --sizes 100,1000\n```",
		"| T/T* | <= 1.08 | 1.700", "| **FAIL** |",
		"| engine CPU per call | <= 500µs | 0.250 ms", "| **pass** |",
		"| 100,000 characters in 10,000 locations completes a tick | a tick committed | not in --sizes | **not measured** |",
		"0.50 MB per tick over ticks 2..5 of 100 characters in 10 locations",
		"1.76x (1760 tokens at tick 20, 1000 at tick 1)",
		"Speed-up: **61.3x**", "a smaller world of the main world's proportions",
		"main world (10000 characters in 1000 locations): run: interrupted",
		"1000 → 1760 (tick 20)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("BENCHMARKS.md lacks %q:\n%s", want, md)
		}
	}
}
