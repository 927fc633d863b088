package bench

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkTick runs b.N ticks of generated worlds against the stand-in
// server in a child process (latency 50 ms, C=64, as issue 12's targets), with
// the code of `arbiter bench`: ns/op is the time of a tick, and the figures of
// BENCHMARKS.md are reported as metrics.
//
//	go test -run '^$' -bench Tick -benchtime 5x ./bench
func BenchmarkTick(b *testing.B) {
	for _, s := range []Shape{{Characters: 100, Locations: 10}, {Characters: 1000, Locations: 100}, {Characters: 1000, Locations: 100, Connected: true}} {
		name := fmt.Sprintf("characters=%d/locations=%d", s.Characters, s.Locations)
		if s.Connected {
			name += "/connected"
		}
		b.Run(name, func(b *testing.B) {
			o := testOptions(b, s, b.N)
			o.Server.Latency, o.Server.Concurrency, o.Client.Concurrency = 50*time.Millisecond, 64, 64
			o.timer = b
			b.StopTimer()
			w, err := o.world(context.Background(), "bench", s, b.N, o.Client.Concurrency)
			if err != nil {
				b.Fatal(err)
			}
			if w.Error != "" {
				b.Fatal(w.Error)
			}
			b.ReportMetric(w.Ratio, "T/T*")
			b.ReportMetric(float64(w.CPUPerCall)/1e6, "cpu-ms/call")
			b.ReportMetric(w.AllocsPerCall, "allocs/call")
			b.ReportMetric(float64(w.Commit)/1e6, "commit-ms")
			b.ReportMetric(float64(w.DBGrowth), "db-B/tick")
			b.ReportMetric(w.PromptAt(w.Ticks), "prompt-tok/call")
			b.ReportMetric(float64(w.PeakRSS)/1e6, "peak-RSS-MB")
		})
	}
}
