package export

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/telemetry"
)

// BenchmarkCallTelemetry is what telemetry costs a model call of a run,
// spans and metrics over OTLP/HTTP to a collector that accepts and
// discards them: the call's span under its tick's phase, its two attempt
// counts and its metrics, and the export of it (flushed at the end, so
// that the background export is in the figure). It prints the process's
// CPU per call (cpu-ns/op) beside the loop's wall time, and allocations.
func BenchmarkCallTelemetry(b *testing.B) {
	for _, tc := range []struct {
		name            string
		traces, metrics string
	}{{"spans+metrics", "otlp", "otlp"}, {"spans", "otlp", "none"}, {"metrics", "none", "otlp"}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				w.Header().Set("Content-Type", "application/x-protobuf")
			}))
			defer srv.Close()
			// The queue holds every span, so that none is dropped (a
			// dropped span costs nothing to export).
			p, err := Open(context.Background(), Settings{Endpoint: srv.URL, Traces: tc.traces, Metrics: tc.metrics,
				QueueSize: max(b.N, 2048), ServiceName: "bench"})
			if err != nil {
				b.Fatal(err)
			}
			ctx, run := telemetry.Start(telemetry.With(context.Background(), p.Telemetry), "arbiter bench")
			ctx, ticks := telemetry.StartTicks(ctx)
			const perPhase = 1000
			done := telemetry.Done{ResponseModel: "llama3.2", Endpoint: "local", BaseURL: srv.URL + "/v1", Attempts: 1,
				InputTokens: 1200, OutputTokens: 80, FinishReason: "stop", Latency: 50 * time.Millisecond}
			b.ReportAllocs()
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				tick := i/perPhase + 1
				call := telemetry.Call{Operation: "chat", Model: "llama3.2", Entity: "intention:ada", Phase: "intention",
					Tick: tick, Temperature: 0.7, MaxTokens: 512}
				cctx, span := telemetry.StartCall(ticks.Tick(ctx, tick), call)
				telemetry.Attempt(cctx, "local", 1, false)
				telemetry.Attempt(cctx, "local", -1, false)
				span.End(cctx, done)
				if (i+1)%perPhase == 0 {
					ticks.EndTick(tick, nil)
				}
			}
			ticks.EndAll(nil)
			run.End()
			r := p.Shutdown(context.Background())
			b.StopTimer()
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N), "cpu-ns/op")
			if r.Lost() > 0 {
				b.Fatalf("%s", r)
			}
		})
	}
}

// cpuTime is the CPU the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
