package session

import (
	"context"
	"path/filepath"

	"go.opentelemetry.io/otel/attribute"

	"github.com/arbiter-sim/arbiter/telemetry"
	"github.com/arbiter-sim/arbiter/telemetry/export"
)

// TelemetrySettings say where a command's traces and metrics go; the zero
// value is telemetry off.
type TelemetrySettings = export.Settings

// Traced starts the telemetry set configures for command on the simulation
// in dir: the returned context carries it, under the span of the command,
// and metricsURL is where Prometheus text is served ("" for none). end ends
// that span with the command's error, flushes what is queued (two seconds
// at most) and returns what did not reach the collector ("" when all did).
// With telemetry off, ctx is returned as it is and end does nothing.
func Traced(ctx context.Context, set TelemetrySettings, command, dir string) (_ context.Context, metricsURL string, end func(error) string, err error) {
	p, err := export.Open(ctx, set)
	if err != nil || p == nil {
		return ctx, "", func(error) string { return "" }, err
	}
	ctx = telemetry.With(ctx, p.Telemetry)
	attrs := []attribute.KeyValue{telemetry.KeyCommand.String(command)}
	if dir != "" {
		attrs = append(attrs, telemetry.KeySimulation.String(filepath.Base(filepath.Clean(dir))))
	}
	ctx, span := telemetry.Start(ctx, "arbiter "+command, attrs...)
	return ctx, p.MetricsURL, func(err error) string {
		telemetry.End(span, err)
		if r := p.Shutdown(ctx); r.Lost() > 0 {
			return r.String()
		}
		return ""
	}, nil
}
