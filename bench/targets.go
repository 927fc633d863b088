package bench

import (
	"fmt"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
)

// Statuses of a target.
const (
	Pass        = "pass"
	Fail        = "FAIL"
	NotMeasured = "not measured"
)

// Target is one of the scale targets and how this run fared.
type Target struct {
	Name   string `json:"name"`
	Goal   string `json:"goal"`
	Figure string `json:"figure"` // what was measured, and on what
	Status string `json:"status"` // pass | FAIL | not measured
}

// The scale targets: a tick of a large world close to the ideal T*, and
// engine CPU per call small, so that the engine's own work stays small
// beside the model calls it waits for.
var (
	targetShape   = Shape{Characters: 10_000, Locations: 1_000}
	largestShape  = Shape{Characters: 100_000, Locations: 10_000}
	targetC       = 64
	targetL       = 50 * time.Millisecond
	maxRatio      = 1.08
	maxCPUPerCall = 500 * time.Microsecond
	maxRSS        = int64(300e6)
	maxDBGrowth   = int64(1e6)
	maxExponent   = 1.1 // "goal: 1.0", with room for noise on a shared machine

	// Several endpoints, stated for two of 32 slots each
	// (C=64 summed), 1,000 characters, L=50 ms.
	endpointsShape    = Shape{Characters: 1_000, Locations: 100}
	maxEndpointsRatio = 1.15
)

func targets(r *Report) []Target {
	m := r.Main
	at := fmt.Sprintf("at %s, C=%d, L=%s %s", m.Shape, r.Settings.ServerConcurrency, r.Settings.Latency, r.Settings.Tail)
	if m.Shape != targetShape || r.Settings.ServerConcurrency != targetC || r.Settings.Latency != targetL || r.Settings.Tail != TailFixed {
		at += fmt.Sprintf(" (the target is stated for %s, C=%d, L=%s fixed)", targetShape, targetC, targetL)
	}
	measured := m.Ticks > 0
	var out []Target
	out = append(out,
		check("T/T*", fmt.Sprintf("<= %.2f", maxRatio), measured, m.Ratio <= maxRatio,
			fmt.Sprintf("%.3f (T %s, T* %s) %s", m.Ratio, m.Tick.Round(time.Millisecond), m.Ideal, at)),
		check("engine CPU per call", fmt.Sprintf("<= %s", maxCPUPerCall), measured, m.CPUPerCall <= maxCPUPerCall,
			fmt.Sprintf("%s %s", cpuMillis(m.CPUPerCall), at)),
		check("peak RSS", "<= "+megabytes(maxRSS), measured, m.PeakRSS <= maxRSS,
			fmt.Sprintf("%s %s", megabytes(m.PeakRSS), at)),
	)

	// The growth is judged once the history is full (depth + 1 ticks) and
	// one tick more: before that each tick stores less than later ones.
	need := r.Settings.Depth + 2
	t := Target{Name: "state.db growth per tick at 100 characters", Goal: "< " + megabytes(maxDBGrowth), Status: NotMeasured,
		Figure: fmt.Sprintf("no world of 100 characters ran %d ticks or more (depth + 2, so that the history is full; run --characters 100 --locations 10)", need)}
	for _, w := range r.worlds() {
		if w.Characters == 100 && len(w.DBAfter) >= need {
			t = check(t.Name, t.Goal, true, w.DBGrowth < maxDBGrowth,
				fmt.Sprintf("%.2f MB per tick over ticks 2..%d of %s", float64(w.DBGrowth)/1e6, len(w.DBAfter), w.Shape))
			break
		}
	}
	out = append(out, t)

	t = Target{Name: "prompt per call at tick 20 vs tick 1", Goal: "<= 2x at the default depth", Status: NotMeasured}
	switch {
	case r.Settings.Depth != llm.DefaultDepth:
		t.Figure = fmt.Sprintf("run at depth %d; the target is for the default depth %d", r.Settings.Depth, llm.DefaultDepth)
	case len(m.Prompt) < 20:
		t.Figure = fmt.Sprintf("the main world ran %d ticks; the target needs 20", len(m.Prompt))
	default:
		x := m.PromptAt(20) / m.PromptAt(1)
		t = check(t.Name, t.Goal, true, x <= 2, fmt.Sprintf("%.2fx (%.0f tokens at tick 20, %.0f at tick 1) on %s", x, m.PromptAt(20), m.PromptAt(1), m.Shape))
	}
	out = append(out, t)

	t = Target{Name: "100,000 characters in 10,000 locations completes a tick", Goal: "a tick committed", Status: NotMeasured,
		Figure: "not in --sizes"}
	for _, w := range r.worlds() {
		if w.Shape == largestShape {
			t.Status, t.Figure = Fail, "no tick committed: "+w.Error
			if w.Ticks > 0 {
				t.Status = Pass
				t.Figure = fmt.Sprintf("%d ticks, T %s (T* %s), opened in %s, peak RSS %s", w.Ticks, w.Tick.Round(time.Millisecond), w.Ideal, w.Open.Round(time.Millisecond), megabytes(w.PeakRSS))
			}
			break
		}
	}
	out = append(out, t)

	out = append(out, endpointTargets(r)...)

	t = Target{Name: "cost exponent (engine CPU per tick over characters)", Goal: fmt.Sprintf("1.0 (pass <= %.1f)", maxExponent), Status: NotMeasured,
		Figure: "fewer than two sizes committed a tick"}
	if e := r.Exponent; e != nil {
		t = check(t.Name, t.Goal, true, e.CPU <= maxExponent, fmt.Sprintf("%.2f over %v characters (T: %.2f)", e.CPU, e.Characters, e.Wall))
	}
	return append(out, t)
}

// endpointTargets are the targets of several stand-in endpoints, judged
// when the calls went to them: T/T* against their summed capacity when none
// was killed, and no fallback when one was.
func endpointTargets(r *Report) []Target {
	m := r.Main
	if r.Settings.Endpoints < 2 {
		return nil
	}
	at := fmt.Sprintf("%d endpoints sharing C=%d, %s, L=%s %s", r.Settings.Endpoints, r.Settings.ServerConcurrency, m.Shape, r.Settings.Latency, r.Settings.Tail)
	if m.Shape != endpointsShape || r.Settings.Endpoints != 2 || r.Settings.ServerConcurrency != targetC || r.Settings.Latency != targetL {
		at += fmt.Sprintf(" (the target is stated for 2 endpoints sharing C=%d, %s, L=%s)", targetC, endpointsShape, targetL)
	}
	if r.Settings.KillEndpoint == 0 {
		return []Target{check("T/T* over several endpoints", fmt.Sprintf("<= %.2f", maxEndpointsRatio), m.Ticks > 0, m.Ratio <= maxEndpointsRatio,
			fmt.Sprintf("%.3f (T %s, T* %s at their summed C) %s", m.Ratio, m.Tick.Round(time.Millisecond), m.Ideal, at))}
	}
	t := check("fallbacks after an endpoint is killed mid-run", "0", m.KilledAfter > 0 && m.Ticks > m.KilledAfter, m.Fallbacks == 0,
		fmt.Sprintf("%d fallbacks, %d failed calls; one of %s killed after tick %d of %d", m.Fallbacks, m.Failed, at, m.KilledAfter, m.Ticks))
	if t.Status == NotMeasured {
		t.Figure = fmt.Sprintf("the main world committed %d ticks; the kill after tick %d needs one more", m.Ticks, r.Settings.KillEndpoint)
	}
	return []Target{t}
}

func check(name, goal string, measured, ok bool, figure string) Target {
	t := Target{Name: name, Goal: goal, Figure: figure, Status: NotMeasured}
	switch {
	case !measured:
		t.Figure = "no tick committed"
	case ok:
		t.Status = Pass
	default:
		t.Status = Fail
	}
	return t
}

// worlds are the main world and the sizes: those the targets read.
func (r *Report) worlds() []*World {
	out := []*World{}
	if r.Main != nil {
		out = append(out, r.Main)
	}
	return append(out, r.Sizes...)
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// cpuMillis is a CPU time per call in milliseconds, to the microsecond.
func cpuMillis(d time.Duration) string {
	return fmt.Sprintf("%.3f ms", float64(d)/float64(time.Millisecond))
}
