package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/viper"
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
func (c OTelConfig) settings(metricsAddr string) session.TelemetrySettings {
	if off, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); off {
		return session.TelemetrySettings{}
	}
	return session.TelemetrySettings{Endpoint: c.Endpoint, Protocol: c.Protocol, Traces: c.TracesExporter, Metrics: c.MetricsExporter,
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
	ctx, metricsURL, end, err := session.Traced(ctx, cfg.OTel.settings(metricsAddr), command, dir)
	if err != nil {
		return ctx, func(error) {}, usageErrorf("telemetry: %v", err)
	}
	if metricsURL != "" {
		fmt.Fprintf(io.ErrOut, "metrics: %s (Prometheus text)\n", metricsURL)
	}
	return ctx, func(err error) {
		if lost := end(err); lost != "" {
			fmt.Fprintf(io.ErrOut, "warning: telemetry: %s\n", lost)
		}
	}, nil
}
