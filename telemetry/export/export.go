// Package export sends a process's telemetry where its settings say:
// spans and metrics over OTLP (HTTP or gRPC) to a collector, metrics as
// Prometheus text on an address of its own. Nothing it does waits on a
// collector while a run goes on: spans wait in a bounded queue, and those
// that could not be delivered are counted and reported once, at the end.
package export

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/arbiter-sim/arbiter/telemetry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Protocols of OTLP, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	HTTP = "http/protobuf"
	GRPC = "grpc"
)

// Settings say where telemetry goes. The zero value sends nothing.
type Settings struct {
	// Endpoint is the collector's OTLP base URL, e.g.
	// http://127.0.0.1:4318 (HTTP) or http://127.0.0.1:4317 (gRPC); ""
	// sends no OTLP.
	Endpoint string
	Protocol string // HTTP (default) or GRPC
	// Traces and Metrics say whether spans and metrics go over OTLP:
	// "otlp" (default) or "none".
	Traces, Metrics string
	ServiceName     string
	Version         string
	// CaptureContent puts prompt and answer text on a call's span.
	CaptureContent bool
	// QueueSize is how many ended spans wait for export at most (0:
	// the SDK's 2048, or OTEL_BSP_MAX_QUEUE_SIZE); past it spans are
	// dropped, not waited for.
	QueueSize int
	// MetricsAddr, when set, serves the metrics as Prometheus text at
	// /metrics on that address (host:port).
	MetricsAddr string
}

// on reports whether s sends anything.
func (s Settings) on() bool { return s.tracesOn() || s.metricsOn() || s.MetricsAddr != "" }

func (s Settings) tracesOn() bool  { return s.Endpoint != "" && s.Traces != "none" }
func (s Settings) metricsOn() bool { return s.Endpoint != "" && s.Metrics != "none" }

// Validate names what is wrong with s.
func (s Settings) Validate() error {
	var errs []error
	switch s.Protocol {
	case "", HTTP, GRPC:
	default:
		errs = append(errs, fmt.Errorf("otel.protocol (OTEL_EXPORTER_OTLP_PROTOCOL) is %q: arbiter sends %q or %q", s.Protocol, HTTP, GRPC))
	}
	for _, e := range []struct{ key, v string }{{"otel.traces_exporter (OTEL_TRACES_EXPORTER)", s.Traces}, {"otel.metrics_exporter (OTEL_METRICS_EXPORTER)", s.Metrics}} {
		if e.v != "" && e.v != "otlp" && e.v != "none" {
			errs = append(errs, fmt.Errorf("%s is %q: it takes otlp or none", e.key, e.v))
		}
	}
	if s.Endpoint != "" && !strings.HasPrefix(s.Endpoint, "http://") && !strings.HasPrefix(s.Endpoint, "https://") {
		errs = append(errs, fmt.Errorf("otel.endpoint (OTEL_EXPORTER_OTLP_ENDPOINT) is %q: give a URL, e.g. http://127.0.0.1:4318", s.Endpoint))
	}
	if s.MetricsAddr != "" {
		if _, _, err := net.SplitHostPort(s.MetricsAddr); err != nil {
			errs = append(errs, fmt.Errorf("--metrics-addr %q: give host:port, e.g. 127.0.0.1:9464", s.MetricsAddr))
		}
	}
	return errors.Join(errs...)
}

// Pipeline is the telemetry of a process while it runs.
type Pipeline struct {
	Telemetry *telemetry.Telemetry
	// MetricsURL is where the Prometheus text is served, "" when it is
	// not.
	MetricsURL string

	tp       *sdktrace.TracerProvider
	mp       *sdkmetric.MeterProvider
	spans    *counter
	errs     *errorCount
	server   *http.Server
	endpoint string
}

// Open starts what s asks for; nil (and no error) when s sends nothing.
func Open(ctx context.Context, s Settings) (*Pipeline, error) {
	if !s.on() {
		return nil, nil
	}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(s.ServiceName), semconv.ServiceVersion(s.Version)))
	if err != nil && res == nil {
		return nil, err
	}
	p := &Pipeline{errs: &errorCount{}, endpoint: s.Endpoint}
	// An export's failure is counted and reported once at the end, not
	// logged as it happens: a collector that is down says so every few
	// seconds otherwise.
	otel.SetErrorHandler(p.errs)
	var tp trace.TracerProvider
	if s.tracesOn() {
		if tp, err = p.tracer(ctx, s, res); err != nil {
			return nil, err
		}
	}
	if err := p.meter(ctx, s, res); err != nil {
		p.Shutdown(ctx)
		return nil, err
	}
	var mp metric.MeterProvider
	if p.mp != nil {
		mp = p.mp
	}
	if p.Telemetry, err = telemetry.New(tp, mp, s.CaptureContent); err != nil {
		p.Shutdown(ctx)
		return nil, err
	}
	return p, nil
}

// tracer starts the span pipeline: a bounded batch queue in front of the
// OTLP exporter, both counted.
func (p *Pipeline) tracer(ctx context.Context, s Settings, res *resource.Resource) (trace.TracerProvider, error) {
	exp, err := traceExporter(ctx, s)
	if err != nil {
		return nil, err
	}
	p.spans = &counter{}
	var opts []sdktrace.BatchSpanProcessorOption
	if s.QueueSize > 0 {
		opts = append(opts, sdktrace.WithMaxQueueSize(s.QueueSize))
	}
	bsp := sdktrace.NewBatchSpanProcessor(countedExporter{exp, p.spans}, opts...)
	p.tp = sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(countedProcessor{bsp, p.spans}))
	return p.tp, nil
}

// Report is what the pipeline delivered.
type Report struct {
	Spans     int64 // ended
	Delivered int64 // accepted by the collector
	Errors    int64 // failures the SDK reported (exports of spans and metrics)
	FirstErr  error // the first of them
	Endpoint  string
}

// Lost is how many spans did not reach the collector.
func (r Report) Lost() int64 { return r.Spans - r.Delivered }

// String says how many spans were lost and why, for a line on stderr.
func (r Report) String() string {
	line := fmt.Sprintf("%d of %d spans did not reach %s", r.Lost(), r.Spans, r.Endpoint)
	if r.FirstErr != nil {
		line += fmt.Sprintf(" (%d export failures, the first: %v)", r.Errors, r.FirstErr)
	}
	return line
}

// shutdownWait bounds Shutdown: what is still queued then is dropped,
// counted, rather than holding the process's exit.
const shutdownWait = 2 * time.Second

// Shutdown flushes what is queued, for at most a couple of seconds, stops
// the Prometheus server and reports what was delivered. A nil Pipeline
// reports nothing.
func (p *Pipeline) Shutdown(ctx context.Context) Report {
	if p == nil {
		return Report{}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownWait)
	defer cancel()
	if p.server != nil {
		p.server.Close()
	}
	if p.mp != nil {
		p.mp.Shutdown(ctx)
	}
	if p.tp != nil {
		p.tp.Shutdown(ctx)
	}
	r := Report{Endpoint: p.endpoint}
	if p.spans != nil {
		r.Spans, r.Delivered = p.spans.ended.Load(), p.spans.delivered.Load()
	}
	r.Errors, r.FirstErr = p.errs.get()
	return r
}

// errorCount counts the errors the SDK reports and keeps the first.
type errorCount struct {
	mu    sync.Mutex
	n     int64
	first error
}

func (e *errorCount) Handle(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.n++
	if e.first == nil {
		e.first = err
	}
}

func (e *errorCount) get() (int64, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.n, e.first
}

// counter counts spans ended and spans the collector accepted.
type counter struct{ ended, delivered atomic.Int64 }

// countedProcessor counts the spans that end before the queue takes them.
type countedProcessor struct {
	sdktrace.SpanProcessor
	n *counter
}

func (c countedProcessor) OnEnd(s sdktrace.ReadOnlySpan) {
	c.n.ended.Add(1)
	c.SpanProcessor.OnEnd(s)
}

// countedExporter counts the spans the collector accepted (the batch
// processor reports a failed export to the error handler).
type countedExporter struct {
	sdktrace.SpanExporter
	n *counter
}

func (c countedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := c.SpanExporter.ExportSpans(ctx, spans)
	if err == nil {
		c.n.delivered.Add(int64(len(spans)))
	}
	return err
}
