package telemetry

import (
	"context"
	"strconv"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of arbiter's own (the call's are gen_ai.* and server.*).
const (
	KeySimulation = attribute.Key("arbiter.simulation")
	KeyKind       = attribute.Key("arbiter.kind")
	KeyCommand    = attribute.Key("arbiter.command")
	KeyTick       = attribute.Key("arbiter.tick")
	KeyPhase      = attribute.Key("arbiter.phase")
	KeyEntity     = attribute.Key("arbiter.entity")
	KeyLocation   = attribute.Key("arbiter.location")
	KeyEndpoint   = attribute.Key("arbiter.endpoint")
	KeyAttempts   = attribute.Key("arbiter.attempts")
	KeyRepairs    = attribute.Key("arbiter.repairs")
	KeyFallback   = attribute.Key("arbiter.fallback")
	KeyFallbacks  = attribute.Key("arbiter.fallbacks")
	KeyCalls      = attribute.Key("arbiter.calls")
	KeyFailed     = attribute.Key("arbiter.failed_calls")
	KeyBatchJob   = attribute.Key("arbiter.batch_job")
)

// Ticks keeps the spans of the ticks of one run of a runner and of their
// phases, by tick number, under the span of the run: a call finds its
// tick's tree by its tick and phase (StartCall), whichever tick's context
// started it. The zero of it (nil) does nothing.
type Ticks struct {
	t      *Telemetry
	parent trace.Span
	mu     sync.Mutex
	ticks  map[int]*tickSpans
	// own are the spans of the run, its ticks and phases, ended or not: a
	// call under one of them goes where its tick and phase say, a call
	// under a span of its kind's (a seat's turn) under that span.
	own map[trace.SpanID]bool
}

// tickSpans are the spans of one tick: its own, its phases' by name, and
// the name of the phase begun last.
type tickSpans struct {
	span   trace.Span
	phases map[string]trace.Span
	last   string
}

type ticksKey struct{}

// StartTicks returns ctx carrying a new Ticks under the span of ctx, and
// the Ticks (nil when ctx has no Telemetry that traces).
func StartTicks(ctx context.Context) (context.Context, *Ticks) {
	t := From(ctx)
	if !t.tracing() {
		return ctx, nil
	}
	parent := trace.SpanFromContext(ctx)
	k := &Ticks{t: t, parent: parent, ticks: map[int]*tickSpans{}, own: map[trace.SpanID]bool{parent.SpanContext().SpanID(): true}}
	return context.WithValue(ctx, ticksKey{}, k), k
}

// tick returns the spans of tick n, started now when they were not; k.mu
// is held.
func (k *Ticks) tick(n int) *tickSpans {
	ts := k.ticks[n]
	if ts == nil {
		pctx := trace.ContextWithSpan(context.Background(), k.parent)
		_, span := k.t.tracer.Start(pctx, "tick "+strconv.Itoa(n), trace.WithAttributes(KeyTick.Int(n)))
		ts = &tickSpans{span: span, phases: map[string]trace.Span{}}
		k.ticks[n] = ts
		k.own[span.SpanContext().SpanID()] = true
	}
	return ts
}

// phase returns the span of phase name of tick n, started now when it was
// not; k.mu is held.
func (k *Ticks) phase(n int, name string) trace.Span {
	ts := k.tick(n)
	span := ts.phases[name]
	if span == nil {
		pctx := trace.ContextWithSpan(context.Background(), ts.span)
		_, span = k.t.tracer.Start(pctx, name, trace.WithAttributes(KeyTick.Int(n), KeyPhase.String(name)))
		ts.phases[name] = span
		k.own[span.SpanContext().SpanID()] = true
	}
	return span
}

// Tick returns ctx under the span of tick n, started now when no call of
// the tick started it before.
func (k *Ticks) Tick(ctx context.Context, n int) context.Context {
	if k == nil {
		return ctx
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return trace.ContextWithSpan(ctx, k.tick(n).span)
}

// Begin returns ctx under the span of phase name of tick n, which has
// begun: the tick's events go to it from now on (see Event).
func (k *Ticks) Begin(ctx context.Context, n int, name string) context.Context {
	if k == nil {
		return ctx
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	span := k.phase(n, name)
	k.ticks[n].last = name
	return trace.ContextWithSpan(ctx, span)
}

// EndPhase ends the span of phase name of tick n with attrs (its calls,
// failures, fallbacks), with an error status when err is not nil.
func (k *Ticks) EndPhase(n int, name string, err error, attrs ...attribute.KeyValue) {
	if k == nil {
		return
	}
	k.mu.Lock()
	span := k.phase(n, name)
	delete(k.ticks[n].phases, name)
	k.mu.Unlock()
	span.SetAttributes(attrs...)
	End(span, err)
}

// EndTick ends the span of tick n and those of its phases still open,
// with an error status when err is not nil (the tick did not commit).
func (k *Ticks) EndTick(n int, err error, attrs ...attribute.KeyValue) {
	if k == nil {
		return
	}
	k.mu.Lock()
	ts := k.ticks[n]
	delete(k.ticks, n)
	k.mu.Unlock()
	if ts == nil { // ended already
		return
	}
	for _, span := range ts.phases {
		span.End()
	}
	ts.span.SetAttributes(attrs...)
	End(ts.span, err)
}

// EndAll ends every span still open, with err: the run stopped.
func (k *Ticks) EndAll(err error) {
	if k == nil {
		return
	}
	k.mu.Lock()
	open := make([]int, 0, len(k.ticks))
	for n := range k.ticks {
		open = append(open, n)
	}
	k.mu.Unlock()
	for _, n := range open {
		k.EndTick(n, err)
	}
}

// Event adds the event name with attrs to the span of tick n: to its
// phase begun last while that is open, else to the tick's own while that
// is, else to the run's.
func (k *Ticks) Event(n int, name string, attrs ...attribute.KeyValue) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	span := k.parent
	if ts := k.ticks[n]; ts != nil {
		span = ts.span
		if p := ts.phases[ts.last]; p != nil {
			span = p
		}
	}
	span.AddEvent(name, trace.WithAttributes(attrs...))
}

// callParent returns ctx under the span a call of tick n in phase should
// have, and whether that is its phase's: its phase's in the run's Ticks,
// when ctx has them, the call names both and ctx is under a span of the
// run's (whichever tick's); else ctx as it is (under a span of the kind's
// own, or of no run).
func callParent(ctx context.Context, n int, phase string) (context.Context, bool) {
	k, _ := ctx.Value(ticksKey{}).(*Ticks)
	if k == nil || n <= 0 || phase == "" {
		return ctx, false
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.own[trace.SpanFromContext(ctx).SpanContext().SpanID()] {
		return ctx, false
	}
	return trace.ContextWithSpan(ctx, k.phase(n, phase)), true
}
