package telemetry

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestCallSpanSaysWhatIsNotUsual: a call span outside a run's ticks says
// its tick and phase; it says its attempts when there were more than one
// and why the answer ended when it did not simply stop; server.address and
// server.port come from the base URL, the scheme's port when it names none.
func TestCallSpanSaysWhatIsNotUsual(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tel, err := New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)), nil, false)
	if err != nil {
		t.Fatal(err)
	}
	ctx := With(context.Background(), tel)
	for _, d := range []Done{
		{Attempts: 1, FinishReason: "stop", BaseURL: "http://127.0.0.1:8080/v1"},
		{Attempts: 2, FinishReason: "length", BaseURL: "https://api.example.com/v1"},
		{Attempts: 1, FinishReason: "odd", BaseURL: "https://api.example.com/v1"},
		{Attempts: 1},
	} {
		cctx, span := StartCall(ctx, Call{Operation: "chat", Model: "m", Entity: "intention:ada", Phase: "intention", Tick: 3})
		span.End(cctx, d)
	}
	want := []map[string]string{
		{"arbiter.tick": "3", "arbiter.phase": "intention", "arbiter.attempts": "", "gen_ai.response.finish_reasons": "",
			"server.address": "127.0.0.1", "server.port": "8080"},
		{"arbiter.attempts": "2", "gen_ai.response.finish_reasons": `["length"]`, "server.address": "api.example.com", "server.port": "443"},
		{"gen_ai.response.finish_reasons": `["odd"]`},
		{"server.address": "", "server.port": ""},
	}
	spans := rec.Ended()
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d", len(spans), len(want))
	}
	for i, s := range spans {
		got := map[string]string{}
		for _, a := range s.Attributes() {
			got[string(a.Key)] = a.Value.Emit()
		}
		for k, v := range want[i] {
			if got[k] != v {
				t.Errorf("call %d: %s = %q, want %q (all: %v)", i, k, got[k], v, got)
			}
		}
	}
}
