package telemetry

import (
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Scope names the instrumentation: the tracer and meter of arbiter.
const Scope = "github.com/arbiter-sim/arbiter"

// Telemetry is where a process's spans and metrics go.
type Telemetry struct {
	tracer  trace.Tracer
	m       instruments
	content bool
	// servers are the server.address and server.port of the base URLs
	// met so far.
	servers sync.Map
}

// New returns the Telemetry of tp and mp (either may be nil: no spans, or
// no metrics). With content, a call's span carries its prompt and answer
// text (gen_ai.input.messages, gen_ai.output.messages), scrubbed of
// secrets by the caller; without, only their sizes.
func New(tp trace.TracerProvider, mp metric.MeterProvider, content bool) (*Telemetry, error) {
	t := &Telemetry{content: content}
	if tp != nil {
		t.tracer = tp.Tracer(Scope, trace.WithSchemaURL(semconv.SchemaURL))
	}
	if mp != nil {
		m, err := newInstruments(mp.Meter(Scope, metric.WithSchemaURL(semconv.SchemaURL)))
		if err != nil {
			return nil, err
		}
		t.m = m
	}
	return t, nil
}

type key struct{}

// With returns ctx carrying t (ctx itself when t is nil).
func With(ctx context.Context, t *Telemetry) context.Context {
	if t == nil {
		return ctx
	}
	return context.WithValue(ctx, key{}, t)
}

// From returns the Telemetry of ctx, nil when it has none.
func From(ctx context.Context) *Telemetry {
	t, _ := ctx.Value(key{}).(*Telemetry)
	return t
}

// Content reports whether spans carry prompt and answer text.
func (t *Telemetry) Content() bool { return t != nil && t.content }

// tracing reports whether t makes spans.
func (t *Telemetry) tracing() bool { return t != nil && t.tracer != nil }

// Start starts a span named name under the span of ctx (an internal one:
// a run's, a game's, an eval case's). With no Telemetry in ctx it returns
// ctx and a span that records nothing.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	t := From(ctx)
	if !t.tracing() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return t.tracer.Start(ctx, name, trace.WithAttributes(attrs...))
}

// End ends span, with an error status when err is not nil.
func End(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}
