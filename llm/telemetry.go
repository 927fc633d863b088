package llm

import (
	"context"
	"time"

	"github.com/arbiter-sim/arbiter/telemetry"
	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/otel/attribute"
)

// spanOf starts the span of a call of entity in phase at tick with
// params; nil when ctx has no telemetry.
func spanOf(ctx context.Context, entity, phase string, tick int, p Params) (context.Context, *telemetry.CallSpan) {
	return telemetry.StartCall(ctx, telemetry.Call{Operation: "chat", Model: p.Model, Entity: entity, Phase: phase,
		Tick: tick, Temperature: p.Temperature, MaxTokens: p.MaxTokens})
}

// called is what a call's span is told as the call ends.
type called struct {
	model     string // the model the last answer names
	baseURL   string // the endpoint's of the last attempt
	finish    string
	toolCalls []string
	answer    string
	msgs      []Message // the prompt of the last attempt
}

// saw notes answer ans to prompt msgs, whose attempts went through rt
// (how may be nil: no span).
func (how *called) saw(ans answer, rt route, msgs []Message) {
	if how == nil {
		return
	}
	how.model, how.finish, how.answer, how.msgs = ans.model, string(ans.finish), ans.content, msgs
	if rt.last != nil {
		how.baseURL = rt.last.baseURL
	}
}

// sent notes the response resp, whose attempts went through rt (how may
// be nil: no span).
func (how *called) sent(resp openai.ChatCompletionResponse, rt route) {
	if how == nil {
		return
	}
	how.model = resp.Model
	if len(resp.Choices) > 0 {
		how.finish = string(resp.Choices[0].FinishReason)
	}
	if rt.last != nil {
		how.baseURL = rt.last.baseURL
	}
}

// endSpan ends span, the span of a call, with d and how it was answered;
// with its prompt and answer when the span carries content, scrubbed of
// every key the client holds.
func (c *Client) endSpan(ctx context.Context, span *telemetry.CallSpan, d telemetry.Done, how called) {
	if span == nil {
		return
	}
	d.ResponseModel, d.BaseURL, d.FinishReason, d.ToolCalls = how.model, how.baseURL, how.finish, how.toolCalls
	if d.Err != nil {
		d.ErrType = ErrorKindOf(d.Err).String()
	}
	if telemetry.From(ctx).Content() {
		scrub := c.class.secrets.Scrub
		d.Prompt = make([]telemetry.Message, len(how.msgs))
		for i, m := range how.msgs {
			d.Prompt[i] = telemetry.Message{Role: m.Role, Content: scrub(m.Content)}
		}
		d.Answer = scrub(how.answer)
	}
	span.End(ctx, d)
}

// done is what a call that ended with usage u after attempts and repairs,
// latency long, at endpoint (failing at failed), tells its span.
func done(u Usage, attempts, repairs int, long time.Duration, endpoint string, failed []string, err error) telemetry.Done {
	return telemetry.Done{Attempts: attempts, Repairs: repairs, Latency: long, Endpoint: endpoint, EndpointFailures: failed,
		InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, CachedTokens: u.CachedTokens, Err: err}
}

// spanFailed adds seed 002's TOOL_FAILURE of the call of ctx to its span,
// with the fields of the event log's line.
func spanFailed(ctx context.Context, e *Error) {
	entity := ""
	if c, ok := ctx.Value(callKey{}).(*watchedCall); ok {
		entity = c.entity
	}
	telemetry.AddEvent(ctx, "TOOL_FAILURE", attribute.String("tool", entity), attribute.String("error", e.Error()),
		attribute.String("kind", e.Kind.String()), attribute.Int("attempt", e.Attempts))
}

// spanRecovered adds seed 002's RECOVERY_ATTEMPT to the call's span.
func spanRecovered(ctx context.Context, r Recovery) {
	telemetry.AddEvent(ctx, "RECOVERY_ATTEMPT", attribute.String("strategy", r.Strategy), attribute.Bool("success", r.Success))
}
