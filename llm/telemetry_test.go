package llm

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/telemetry"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// telemetered returns ctx with telemetry to an in-memory span recorder and
// a manual metric reader.
func telemetered(t *testing.T, content bool) (context.Context, *tracetest.SpanRecorder, *sdkmetric.ManualReader) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	reader := sdkmetric.NewManualReader()
	tel, err := telemetry.New(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)),
		sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), content)
	if err != nil {
		t.Fatal(err)
	}
	return telemetry.With(t.Context(), tel), rec, reader
}

// TestCallSpanContentIsScrubbed: with content captured, a call's span
// holds its prompt and answer with the client's key replaced, as every
// text the client keeps.
func TestCallSpanContentIsScrubbed(t *testing.T) {
	t.Parallel()
	const key = "sk-test-0123456789abcdef"
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("your key is "+key)))
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.APIKey = key })
	ctx, rec, _ := telemetered(t, true)
	req := chatRequest()
	req.Messages = append(req.Messages, Message{Role: "user", Content: "is my key " + key + "?"})
	if res := c.Chat(ctx, req); res.Err != nil {
		t.Fatal(res.Err)
	}
	spans := rec.Ended()
	if len(spans) != 1 {
		t.Fatalf("%d spans, want 1", len(spans))
	}
	var in, out string
	for _, a := range spans[0].Attributes() {
		switch a.Key {
		case "gen_ai.input.messages":
			in = a.Value.AsString()
		case "gen_ai.output.messages":
			out = a.Value.AsString()
		}
	}
	if strings.Contains(in+out, key) || !strings.Contains(in, "is my key "+Redacted) || !strings.Contains(out, "your key is "+Redacted) {
		t.Errorf("content on the span:\ninput  %s\noutput %s", in, out)
	}
}

// TestCallMetrics: a call waited out a 429 and then answered: counted once,
// its tokens by type, the 429 at its endpoint, and no attempt left in
// flight.
func TestCallMetrics(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Status(429, "requests", "rate_limit_exceeded", "slow down").WithHeader("Retry-After", "0"),
		openaitest.Content("answer")))
	c, _ := newTestClient(t, srv.URL, nil)
	ctx, _, reader := telemetered(t, false)
	if res := c.Chat(ctx, chatRequest()); res.Err != nil {
		t.Fatal(res.Err)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			case metricdata.Histogram[int64]:
				for _, p := range d.DataPoints {
					typ, _ := p.Attributes.Value(attribute.Key("gen_ai.token.type"))
					got[m.Name+" "+typ.AsString()] += p.Sum
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += int64(p.Count)
				}
			}
		}
	}
	want := map[string]int64{"arbiter.calls": 1, "arbiter.rate_limits": 1, "arbiter.calls.in_flight": 0,
		"gen_ai.client.token.usage input": 120, "gen_ai.client.token.usage output": 30, "gen_ai.client.operation.duration": 1}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %d, want %d (all: %v)", k, got[k], v, got)
		}
	}
}

// TestNoTelemetryNoSpan: without telemetry in the context a call starts no
// span and allocates nothing for one.
func TestNoTelemetryNoSpan(t *testing.T) {
	ctx := context.Background()
	if allocs := testing.AllocsPerRun(100, func() {
		_, span := spanOf(ctx, "intention:ada", "intention", 1, Params{Model: "m"})
		if span != nil {
			t.Fatal("a span without telemetry")
		}
		telemetry.Attempt(ctx, "ep", 1, false)
	}); allocs != 0 {
		t.Errorf("%v allocations per call without telemetry, want 0", allocs)
	}
}

// TestBatchCallSpansNameTheJob: the span of a call sent in a Batch API job
// names the job (arbiter.batch_job): answered by it, repaired live after
// it, or made live because its line failed; a live call's names none.
func TestBatchCallSpansNameTheJob(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	c, _ := newTestClient(t, srv.URL, nil)
	ctx, rec, _ := telemetered(t, false)
	results, err := c.CompleteBatch(ctx, "intention", batchRequests("ada", "bob", "cy"), BatchJob{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range results {
		if r.Err != nil {
			t.Fatalf("%s: %v", r.Request.EntityKey, r.Err)
		}
	}
	if res := c.Complete(ctx, batchRequests("dee")[0]); res.Err != nil {
		t.Fatal(res.Err)
	}
	jobs := map[string]string{}
	for _, s := range rec.Ended() {
		var entity, job string
		for _, a := range s.Attributes() {
			switch a.Key {
			case "arbiter.entity":
				entity = a.Value.AsString()
			case "arbiter.batch_job":
				job = a.Value.AsString()
			}
		}
		jobs[entity] = job
	}
	want := map[string]string{"intention:ada": "batch_1", "intention:bob": "batch_1", "intention:cy": "batch_1", "intention:dee": ""}
	if fmt.Sprint(jobs) != fmt.Sprint(want) {
		t.Errorf("batch_job by call: %v, want %v", jobs, want)
	}
}
