package telemetry

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestTicksFileCallsByTick: a call of tick 2 started from tick 1's context
// (a location working ahead) is filed under tick 2's phase; an event after
// its tick ended goes to the run; a tick ended twice ends once; a span a
// kind started inside a phase keeps its calls.
func TestTicksFileCallsByTick(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, run := Start(With(context.Background(), tel), "run")
	ctx, k := StartTicks(ctx)
	tick1 := k.Begin(k.Tick(ctx, 1), 1, "resolution")
	cctx, early := StartCall(tick1, Call{Operation: "chat", Model: "m", Tick: 2, Phase: "intention"})
	early.End(cctx, Done{})
	kctx, seat := Start(tick1, "invoke_agent p1")
	cctx, own := StartCall(kctx, Call{Operation: "chat", Model: "m", Tick: 1, Phase: "resolution"})
	own.End(cctx, Done{})
	seat.End()
	k.EndPhase(1, "resolution", nil)
	k.EndTick(1, nil)
	k.EndTick(1, nil)
	k.Event(1, "RECOVERY_ATTEMPT")
	k.EndAll(nil)
	run.End()

	byName := map[string]sdktrace.ReadOnlySpan{}
	count := map[string]int{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = s
		count[s.Name()]++
	}
	if count["tick 1"] != 1 || count["tick 2"] != 1 || count["intention"] != 1 || count["chat m"] != 2 {
		t.Fatalf("spans %v", count)
	}
	parent := func(name string) string {
		for n, s := range byName {
			if s.SpanContext().SpanID() == byName[name].Parent().SpanID() {
				return n
			}
		}
		return ""
	}
	if p := parent("intention"); p != "tick 2" {
		t.Errorf("the early call's phase is under %q, want tick 2", p)
	}
	if p := parent("invoke_agent p1"); p != "resolution" {
		t.Errorf("the seat's span is under %q", p)
	}
	if ev := byName["run"].Events(); len(ev) != 1 || ev[0].Name != "RECOVERY_ATTEMPT" {
		t.Errorf("events of the run: %v, want the one told after its tick ended", ev)
	}
	for _, s := range rec.Ended() {
		if s.Name() == "chat m" {
			if p := s.Parent().SpanID(); p != byName["intention"].SpanContext().SpanID() && p != byName["invoke_agent p1"].SpanContext().SpanID() {
				t.Errorf("a call is under neither its phase nor its seat")
			}
		}
	}
}
