package llm

import (
	"context"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// ChatRequest is one plain-text turn of a conversation the caller owns and
// sends whole: no schema, no history of the client's own.
type ChatRequest struct {
	EntityKey string // names the conversation in logs, e.g. "chronicle:demo"
	Phase     string // e.g. "chat": which endpoints answer it (phases.<name>.endpoints)
	Params    Params
	Messages  []Message // system, user and assistant turns, oldest first
}

// ChatResult is the model's answer to a ChatRequest. Err is nil on success,
// in which case Content holds the answer; after finish_reason=length Err is
// ErrTruncated and Content holds the text that came before the cut (the
// caller may keep it, marked as cut). Attempts, Latency and Usage are filled
// in either way.
type ChatResult struct {
	Request  ChatRequest
	Content  string
	Attempts int
	Latency  time.Duration
	Usage    Usage
	Err      error // *Error when the call failed
	// Endpoint names the endpoint the last attempt went to, and
	// EndpointFailures the endpoints that failed an attempt, as Result's.
	Endpoint         string
	EndpointFailures []string
	// PromptTruncated and ContextTokens are Result's.
	PromptTruncated bool
	ContextTokens   int
	// Recoveries are the transient failures the call was retried past or
	// tried to, in order, as Result's are (seed 002: each is emitted).
	Recoveries []Recovery
}

// Chat asks for the next assistant message of a plain-text conversation,
// with the same retries and error classification as Complete. A refusal, an
// answer cut off at the token limit (finish_reason=length) and an empty
// answer are errors; only the cut answer keeps its text in Content.
func (c *Client) Chat(ctx context.Context, req ChatRequest) ChatResult {
	ctx, span := spanOf(ctx, req.EntityKey, req.Phase, 0, req.Params)
	if span == nil {
		return c.chat(ctx, req, nil)
	}
	how := &called{msgs: req.Messages}
	res := c.chat(ctx, req, how)
	how.answer = res.Content
	c.endSpan(ctx, span, done(res.Usage, res.Attempts, 0, res.Latency, res.Endpoint, res.EndpointFailures, res.Err), *how)
	return res
}

// chat is Chat; how, when not nil, is told of the answer for the call's
// span.
func (c *Client) chat(ctx context.Context, req ChatRequest, how *called) (res ChatResult) {
	start := time.Now()
	res.Request = req
	ctx = watchCall(ctx, req.EntityKey)
	defer func() {
		res.Latency = time.Since(start)
		tellFinal(ctx, res.Err)
	}()
	if req.Params.Model == "" || len(req.Messages) == 0 {
		res.Err = &Error{Kind: KindBadRequest, Message: "chat request of " + req.EntityKey + " needs a model (set llm.model) and at least one message"}
		return res
	}
	cr := openai.ChatCompletionRequest{
		Model:       req.Params.Model,
		Messages:    make([]openai.ChatCompletionMessage, len(req.Messages)),
		Temperature: req.Params.Temperature,
		MaxTokens:   req.Params.MaxTokens,
	}
	for i, m := range req.Messages {
		cr.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	resp, rt, usage, callErr := c.create(ctx, c.log.With("entity", req.EntityKey, "phase", req.Phase), &res.Recoveries, callSite{Entity: req.EntityKey, Phase: req.Phase}, "", cr)
	res.Usage, res.Endpoint, res.EndpointFailures = usage, rt.endpoint(), rt.failed
	res.PromptTruncated, res.ContextTokens = rt.truncated, rt.window.Tokens
	n := rt.attempts
	res.Attempts = n
	how.sent(resp, rt)
	if callErr != nil {
		res.Err = callErr
		return res
	}
	res.Content, res.Err = chatAnswer(resp, req.Params.MaxTokens, n)
	return res
}

// chatAnswer checks a plain-text reply in the order refusal, finish_reason,
// content.
func chatAnswer(resp openai.ChatCompletionResponse, maxTokens, attempts int) (string, error) {
	if len(resp.Choices) == 0 {
		return "", &Error{Kind: KindUnknown, Attempts: attempts, Message: "answer has no choices"}
	}
	ch := resp.Choices[0]
	if e := stopError(ch.Message.Refusal, ch.FinishReason, maxTokens); e != nil {
		e.Attempts = attempts
		if e.Kind == KindTruncated {
			return ch.Message.Content, e
		}
		return "", e
	}
	switch {
	case ch.Message.Content == "" && len(ch.Message.ToolCalls) > 0:
		return "", &Error{Kind: KindUnknown, Attempts: attempts, Message: "answer is a tool call instead of a message"}
	case ch.Message.Content == "":
		return "", &Error{Kind: KindUnknown, Attempts: attempts, Message: "answer is empty"}
	}
	return ch.Message.Content, nil
}
