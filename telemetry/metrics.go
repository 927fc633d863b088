package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
)

// instruments are the metrics of a run; the zero value (no meter) records
// nothing.
type instruments struct {
	on bool
	// sets are the attribute sets met so far, by what they describe: a
	// call's (callKey) or an endpoint's (string), made once rather than
	// sorted and allocated at every measurement.
	sets       *sync.Map
	duration   metric.Float64Histogram // gen_ai.client.operation.duration
	tokens     metric.Int64Histogram   // gen_ai.client.token.usage
	calls      metric.Int64Counter
	cost       metric.Float64Counter
	fallbacks  metric.Int64Counter
	rateLimits metric.Int64Counter
	inflight   metric.Int64UpDownCounter
	tick       metric.Float64Histogram
	tickRatio  metric.Float64Gauge
}

// durationBuckets suit model calls: tens of milliseconds to minutes.
var durationBuckets = []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}

func newInstruments(m metric.Meter) (instruments, error) {
	in := instruments{on: true, sets: &sync.Map{}}
	var errs [9]error
	in.duration, errs[0] = m.Float64Histogram("gen_ai.client.operation.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of a model call, its retries and repairs included"), metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.tokens, errs[1] = m.Int64Histogram("gen_ai.client.token.usage", metric.WithUnit("{token}"),
		metric.WithDescription("Tokens of a model call, by gen_ai.token.type (input, output)"),
		metric.WithExplicitBucketBoundaries(1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304))
	in.calls, errs[2] = m.Int64Counter("arbiter.calls", metric.WithUnit("{call}"), metric.WithDescription("Model calls, by phase, endpoint and error.type"))
	in.cost, errs[3] = m.Float64Counter("arbiter.cost", metric.WithUnit("USD"), metric.WithDescription("What the committed ticks' calls cost, at the configured prices"))
	in.fallbacks, errs[4] = m.Int64Counter("arbiter.fallbacks", metric.WithUnit("{call}"), metric.WithDescription("Failed calls whose entity kept its state (the kind's fallback)"))
	in.rateLimits, errs[5] = m.Int64Counter("arbiter.rate_limits", metric.WithUnit("{response}"), metric.WithDescription("429 rate-limit answers, by endpoint"))
	in.inflight, errs[6] = m.Int64UpDownCounter("arbiter.calls.in_flight", metric.WithUnit("{call}"), metric.WithDescription("Model call attempts in flight, by endpoint"))
	in.tick, errs[7] = m.Float64Histogram("arbiter.tick.duration", metric.WithUnit("s"), metric.WithDescription("Wall time of a tick, calls to commit"),
		metric.WithExplicitBucketBoundaries(durationBuckets...))
	in.tickRatio, errs[8] = m.Float64Gauge("arbiter.tick.ideal_ratio", metric.WithUnit("1"),
		metric.WithDescription("The last tick's wall time over its ideal T*: each phase's calls at the client's concurrency, none waiting on another"))
	return in, errors.Join(errs[:]...)
}

// callKey is what a call's metrics are kept by.
type callKey struct{ operation, model, phase, endpoint, errType string }

// callSets are the attribute sets of a call's measurements, as the option
// lists Record and Add take: passed whole, they are not allocated again at
// every measurement.
type callSets struct {
	record, input, output []metric.RecordOption
	add                   []metric.AddOption
}

// callSets returns the attribute sets of calls described by k.
func (in instruments) callSets(k callKey) callSets {
	if v, ok := in.sets.Load(k); ok {
		return v.(callSets)
	}
	attrs := []attribute.KeyValue{semconv.GenAIOperationNameKey.String(k.operation), semconv.GenAIRequestModel(k.model),
		KeyPhase.String(k.phase), KeyEndpoint.String(k.endpoint)}
	base := attrs[:4:4]
	if k.errType != "" {
		attrs = append(attrs, semconv.ErrorTypeKey.String(k.errType))
	}
	call := metric.WithAttributeSet(attribute.NewSet(attrs...))
	s := callSets{
		record: []metric.RecordOption{call},
		add:    []metric.AddOption{call},
		input:  []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(base, semconv.GenAITokenTypeInput)...))},
		output: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(append(base, semconv.GenAITokenTypeOutput)...))},
	}
	in.sets.Store(k, s)
	return s
}

// endpointSet returns the attribute set of an endpoint's measurements.
func (in instruments) endpointSet(endpoint string) []metric.AddOption {
	if v, ok := in.sets.Load(endpoint); ok {
		return v.([]metric.AddOption)
	}
	set := []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(KeyEndpoint.String(endpoint)))}
	in.sets.Store(endpoint, set)
	return set
}

// call counts a model call that ended.
func (in instruments) call(ctx context.Context, c Call, d Done) {
	if !in.on {
		return
	}
	s := in.callSets(callKey{c.Operation, c.Model, c.Phase, d.Endpoint, d.ErrType})
	in.duration.Record(ctx, d.Latency.Seconds(), s.record...)
	in.calls.Add(ctx, 1, s.add...)
	in.tokens.Record(ctx, int64(d.InputTokens), s.input...)
	in.tokens.Record(ctx, int64(d.OutputTokens), s.output...)
}

// Attempt counts an attempt of a call at endpoint as it starts (+1) and
// ends (-1), and a 429 it was answered.
func Attempt(ctx context.Context, endpoint string, delta int64, rateLimited bool) {
	t := From(ctx)
	if t == nil || !t.m.on {
		return
	}
	set := t.m.endpointSet(endpoint)
	t.m.inflight.Add(ctx, delta, set...)
	if rateLimited {
		t.m.rateLimits.Add(ctx, 1, set...)
	}
}

// Fallbacks counts n fallbacks of phase.
func Fallbacks(ctx context.Context, phase string, n int) {
	if t := From(ctx); t != nil && t.m.on && n > 0 {
		t.m.fallbacks.Add(ctx, int64(n), metric.WithAttributes(KeyPhase.String(phase)))
	}
}

// Cost counts usd spent on calls of model in phase.
func Cost(ctx context.Context, model, phase string, usd float64) {
	if t := From(ctx); t != nil && t.m.on && usd > 0 {
		t.m.cost.Add(ctx, usd, metric.WithAttributes(semconv.GenAIRequestModel(model), KeyPhase.String(phase)))
	}
}

// TickTime records a tick's wall time and its ratio to ideal (0: unknown).
func TickTime(ctx context.Context, kind string, wall, ideal time.Duration) {
	t := From(ctx)
	if t == nil || !t.m.on {
		return
	}
	set := metric.WithAttributes(KeyKind.String(kind))
	t.m.tick.Record(ctx, wall.Seconds(), set)
	if ideal > 0 {
		t.m.tickRatio.Record(ctx, wall.Seconds()/ideal.Seconds(), set)
	}
}
