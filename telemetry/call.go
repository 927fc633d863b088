package telemetry

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Call is a model call as it starts.
type Call struct {
	Operation   string // gen_ai.operation.name: "chat"
	Model       string // asked for
	Entity      string // e.g. "intention:ada"
	Phase       string
	Tick        int // 0: not a tick's
	Temperature float32
	MaxTokens   int
}

// Message is one message of a call's prompt or answer, as
// gen_ai.input.messages lists them.
type Message struct {
	Role    string
	Content string
}

// Done is a model call as it ended.
type Done struct {
	ResponseModel    string
	Endpoint         string // its name, never its key
	BaseURL          string // of the endpoint that answered or failed last
	Attempts         int
	Repairs          int
	InputTokens      int
	OutputTokens     int
	CachedTokens     int
	FinishReason     string
	ToolCalls        []string // the tools the answer called, in order
	EndpointFailures []string
	BatchJob         string
	Latency          time.Duration
	// ErrType is the error's kind (timeout, rate_limit, schema, ...), ""
	// when the call succeeded; Err is the error.
	ErrType string
	Err     error
	// Prompt and Answer are the messages sent and the answer, for a span
	// that carries content (see Telemetry.Content).
	Prompt []Message
	Answer string
}

// CallSpan is the span of one model call; nil when telemetry is off.
type CallSpan struct {
	t     *Telemetry
	span  trace.Span
	call  Call
	start time.Time
}

// StartCall starts the span of call c, under its phase's span when ctx
// holds the run's Ticks and c names its tick and phase, else under the
// span of ctx. It returns nil (on which End does nothing) when ctx has
// no Telemetry.
func StartCall(ctx context.Context, c Call) (context.Context, *CallSpan) {
	t := From(ctx)
	if t == nil {
		return ctx, nil
	}
	s := &CallSpan{t: t, call: c, start: time.Now()}
	if t.tracing() {
		attrs := make([]attribute.KeyValue, 0, 8)
		attrs = append(attrs, semconv.GenAIOperationNameKey.String(c.Operation), semconv.GenAIRequestModel(c.Model),
			KeyEntity.String(c.Entity), KeyPhase.String(c.Phase))
		if c.Tick > 0 {
			attrs = append(attrs, KeyTick.Int(c.Tick))
		}
		if c.Temperature != 0 {
			attrs = append(attrs, semconv.GenAIRequestTemperature(float64(c.Temperature)))
		}
		if c.MaxTokens > 0 {
			attrs = append(attrs, semconv.GenAIRequestMaxTokens(c.MaxTokens))
		}
		ctx, s.span = t.tracer.Start(callParent(ctx, c.Tick, c.Phase), c.Operation+" "+c.Model,
			trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	}
	return ctx, s
}

// AddEvent adds the event name with attrs to the span of ctx when it
// records (a call's: a failed attempt, a repair asked for).
func AddEvent(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}

// End ends the call's span with what d says, and counts the call in the
// metrics.
func (s *CallSpan) End(ctx context.Context, d Done) {
	if s == nil {
		return
	}
	s.t.m.call(ctx, s.call, d)
	if s.span == nil {
		return
	}
	s.span.SetAttributes(doneAttributes(d)...)
	if s.t.content && d.Prompt != nil {
		s.span.SetAttributes(semconv.GenAIInputMessagesKey.String(messagesJSON(d.Prompt)))
	}
	if s.t.content && d.Answer != "" {
		s.span.SetAttributes(semconv.GenAIOutputMessagesKey.String(messagesJSON([]Message{{Role: "assistant", Content: d.Answer}})))
	}
	if d.Err != nil {
		s.span.SetAttributes(semconv.ErrorTypeKey.String(d.ErrType))
		s.span.SetStatus(codes.Error, d.Err.Error())
	}
	s.span.End()
}

// doneAttributes are the attributes of a call's span known when it ends.
func doneAttributes(d Done) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs,
		semconv.GenAIUsageInputTokens(d.InputTokens),
		semconv.GenAIUsageOutputTokens(d.OutputTokens),
		KeyAttempts.Int(d.Attempts))
	if d.ResponseModel != "" {
		attrs = append(attrs, semconv.GenAIResponseModel(d.ResponseModel))
	}
	if d.CachedTokens > 0 {
		attrs = append(attrs, semconv.GenAIUsageCacheReadInputTokens(d.CachedTokens))
	}
	if d.Repairs > 0 {
		attrs = append(attrs, KeyRepairs.Int(d.Repairs))
	}
	if d.Endpoint != "" {
		attrs = append(attrs, KeyEndpoint.String(d.Endpoint))
	}
	if host, port, ok := server(d.BaseURL); ok {
		attrs = append(attrs, semconv.ServerAddress(host), semconv.ServerPort(port))
	}
	if d.FinishReason != "" {
		attrs = append(attrs, semconv.GenAIResponseFinishReasons(d.FinishReason))
	}
	if len(d.ToolCalls) > 0 {
		attrs = append(attrs, attribute.StringSlice("arbiter.tool_calls", d.ToolCalls))
	}
	if len(d.EndpointFailures) > 0 {
		attrs = append(attrs, attribute.StringSlice("arbiter.endpoint_failures", d.EndpointFailures))
	}
	if d.BatchJob != "" {
		attrs = append(attrs, KeyBatchJob.String(d.BatchJob))
	}
	return attrs
}

// server is the host and port of base URL raw.
func server(raw string) (string, int, bool) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return "", 0, false
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		port = 80
		if u.Scheme == "https" {
			port = 443
		}
	}
	return u.Hostname(), port, true
}

// messagesJSON is msgs as gen_ai.input.messages and
// gen_ai.output.messages write them.
func messagesJSON(msgs []Message) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	type message struct {
		Role  string `json:"role"`
		Parts []part `json:"parts"`
	}
	out := make([]message, len(msgs))
	for i, m := range msgs {
		out[i] = message{Role: m.Role, Parts: []part{{Type: "text", Content: m.Content}}}
	}
	b, _ := json.Marshal(out)
	return string(b)
}
