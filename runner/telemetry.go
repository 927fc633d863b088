package runner

import (
	"context"
	"time"

	"github.com/arbiter-sim/arbiter/telemetry"
	"go.opentelemetry.io/otel/attribute"
)

// traced returns ctx with the spans of the ticks of one Run or Turn (see
// telemetry.Ticks), kept in r.spans until end is called with what stopped
// it; ctx as it is when it has no telemetry.
func (r *Runner) traced(ctx context.Context) (_ context.Context, end func(error)) {
	ctx, r.spans = telemetry.StartTicks(ctx)
	return ctx, func(err error) {
		r.spans.EndAll(err)
		r.spans = nil
	}
}

// spanEvent adds ev to the span of its tick, with the fields of its line
// in the event log.
func (r *Runner) spanEvent(ev Event) {
	if r.spans == nil {
		return
	}
	attrs := make([]attribute.KeyValue, 0, len(ev.Fields)+1)
	for _, f := range ev.Fields {
		attrs = append(attrs, attribute.String(f.Key, f.Value))
	}
	if ev.Name == Message {
		attrs = append(attrs, attribute.String("text", ev.Text))
	}
	r.spans.Event(ev.Tick, ev.Name, attrs...)
}

// endPhase ends the span of phase p of tick t, whose calls ended with
// failed failures, and counts its fallbacks.
func (t *Tick) endPhase(ctx context.Context, p Phase, calls []Call, failed int) {
	if telemetry.From(ctx) == nil {
		return
	}
	fallbacks := 0
	for _, c := range calls {
		if c.Fallback {
			fallbacks++
		}
	}
	telemetry.Fallbacks(ctx, p.Name, fallbacks)
	t.r.spans.EndPhase(t.N, p.Name, nil, telemetry.KeyCalls.Int(len(calls)),
		telemetry.KeyFailed.Int(failed), telemetry.KeyFallbacks.Int(fallbacks))
}

// tickDone returns what the commit of tick t tells the telemetry once it
// has ended with err, its report tr complete: its span ends, its wall time
// is measured against the ideal of its calls, and what they cost is
// counted. Nil when ctx has no telemetry.
func (r *Runner) tickDone(ctx context.Context, t *Tick) func(err error, tr *TickReport) {
	if telemetry.From(ctx) == nil {
		return nil
	}
	spans, n, kind := r.spans, t.N, r.Stepper.Kind()
	ideal := r.ideal(t.times)
	type spend struct {
		model, phase string
		usd          float64
	}
	var spent []spend
	for _, c := range t.Record.Calls {
		if usd, err := r.Config.price(c.Model, c.Phase, recordUsage(c)); err == nil {
			spent = append(spent, spend{c.Model, c.Phase, usd})
		}
	}
	return func(err error, tr *TickReport) {
		spans.EndTick(n, err, telemetry.KeyCalls.Int(tr.Calls))
		if err != nil {
			return
		}
		telemetry.TickTime(ctx, kind, tr.Duration, ideal)
		for _, s := range spent {
			telemetry.Cost(ctx, s.model, s.phase, s.usd)
		}
	}
}

// ideal is T* of a tick whose calls took times, per phase: each phase's
// calls at the client's concurrency with none waiting on another, at least
// its longest call.
func (r *Runner) ideal(times map[string]*spell) time.Duration {
	workers := 1
	if r.Client != nil {
		workers = max(r.Client.Workers(), 1)
	}
	var total time.Duration
	for _, p := range times {
		total += max(p.sum/time.Duration(workers), p.longest)
	}
	return total
}
