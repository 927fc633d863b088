package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/telemetry"
	"github.com/arbiter-sim/arbiter/telemetry/export"
	"github.com/spf13/viper"
	"go.opentelemetry.io/otel/attribute"
)

// OTelConfig is where traces and metrics go (off by default). Each key is
// also read from the standard OpenTelemetry variable named beside it,
// which ARBITER_OTEL_* and flags override.
type OTelConfig struct {
	Endpoint        string `mapstructure:"endpoint" yaml:"endpoint" json:"endpoint"`                         // OTEL_EXPORTER_OTLP_ENDPOINT
	Protocol        string `mapstructure:"protocol" yaml:"protocol" json:"protocol"`                         // OTEL_EXPORTER_OTLP_PROTOCOL
	ServiceName     string `mapstructure:"service_name" yaml:"service_name" json:"service_name"`             // OTEL_SERVICE_NAME
	TracesExporter  string `mapstructure:"traces_exporter" yaml:"traces_exporter" json:"traces_exporter"`    // OTEL_TRACES_EXPORTER
	MetricsExporter string `mapstructure:"metrics_exporter" yaml:"metrics_exporter" json:"metrics_exporter"` // OTEL_METRICS_EXPORTER
	CaptureContent  bool   `mapstructure:"capture_content" yaml:"capture_content" json:"capture_content"`    // OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT
	QueueSize       int    `mapstructure:"queue_size" yaml:"queue_size" json:"queue_size"`                   // OTEL_BSP_MAX_QUEUE_SIZE
}

// otelEnv are the standard variables of the otel.* keys.
var otelEnv = map[string]string{
	"otel.endpoint":         "OTEL_EXPORTER_OTLP_ENDPOINT",
	"otel.protocol":         "OTEL_EXPORTER_OTLP_PROTOCOL",
	"otel.service_name":     "OTEL_SERVICE_NAME",
	"otel.traces_exporter":  "OTEL_TRACES_EXPORTER",
	"otel.metrics_exporter": "OTEL_METRICS_EXPORTER",
	"otel.capture_content":  "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
	"otel.queue_size":       "OTEL_BSP_MAX_QUEUE_SIZE",
}

// bindOTelEnv reads each otel.* key from ARBITER_OTEL_* first, then from
// its standard OpenTelemetry variable.
func bindOTelEnv(v *viper.Viper) error {
	for key, env := range otelEnv {
		own := "ARBITER_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
		if err := v.BindEnv(key, own, env); err != nil {
			return err
		}
	}
	return nil
}

// settings are the export settings of c; metricsAddr serves Prometheus
// text when set. OTEL_SDK_DISABLED=true turns everything off, as in every
// OpenTelemetry SDK.
func (c OTelConfig) settings(metricsAddr string) export.Settings {
	if off, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); off {
		return export.Settings{}
	}
	return export.Settings{Endpoint: c.Endpoint, Protocol: c.Protocol, Traces: c.TracesExporter, Metrics: c.MetricsExporter,
		ServiceName: c.ServiceName, Version: session.ReadBuild().Version, CaptureContent: c.CaptureContent,
		QueueSize: c.QueueSize, MetricsAddr: metricsAddr}
}

// traced starts the telemetry cfg configures for command on the
// simulation in dir: the returned context carries it, under the span of
// the command. end ends that span with the command's error, flushes what
// is queued (two seconds at most) and says once on stderr how many spans
// did not reach the collector. With telemetry off, ctx is returned as it
// is and end does nothing.
func traced(ctx context.Context, io *IOStreams, cfg *Config, command, dir, metricsAddr string) (context.Context, func(error), error) {
	p, err := export.Open(ctx, cfg.OTel.settings(metricsAddr))
	if err != nil {
		return ctx, func(error) {}, usageErrorf("telemetry: %v", err)
	}
	if p == nil {
		return ctx, func(error) {}, nil
	}
	if p.MetricsURL != "" {
		fmt.Fprintf(io.ErrOut, "metrics: %s (Prometheus text)\n", p.MetricsURL)
	}
	ctx = telemetry.With(ctx, p.Telemetry)
	attrs := []attribute.KeyValue{telemetry.KeyCommand.String(command)}
	if dir != "" {
		attrs = append(attrs, telemetry.KeySimulation.String(filepath.Base(filepath.Clean(dir))))
	}
	ctx, span := telemetry.Start(ctx, "arbiter "+command, attrs...)
	return ctx, func(err error) {
		telemetry.End(span, err)
		if r := p.Shutdown(ctx); r.Lost() > 0 {
			fmt.Fprintf(io.ErrOut, "warning: telemetry: %s\n", r)
		}
	}, nil
}
