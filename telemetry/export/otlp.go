package export

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/exemplar"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// signalURL is the OTLP/HTTP URL of a signal under base URL endpoint, as
// OTEL_EXPORTER_OTLP_ENDPOINT is read: path v1/traces or v1/metrics.
func signalURL(endpoint, signal string) string {
	return strings.TrimRight(endpoint, "/") + "/v1/" + signal
}

func traceExporter(ctx context.Context, s Settings) (sdktrace.SpanExporter, error) {
	if s.Protocol == GRPC {
		return otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(s.Endpoint))
	}
	return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(signalURL(s.Endpoint, "traces")))
}

func metricExporter(ctx context.Context, s Settings) (sdkmetric.Exporter, error) {
	if s.Protocol == GRPC {
		return otlpmetricgrpc.New(ctx, otlpmetricgrpc.WithEndpointURL(s.Endpoint))
	}
	return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(signalURL(s.Endpoint, "metrics")))
}

// meter starts the metric readers s asks for: a periodic OTLP export, a
// Prometheus endpoint; none, no meter provider.
func (p *Pipeline) meter(ctx context.Context, s Settings, res *resource.Resource) error {
	var opts []sdkmetric.Option
	if s.metricsOn() {
		exp, err := metricExporter(ctx, s)
		if err != nil {
			return err
		}
		opts = append(opts, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp)))
	}
	if s.MetricsAddr != "" {
		reader, err := p.prometheus(s.MetricsAddr)
		if err != nil {
			return err
		}
		opts = append(opts, sdkmetric.WithReader(reader))
	}
	if len(opts) == 0 {
		return nil
	}
	opts = append(opts, sdkmetric.WithResource(res))
	if os.Getenv("OTEL_METRICS_EXEMPLAR_FILTER") == "" {
		// No exemplars unless asked: sampling one from every call's
		// measurements costs a run more than the measurements do.
		opts = append(opts, sdkmetric.WithExemplarFilter(exemplar.AlwaysOffFilter))
	}
	p.mp = sdkmetric.NewMeterProvider(opts...)
	return nil
}

// prometheus serves the metrics as Prometheus text at /metrics on addr.
func (p *Pipeline) prometheus(addr string) (sdkmetric.Reader, error) {
	reg := prometheus.NewRegistry()
	reader, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	p.server = &http.Server{Handler: mux}
	p.MetricsURL = "http://" + ln.Addr().String() + "/metrics"
	go p.server.Serve(ln)
	return reader, nil
}
