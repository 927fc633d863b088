package bench

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/internal/memlimit"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/session"
)

// Report is everything one benchmark run measured.
type Report struct {
	Date     time.Time `json:"date"`
	Command  string    `json:"command,omitempty"` // how it was run, to run it again
	Machine  Machine   `json:"machine"`
	Settings Settings  `json:"settings"`
	Main     *World    `json:"main"`
	// Lockstep is the main world again with out-of-order ticks off
	// (--lockstep), when asked for.
	Lockstep   *World      `json:"lockstep,omitempty"`
	Sequential *Sequential `json:"sequential,omitempty"`
	Sizes      []*World    `json:"sizes,omitempty"`
	Exponent   *Exponent   `json:"exponent,omitempty"`
	Targets    []Target    `json:"targets"`
}

// Settings are the run's settings as the report states them.
type Settings struct {
	Latency           time.Duration `json:"latency_ns"`
	Tail              string        `json:"tail"`
	ServerConcurrency int           `json:"server_concurrency"`
	RPM               int           `json:"rpm"`
	ClientConcurrency int           `json:"client_concurrency"`
	Depth             int           `json:"depth"`
	Ticks             int           `json:"ticks"`
	SizeTicks         int           `json:"size_ticks,omitempty"`
	SeqTicks          int           `json:"sequential_ticks"`
	Seed              uint64        `json:"seed"`
	IntentionMax      int           `json:"intention_max_tokens"`
	ResolutionMax     int           `json:"resolution_max_tokens"`
	Endpoints         int           `json:"endpoints,omitempty"`
	KillEndpoint      int           `json:"kill_endpoint_after_tick,omitempty"`
}

func settingsOf(o Options) Settings {
	return Settings{
		Latency: o.Server.Latency, Tail: o.Server.Tail, ServerConcurrency: o.Server.Concurrency, RPM: o.Server.RPM,
		ClientConcurrency: o.Client.Concurrency, Depth: o.Client.Depth, Ticks: o.Ticks, SizeTicks: o.SizeTicks,
		SeqTicks: o.SeqTicks, Seed: o.Seed, IntentionMax: phases.Of(o.Session).Intention.MaxTokens, ResolutionMax: phases.Of(o.Session).Resolution.MaxTokens,
		Endpoints: o.Endpoints, KillEndpoint: o.KillEndpoint,
	}
}

// World is what one generated world measured.
type World struct {
	Role string `json:"role"` // main | sequential | size
	Shape
	Regions     int `json:"regions"`
	Concurrency int `json:"client_concurrency"`
	Ticks       int `json:"ticks"` // committed
	Calls       int `json:"calls"`
	Failed      int `json:"failed_calls"`
	Fallbacks   int `json:"fallbacks"`
	// Endpoints is how many stand-in servers answered the world's calls,
	// and KilledAfter the tick after which one of them was killed (0: none).
	Endpoints   int `json:"endpoints"`
	KilledAfter int `json:"endpoint_killed_after_tick,omitempty"`

	Generate time.Duration `json:"generate_ns"` // writing the world's files
	Open     time.Duration `json:"open_ns"`     // session.Open: load, lint, state.db
	Wall     time.Duration `json:"wall_ns"`     // all ticks
	Tick     time.Duration `json:"tick_ns"`     // T: mean time of a tick
	TickMax  time.Duration `json:"tick_max_ns"`
	Ideal    time.Duration `json:"ideal_ns"` // T*
	Ratio    float64       `json:"ratio"`    // T/T*

	CPU               time.Duration `json:"cpu_ns"` // engine CPU over the ticks
	CPUPerCall        time.Duration `json:"cpu_per_call_ns"`
	AllocsPerCall     float64       `json:"allocs_per_call"`
	AllocBytesPerCall float64       `json:"alloc_bytes_per_call"`
	PeakRSS           int64         `json:"peak_rss_bytes"` // the process's, up to the end of this world
	Commit            time.Duration `json:"commit_ns"`      // mean time in Store.CommitTick
	CommitMax         time.Duration `json:"commit_max_ns"`

	DBAfter  []int64 `json:"db_bytes_after_tick"` // state.db (WAL included) after each tick
	DBGrowth int64   `json:"db_growth_per_tick"`  // after tick 1
	DBBytes  int64   `json:"db_bytes"`            // the file once closed
	// DBPerCall is state.db's growth from tick 1 to the last tick over
	// the model calls of the ticks after the first.
	DBPerCall float64 `json:"db_bytes_per_call"`
	// ReadOpen is the time a read-only session took to open on the
	// world's run (what `export`, `story` and `status` pay first).
	ReadOpen time.Duration `json:"read_open_ns"`
	// ExportMax is the longest `export --tick N` of the world's ticks
	// (session.Export through a read-only session, after the run), at
	// tick ExportTick.
	ExportMax  time.Duration `json:"export_max_ns"`
	ExportTick int           `json:"export_tick"`
	// StateReadMax is the longest read of a tick's state alone
	// (store.State), the part of an export that state.db's forms decide.
	StateReadMax time.Duration `json:"state_read_max_ns"`

	Prompt []float64 `json:"prompt_tokens_per_call"` // by tick
	// Prefix is, per phase, how much of the system prompts of the first
	// tick's calls is the same text: what a provider's prefix cache can
	// serve to every call of the phase after its first.
	Prefix    []session.PromptPrefix `json:"shared_prefix,omitempty"`
	Server    Stats                  `json:"server"`
	ServerCPU time.Duration          `json:"server_cpu_ns"`
	Error     string                 `json:"error,omitempty"`

	// opening, when set, is closed once an open that an interrupt left
	// behind has ended (World.open).
	opening <-chan struct{}
}

// PromptAt is the prompt tokens per call of tick n (1-based), 0 when the
// world did not commit it.
func (w *World) PromptAt(n int) float64 {
	if n < 1 || n > len(w.Prompt) {
		return 0
	}
	return w.Prompt[n-1]
}

// Sequential is the same kind of world run one call at a time.
type Sequential struct {
	World   *World        `json:"world"`
	PerCall time.Duration `json:"per_call_ns"` // wall time per call, sequential
	// SpeedUp is the sequential loop's wall time per call over the main
	// world's.
	SpeedUp float64 `json:"speed_up"`
}

// Exponent is b in cost = a·characters^b, fitted over the sizes.
type Exponent struct {
	Characters []int   `json:"characters"`
	CPU        float64 `json:"cpu"`  // of engine CPU per tick
	Wall       float64 `json:"wall"` // of T
}

// Machine is where the figures were measured.
type Machine struct {
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	CPU        string `json:"cpu"`
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Memory     int64  `json:"memory_bytes"`
	Go         string `json:"go"`
	Revision   string `json:"revision,omitempty"` // the arbiter commit, when the binary knows it
	Modified   bool   `json:"modified,omitempty"` // built from a tree with changes
	Collector  string `json:"collector"`          // how the Go collector was paced
}

func machine() Machine {
	m := Machine{OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: "unknown", CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version()}
	if v := procField("/proc/cpuinfo", "model name"); v != "" {
		m.CPU = v
	}
	if v := procField("/proc/meminfo", "MemTotal"); v != "" {
		if kb, err := strconv.ParseInt(strings.TrimSuffix(v, " kB"), 10, 64); err == nil {
			m.Memory = kb * 1024
		}
	}
	b := manifest.ReadBuild()
	m.Revision, m.Modified = b.Revision, b.Modified
	m.Collector = collector()
	return m
}

// collector says how the Go collector is paced: by the user's GOGC or
// GOMEMLIMIT, by arbiter's memory limit (memlimit.Govern, which the
// command sets), or by Go's defaults.
func collector() string {
	var set []string
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		if v := os.Getenv(env); v != "" {
			set = append(set, env+"="+v)
		}
	}
	switch {
	case len(set) > 0:
		return strings.Join(set, " ")
	case debug.SetMemoryLimit(-1) != math.MaxInt64:
		return fmt.Sprintf("memory limit %g × the largest live heap the process has had, at least %d MiB over it, which alone paces the collector above %d MiB (GOGC off; arbiter's default; the worlds of one bench run share the process)", memlimit.Headroom, memlimit.MinHeadroom>>20, memlimit.Floor>>20)
	}
	return "Go's defaults (GOGC=100, no memory limit)"
}

// procField is the value of the first "key : value" line of a /proc file.
func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
