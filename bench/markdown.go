package bench

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// WriteMarkdown writes the report as BENCHMARKS.md: the machine and settings,
// the targets with pass or fail, a row of figures per world, out-of-order
// ticks against lockstep, the shared prompt prefix, the sequential loop, the
// cost exponent and how each figure was measured.
func WriteMarkdown(w io.Writer, r *Report) error {
	var b page
	b.header(r)
	b.targets(r)
	b.worlds(r)
	b.outOfOrder(r)
	b.storage(r)
	b.prefix(r)
	b.sequential(r)
	b.exponent(r)
	b.method(r)
	_, err := w.Write(b.Bytes())
	return err
}

// page is BENCHMARKS.md as it is written, a section at a time.
type page struct{ bytes.Buffer }

func (b *page) p(format string, args ...any) { fmt.Fprintf(&b.Buffer, format, args...) }

// header is the title, how the run was started, the machine and the settings.
func (b *page) header(r *Report) {
	b.p("# Benchmarks\n\n")
	b.p("What a narrative tick costs at scale, measured %s", r.Date.Format("2006-01-02 15:04 MST"))
	if r.Command != "" {
		b.p(" by\n\n```sh\n%s\n```\n\n", r.Command)
	} else {
		b.p(".\n\n")
	}
	m := r.Machine
	b.p("Machine: %s/%s, %s, %d CPUs (GOMAXPROCS %d), %s memory, %s", m.OS, m.Arch, m.CPU, m.CPUs, m.GOMAXPROCS, gigabytes(m.Memory), m.Go)
	if m.Revision != "" {
		b.p("; arbiter %s", short(m.Revision))
		if m.Modified {
			b.p(" with uncommitted changes")
		}
	}
	if m.Collector != "" {
		b.p("; collector: %s", m.Collector)
	}
	b.p(".\n\n")
	s := r.Settings
	b.p("Settings: stand-in server latency %s (%s), server concurrency C=%d, ", s.Latency, tailText(s.Tail), s.ServerConcurrency)
	if s.Endpoints > 1 {
		b.p("shared by %d stand-in servers given to the client as llm.endpoints", s.Endpoints)
		if s.KillEndpoint > 0 {
			b.p(" (the last one killed as tick %d of each world commits)", s.KillEndpoint)
		}
		b.p(", ")
	}
	if s.RPM > 0 {
		b.p("%d requests per minute (429 with Retry-After above it), ", s.RPM)
	} else {
		b.p("no rpm limit, ")
	}
	b.p("client concurrency (llm.concurrency) %d, depth (llm.depth) %d, max_tokens %d intention / %d resolution", s.ClientConcurrency, s.Depth, s.IntentionMax, s.ResolutionMax)
	b.p("; main world %d ticks", s.Ticks)
	if s.SizeTicks > 0 && len(r.Sizes) > 0 {
		b.p(", sizes %d ticks each", s.SizeTicks)
	}
	b.p(", seed %d.\n\n", s.Seed)
}

// targets is the scale targets, each with pass or FAIL.
func (b *page) targets(r *Report) {
	b.p("## Targets\n\n| target | goal | measured | result |\n| --- | --- | --- | --- |\n")
	for _, t := range r.Targets {
		b.p("| %s | %s | %s | **%s** |\n", t.Name, t.Goal, cell(t.Figure), t.Status)
	}
}

// worlds is a row of figures per world, and the error of each that had one.
func (b *page) worlds(r *Report) {
	b.p("\n## Worlds\n\n")
	b.p("| world | characters / locations (regions) | ticks | calls | T | T* | T/T* | engine CPU per call | allocations per call | peak RSS | commit mean / max | state.db per tick (final size) | prompt tokens per call, tick 1 → tick n | 429s | failed calls | open |\n")
	b.p("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, w := range r.allWorlds() {
		b.p("| %s | %d / %d (%d) | %d | %d | %s | %s | %.3f | %s | %.0f (%.1f KB) | %s | %s / %s | %s (%s) | %s | %d | %d | %s |\n",
			w.Role, w.Characters, w.Locations, w.Regions, w.Ticks, w.Calls,
			seconds(w.Tick), seconds(w.Ideal), w.Ratio, cpuMillis(w.CPUPerCall), w.AllocsPerCall, w.AllocBytesPerCall/1e3,
			megabytes(w.PeakRSS), millis(w.Commit), millis(w.CommitMax), megabytes(w.DBGrowth), megabytes(w.DBBytes),
			promptText(w), w.Server.RateLimited, w.Failed, seconds(w.Open))
	}
	for _, w := range r.allWorlds() {
		if w.Error != "" {
			b.p("\n%s world (%s): %s\n", w.Role, w.Shape, cell(w.Error))
		}
	}
}

// outOfOrder compares the main world with the same world run in lockstep.
func (b *page) outOfOrder(r *Report) {
	if l := r.Lockstep; l != nil && l.Ticks > 0 && r.Main.Ticks > 0 {
		b.p("\n## Out-of-order ticks\n\nThe main world plays each location's next tick as soon as it and every location with a connection into it have resolved this one; `main, lockstep` is the same world, run after it, with every location waiting for the whole world (`arbiter run --lockstep`). T/T*: **%.3f** out of order, %.3f in lockstep (T %s and %s, T* %s).\n",
			r.Main.Ratio, l.Ratio, seconds(r.Main.Tick), seconds(l.Tick), seconds(r.Main.Ideal))
	}
}

// storage is how state.db grew per model call and how long reading a
// tick back took.
func (b *page) storage(r *Report) {
	m := r.Main
	if m.DBPerCall == 0 && m.ExportMax == 0 {
		return
	}
	b.p("\n## state.db\n\nThe main world's state.db grew %.2f KB per model call from tick 1 to tick %d (%.1f MB a tick; %.1f MB once closed)", m.DBPerCall/1000, m.Ticks, float64(m.DBGrowth)/1e6, float64(m.DBBytes)/1e6)
	if m.ExportMax > 0 {
		b.p("; read back after the run, a read-only session opened in %s, then `export --tick N` of every tick took at most %s (tick %d), of which reading the tick's state from state.db at most %s",
			m.ReadOpen.Round(time.Millisecond), m.ExportMax.Round(time.Millisecond), m.ExportTick, m.StateReadMax.Round(100*time.Microsecond))
	}
	b.p(".\n")
}

// prefix is the start the main world's system prompts of tick 1 share.
func (b *page) prefix(r *Report) {
	if len(r.Main.Prefix) > 0 {
		b.p("\n## Shared prompt prefix\n\nThe start the main world's system prompts of tick 1 share, per phase: what a provider's prefix cache can serve to every call of the phase after its first (the premise and instructions come first, the character or place last).\n\n")
		b.p("| phase | calls | shared start | mean system prompt | shared |\n| --- | --- | --- | --- | --- |\n")
		for _, x := range r.Main.Prefix {
			b.p("| %s | %d | %d bytes | %d bytes | %.0f %% |\n", x.Phase, x.Calls, x.Shared, x.Mean, 100*float64(x.Shared)/float64(max(1, x.Mean)))
		}
	}
}

// sequential is the speed-up over a loop at client concurrency 1.
func (b *page) sequential(r *Report) {
	if q := r.Sequential; q != nil {
		b.p("\n## Speed-up over a sequential loop\n\n")
		sw := q.World
		ticks := fmt.Sprintf("%d ticks", sw.Ticks)
		if sw.Ticks == 1 {
			ticks = "1 tick"
		}
		b.p("The same kind of world run with client concurrency 1 in the same invocation: %s, %s, %d calls in %s, %s per call",
			sw.Shape, ticks, sw.Calls, seconds(sw.Wall), millis(q.PerCall))
		if sw.Shape != r.Main.Shape {
			b.p(" (a smaller world of the main world's proportions: one sequential tick of the main world would take about %s)",
				seconds(time.Duration(r.Main.Characters+r.Main.Locations)*r.Settings.Latency))
		}
		if r.Main.Calls > 0 {
			b.p(". The main world: %s per call. Speed-up: **%.1fx**.\n", millis(r.Main.Wall/time.Duration(r.Main.Calls)), q.SpeedUp)
		} else {
			b.p(". The main world committed no tick, so there is no speed-up to state.\n")
		}
	}
}

// exponent is the cost exponent fitted over the sizes.
func (b *page) exponent(r *Report) {
	b.p("\n## Cost exponent\n\n")
	if e := r.Exponent; e != nil {
		b.p("Fitted cost = a·characters^b by least squares on the logs over %v characters (locations in the same proportion): engine CPU per tick b = **%.2f**, T b = %.2f (goal 1.0: a tick costs in proportion to the world).\n", e.Characters, e.CPU, e.Wall)
	} else {
		b.p("Not measured: fewer than two sizes committed a tick (`--sizes`).\n")
	}
}

// method says how each figure was measured.
func (b *page) method(r *Report) {
	b.p("\n## How it was measured\n\n")
	b.p(`- Each world is generated as a real simulation folder (simulation.yaml, characters/*.yaml,
  locations/*.yaml) in a temporary folder and opened with session.Open, as `+"`arbiter run`"+` opens
  one (world.Load, prompt lint, state.db, the model client from config.yaml and the flags).
  Character i starts in location i mod M. Locations are grouped in regions of connected
  locations (a ring plus one random two-way connection per location) holding at most %d
  characters each, as every figure here has been measured (with `+"`--connected`"+`, one region: a
  crowd past phases.resolution.max_characters is then resolved in several calls).
- The stand-in server runs in a child process (the arbiter binary re-executed with its hidden
  `+"`bench serve`"+` command), on 127.0.0.1. It answers every call from the request's own json_schema:
  an intention, or a MasterOutput with the tick and location of the schema's enums and an update
  for every character listed, half of them moving to another location of their enum; its free text
  is internal/openaitest's "<field> #<call>", shorter than a model writes (so prompts grow more
  slowly over ticks than in figures measured before it answered so). It holds
  one of C slots for the latency (requests over C queue), and reports usage: prompt tokens are the
  request's message bytes / 4, completion tokens the answer's bytes / 4. Its own CPU time (%s
  over this run) is not in the engine's figures.
- T is the wall time of the run's ticks divided by their number; T* = ceil(characters/C)·L +
  ceil(locations/C)·L. Engine CPU is the arbiter process's user + system time (getrusage
  RUSAGE_SELF) over the ticks, per model call; allocations are runtime.MemStats.Mallocs (and
  TotalAlloc) over the same span, per call. Peak RSS is getrusage's maxrss of the arbiter
  process at the end of that world: on Linux the peak is reset (/proc/self/clear_refs) before
  the world is generated, so it is that world's own; elsewhere it is the process's up to then
  (worlds run in the order listed, in one process). Commit is the time inside
  Store.CommitTick (runner.TickReport.Commit). state.db per tick is the database's growth
  (page_count x page_size, read after each commit) from tick 1 to the last tick, divided by the
  ticks between; the final size is the file after the run closed. Prompt tokens per call are the
  server-reported prompt tokens of a tick over its calls.
- Figures are measured, not asserted: unit tests check that the harness works, never timings.
`, RegionCharacters, seconds(r.serverCPU()))
}

// allWorlds is worlds with the sequential loop after the main world, in
// the order the report lists them.
func (r *Report) allWorlds() []*World {
	out := r.worlds()
	if r.Lockstep != nil && r.Main != nil {
		out = slices.Insert(out, 1, r.Lockstep)
	}
	if r.Sequential == nil {
		return out
	}
	at := 0
	if r.Main != nil {
		at = 1
	}
	return slices.Insert(out, at, r.Sequential.World)
}

func (r *Report) serverCPU() time.Duration {
	var d time.Duration
	for _, w := range r.allWorlds() {
		d += w.ServerCPU
	}
	return d
}

func promptText(w *World) string {
	n := min(20, len(w.Prompt))
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f → %.0f (tick %d)", w.PromptAt(1), w.PromptAt(n), n)
}

func tailText(t string) string {
	switch t {
	case TailPareto:
		return "Pareto tail, alpha 2, mean L, capped at 20 L"
	case TailLognormal:
		return "log-normal tail, sigma 1, mean L, capped at 20 L"
	}
	return "fixed"
}

// cell keeps text on one table row.
func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\n", " "), "|", `\|`)
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }

func millis(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

func gigabytes(n int64) string { return fmt.Sprintf("%.1f GB", float64(n)/1e9) }

func short(rev string) string { return rev[:min(12, len(rev))] }
