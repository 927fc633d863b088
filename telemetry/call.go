package telemetry

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"
	"sync"
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
	t    *Telemetry
	span trace.Span
	call Call
	// filed is set when the span is under its tick's phase's, which says
	// the call's tick and phase for it.
	filed bool
}

// callStart are the options a call's span starts with. Its attributes are
// all set as it ends, in one go: the SDK then copies them once.
var callStart = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}

// StartCall starts the span of call c, under its phase's span when ctx
// holds the run's Ticks and c names its tick and phase, else under the
// span of ctx. It returns nil (on which End does nothing) when ctx has
// no Telemetry.
func StartCall(ctx context.Context, c Call) (context.Context, *CallSpan) {
	t := From(ctx)
	if t == nil {
		return ctx, nil
	}
	s := &CallSpan{t: t, call: c}
	if t.tracing() {
		ctx, s.filed = callParent(ctx, c.Tick, c.Phase)
		ctx, s.span = t.tracer.Start(ctx, c.Operation+" "+c.Model, callStart...)
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
	buf := attrBuffers.Get().(*[]attribute.KeyValue)
	attrs := s.t.callAttributes((*buf)[:0], s.call, s.filed, d)
	if s.t.content && d.Prompt != nil {
		attrs = append(attrs, semconv.GenAIInputMessagesKey.String(messagesJSON(d.Prompt)))
	}
	if s.t.content && d.Answer != "" {
		attrs = append(attrs, semconv.GenAIOutputMessagesKey.String(messagesJSON([]Message{{Role: "assistant", Content: d.Answer}})))
	}
	if d.Err != nil {
		attrs = append(attrs, semconv.ErrorTypeKey.String(d.ErrType))
		s.span.SetStatus(codes.Error, d.Err.Error())
	}
	s.span.SetAttributes(attrs...) // copied by the span
	clear(attrs)
	*buf = attrs[:0]
	attrBuffers.Put(buf)
	s.span.End()
}

// attrBuffers hold the attributes of calls' spans as they end, so that a
// call allocates none for them.
var attrBuffers = sync.Pool{New: func() any {
	b := make([]attribute.KeyValue, 0, 24)
	return &b
}}

// callAttributes appends to attrs the attributes of the span of call c
// that ended as d says; its tick and phase when the span is not filed
// under its phase's. What a call most often is (one attempt, an answer
// that stopped) is left unsaid: every attribute costs the export of every
// call, and OTLP's encoding of a string list (finish reasons) the most.
func (t *Telemetry) callAttributes(attrs []attribute.KeyValue, c Call, filed bool, d Done) []attribute.KeyValue {
	attrs = append(attrs, semconv.GenAIOperationNameKey.String(c.Operation), semconv.GenAIRequestModel(c.Model),
		KeyEntity.String(c.Entity),
		semconv.GenAIUsageInputTokens(d.InputTokens), semconv.GenAIUsageOutputTokens(d.OutputTokens))
	if !filed && c.Tick > 0 {
		attrs = append(attrs, KeyTick.Int(c.Tick))
	}
	if !filed && c.Phase != "" {
		attrs = append(attrs, KeyPhase.String(c.Phase))
	}
	if d.Attempts > 1 {
		attrs = append(attrs, KeyAttempts.Int(d.Attempts))
	}
	if c.Temperature != 0 {
		attrs = append(attrs, semconv.GenAIRequestTemperature(float64(c.Temperature)))
	}
	if c.MaxTokens > 0 {
		attrs = append(attrs, semconv.GenAIRequestMaxTokens(c.MaxTokens))
	}
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
	attrs = append(attrs, t.server(d.BaseURL)...)
	if d.FinishReason != "" && d.FinishReason != "stop" {
		attrs = append(attrs, finishReasons(d.FinishReason))
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

// finishReasonAttrs are gen_ai.response.finish_reasons of the reasons
// OpenAI's API gives, made once: a string slice attribute is copied into
// an array made by reflection.
var finishReasonAttrs = func() map[string]attribute.KeyValue {
	m := map[string]attribute.KeyValue{}
	for _, r := range []string{"stop", "length", "tool_calls", "content_filter", "function_call"} {
		m[r] = semconv.GenAIResponseFinishReasons(r)
	}
	return m
}()

// finishReasons is the gen_ai.response.finish_reasons of reason.
func finishReasons(reason string) attribute.KeyValue {
	if kv, ok := finishReasonAttrs[reason]; ok {
		return kv
	}
	return semconv.GenAIResponseFinishReasons(reason)
}

// server returns the server.address and server.port of base URL raw
// (none when it has no host), parsed once per URL: a process's base URLs
// are its endpoints'.
func (t *Telemetry) server(raw string) []attribute.KeyValue {
	if raw == "" {
		return nil
	}
	if v, ok := t.servers.Load(raw); ok {
		return v.([]attribute.KeyValue)
	}
	var kv []attribute.KeyValue
	if host, port, ok := server(raw); ok {
		kv = []attribute.KeyValue{semconv.ServerAddress(host), semconv.ServerPort(port)}
	}
	t.servers.Store(raw, kv)
	return kv
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
