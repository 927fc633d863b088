package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	openai "github.com/sashabaranov/go-openai"
)

// create sends one chat completion with the client's retries and counts its
// usage; every kind of call (structured, plain chat, tools) goes through it,
// and through the cassette when the client has one (who names the call
// there). An attempt goes to another endpoint than the one named avoid
// while one is in (a repair is asked of another than the endpoint whose
// answer it repairs). It returns the response, where its attempts went
// (and whether the prompt filled the model's context there), the usage of
// every answer received, and the classified error.
func (c *Client) create(ctx context.Context, log *slog.Logger, recs *[]Recovery, who callSite, avoid string, cr openai.ChatCompletionRequest) (openai.ChatCompletionResponse, route, Usage, *Error) {
	cr = fitMaxTokens(cr)
	if c.cfg.Cassette == nil {
		return c.live(ctx, log, recs, who.Phase, avoid, cr)
	}
	resp, rt, usage, err := c.taped(ctx, log, recs, who, avoid, cr)
	if err == nil && rt.last == nil {
		// Replayed: only the configuration knows the context.
		rt.window = c.poolOf(who.Phase)[0].windows.set
		rt.truncated = rt.window.Reached(usageOf(resp.Usage))
	}
	return resp, rt, usage, err
}

// live sends cr to an endpoint of phase, as create says; an endpoint's
// Model replaces cr's. An answer without choices is no chat completion:
// the endpoint failed it, as it fails a body that is not one.
func (c *Client) live(ctx context.Context, log *slog.Logger, recs *[]Recovery, phase, avoid string, cr openai.ChatCompletionRequest) (openai.ChatCompletionResponse, route, Usage, *Error) {
	var (
		resp  openai.ChatCompletionResponse
		usage Usage
	)
	limit := c.cfg.responseLimit(max(cr.MaxTokens, cr.MaxCompletionTokens))
	pool := c.poolOf(phase)
	cost := 0
	if slices.ContainsFunc(pool, func(ep *endpoint) bool { return ep.pacer.countsTokens() }) {
		cost = estimateTokens(cr)
	}
	note := new(serverNote)
	rt, err := c.retry(withNote(withLimit(ctx, limit), note), log, recs, pool, cost, avoid, func(ctx context.Context, ep *endpoint) error {
		sent := cr
		sent.Model = servedModel(ep, cr.Model)
		if body, rest, ok := requestBody(sent); ok {
			ctx, sent = withRequestBody(ctx, body), rest
		}
		r, err := ep.oa.CreateChatCompletion(ctx, sent)
		if err != nil {
			return err
		}
		u := usageOf(r.Usage)
		usage = usage.Add(u)
		c.usage.add(u)
		ep.usage.add(u)
		if len(r.Choices) == 0 {
			return ep.class.badResponse(nil, "a chat completion without choices")
		}
		resp = r
		return nil
	})
	if err == nil {
		rt.window = rt.last.window(ctx, servedModel(rt.last, cr.Model), resp.SystemFingerprint)
		rt.truncated = note.truncated.Load() || rt.window.Reached(usageOf(resp.Usage))
	}
	return resp, rt, usage, err
}

// fitMaxTokens returns cr for its model: max_tokens is what Ollama, vLLM
// and llama.cpp understand; OpenAI's reasoning models accept only
// max_completion_tokens.
func fitMaxTokens(cr openai.ChatCompletionRequest) openai.ChatCompletionRequest {
	if errors.Is(openai.NewReasoningValidator().Validate(cr), openai.ErrReasoningModelMaxTokensDeprecated) {
		cr.MaxCompletionTokens, cr.MaxTokens = cr.MaxTokens, 0
	}
	return cr
}

// stopError is the error of an answer the model did not finish on its own
// terms: a refusal, the content filter, or the token limit; nil otherwise.
func stopError(refusal string, finish openai.FinishReason, maxTokens int) *Error {
	switch {
	case refusal != "":
		return &Error{Kind: KindRefusal, Message: "model refused: " + oneLine(refusal)}
	case finish == openai.FinishReasonContentFilter:
		return &Error{Kind: KindRefusal, Message: "answer withheld by the server's content filter"}
	case finish == openai.FinishReasonLength:
		e := &Error{Kind: KindTruncated, Message: "answer cut off at the token limit, finish_reason=length",
			Hint: "raise max_tokens"}
		if maxTokens > 0 {
			e.Hint = fmt.Sprintf("max_tokens=%d; raise it", maxTokens)
		}
		return e
	}
	return nil
}
