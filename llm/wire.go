package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptrace"
	"slices"
	"sync"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"
)

// postChat sends cr to the endpoint's /chat/completions through the client's
// transport and decodes the answer, as go-openai's CreateChatCompletion
// does and with its types and errors (an *openai.APIError or
// *openai.RequestError for an HTTP error answer, which the classifier
// reads), but in about half its work: go-openai marshals every message by
// its own MarshalJSON, which encoding/json then scans and compacts a second
// time, and decodes every answer's message twice the same way. At tens of
// thousands of calls a tick that was an eighth of the engine's CPU.
func (c *Client) postChat(ctx context.Context, cr openai.ChatCompletionRequest) (openai.ChatCompletionResponse, error) {
	var resp openai.ChatCompletionResponse
	if cr.Stream {
		return resp, openai.ErrChatCompletionStreamNotSupported
	}
	if err := openai.NewReasoningValidator().Validate(cr); err != nil {
		return resp, err
	}
	body := newSentBody()
	defer body.release()
	if err := encodeChat(body.buf, cr); err != nil {
		return resp, err
	}
	ctx = httptrace.WithClientTrace(context.WithValue(ctx, sentBodyKey{}, body), &httptrace.ClientTrace{WroteRequest: body.wrote})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.cfg.BaseURL+"/chat/completions", nil)
	if err != nil {
		return resp, err
	}
	req.Body, req.GetBody, req.ContentLength = body.reader(), body.getBody, int64(body.buf.Len())
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", "application/json")
	if c.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	read := answerBodies.Get().(*bytes.Buffer)
	hr, answer, err := c.http.fetchInto(req, read)
	if err != nil {
		return resp, err
	}
	if hr.StatusCode < http.StatusOK || hr.StatusCode >= http.StatusBadRequest {
		return resp, errorAnswer(hr, answer) // which keeps the body: read is not reused
	}
	resp, err = decodeChat(answer) // which keeps copies of what it reads
	if read.Cap() <= maxPooledBody {
		answerBodies.Put(read)
	}
	return resp, err
}

// answerBodies holds the buffers answers were read into, once decoded: a
// tick reads an answer for every call, and each was a new buffer.
var answerBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// wireMessage is openai.ChatCompletionMessage without its MarshalJSON and
// UnmarshalJSON, encoded as that MarshalJSON encodes a message with no
// MultiContent. The conversion between the two fails to compile if
// go-openai changes the message's fields.
type wireMessage struct {
	Role             string                   `json:"role"`
	Content          string                   `json:"content,omitempty"`
	Refusal          string                   `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart `json:"-"`
	Name             string                   `json:"name,omitempty"`
	ReasoningContent string                   `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall     `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall        `json:"tool_calls,omitempty"`
	ToolCallID       string                   `json:"tool_call_id,omitempty"`
}

// wireRequest is a request whose messages encode as wireMessages: the
// outer fields hide the embedded ones from encoding/json. Model is there
// only to keep go-openai's order of the fields, model then messages.
type wireRequest struct {
	Model    string        `json:"model"`
	Messages []wireMessage `json:"messages"`
	openai.ChatCompletionRequest
}

// encodeChat writes cr to buf as go-openai encodes it, byte for byte.
func encodeChat(buf *bytes.Buffer, cr openai.ChatCompletionRequest) error {
	if plainMessages(cr.Messages) {
		return encodePlain(buf, cr)
	}
	return encodeWire(buf, cr)
}

// encodeWire is encodeChat by encoding/json alone.
func encodeWire(buf *bytes.Buffer, cr openai.ChatCompletionRequest) error {
	var v any = cr // content parts: go-openai's own encoding
	if !slices.ContainsFunc(cr.Messages, func(m openai.ChatCompletionMessage) bool { return m.MultiContent != nil }) {
		w := wireRequest{Model: cr.Model, Messages: make([]wireMessage, len(cr.Messages)), ChatCompletionRequest: cr}
		for i, m := range cr.Messages {
			w.Messages[i] = wireMessage(m)
		}
		v = w
	}
	// An Encoder writes into buf where Marshal would return a copy.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		return err
	}
	buf.Truncate(buf.Len() - 1) // the newline Encode ends with, which Marshal does not write
	return nil
}

// sentBodies holds the buffers of request bodies sent and done with: a
// tick encodes a request for every call, and allocating each anew was a
// seventh of the bytes the engine allocated.
var sentBodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBody is the largest buffer sentBodies keeps.
const maxPooledBody = 1 << 20

// sentBody is the encoded body of one request, in a buffer from
// sentBodies. It returns there only when nothing can read it any more: the
// sender is done (release), and each reader net/http was given has been
// written whole (wrote), which may happen after the answer arrived.
//
// The readers are io.NopCloser(*bytes.Reader), which net/http knows to be
// in memory and sends with the headers in one system call; a reader of
// its own type, whose Close would tell when it was done, took two. It
// reads a body only while writing a request, and reports the end of each
// write to the request's httptrace.ClientTrace.WroteRequest. A failed write
// is not counted, so a buffer whose write failed is left to the collector:
// net/http may write that very reader again. A redirect's request reports
// its write to the same trace, even one without a body while the first
// connection may still be sending it (a server may answer early): a body
// redirected is left to the collector too (abandonOnRedirect).
type sentBody struct {
	buf       *bytes.Buffer
	refs      atomic.Int32 // the sender's, and one per reader not written yet
	abandoned atomic.Bool  // redirected: never back to the pool
}

// sentBodyKey carries a request's sentBody in its context, for
// abandonOnRedirect.
type sentBodyKey struct{}

// abandonOnRedirect is the client's CheckRedirect: net/http's own rule (at
// most 10 redirects), and a request body redirected is not pooled again.
func abandonOnRedirect(req *http.Request, via []*http.Request) error {
	if b, ok := via[0].Context().Value(sentBodyKey{}).(*sentBody); ok {
		b.abandoned.Store(true)
	}
	if len(via) >= 10 {
		return errors.New("stopped after 10 redirects") // net/http's words
	}
	return nil
}

func newSentBody() *sentBody {
	b := &sentBody{buf: sentBodies.Get().(*bytes.Buffer)}
	b.refs.Store(1)
	return b
}

// release drops one reference; the last returns the buffer.
func (b *sentBody) release() {
	if b.refs.Add(-1) == 0 {
		pooled := b.buf.Cap() <= maxPooledBody && !b.abandoned.Load()
		testHookBodyReleased(pooled)
		if pooled {
			b.buf.Reset()
			sentBodies.Put(b.buf)
		}
	}
}

// testHookBodyReleased is called as a body's last reference goes, with
// whether its buffer goes back to the pool.
var testHookBodyReleased = func(pooled bool) {}

// reader is a reader of the body for a request's Body.
func (b *sentBody) reader() io.ReadCloser {
	b.refs.Add(1)
	return io.NopCloser(bytes.NewReader(b.buf.Bytes()))
}

// getBody is the request's GetBody, with which net/http sends the body
// again (a redirect, a reused connection that closed).
func (b *sentBody) getBody() (io.ReadCloser, error) { return b.reader(), nil }

// wrote is the request's ClientTrace.WroteRequest.
func (b *sentBody) wrote(info httptrace.WroteRequestInfo) {
	if info.Err == nil {
		b.release()
	}
}

// wireAnswer is an openai.ChatCompletionResponse whose choices' messages
// decode without go-openai's UnmarshalJSON, which decodes each a second
// time.
type wireAnswer struct {
	openai.ChatCompletionResponse
	Choices []wireChoice `json:"choices"`
}

type wireChoice struct {
	Index                int                         `json:"index"`
	Message              wireAnswerMessage           `json:"message"`
	FinishReason         openai.FinishReason         `json:"finish_reason"`
	LogProbs             *openai.LogProbs            `json:"logprobs,omitempty"`
	ContentFilterResults openai.ContentFilterResults `json:"content_filter_results,omitempty"`
}

// wireAnswerMessage decodes a message as go-openai's UnmarshalJSON first
// tries to, "content" a string; when that fails, so does decodeChat's
// short way.
type wireAnswerMessage struct {
	Role             string `json:"role"`
	Content          string `json:"content"`
	Refusal          string `json:"refusal,omitempty"`
	MultiContent     []openai.ChatMessagePart
	Name             string               `json:"name,omitempty"`
	ReasoningContent string               `json:"reasoning_content,omitempty"`
	FunctionCall     *openai.FunctionCall `json:"function_call,omitempty"`
	ToolCalls        []openai.ToolCall    `json:"tool_calls,omitempty"`
	ToolCallID       string               `json:"tool_call_id,omitempty"`
}

// decodeChat decodes a chat completion answer: one of the usual shape
// without reflection (decodeChatAnswer), another by encoding/json into
// wireAnswer. An answer neither way reads (a message whose content is an
// array of parts, data after the object) is decoded as go-openai decodes
// it, whose error, if any, is the one returned.
func decodeChat(body []byte) (openai.ChatCompletionResponse, error) {
	if resp, ok := decodeChatAnswer(body); ok {
		return resp, nil
	}
	var w wireAnswer
	if err := json.Unmarshal(body, &w); err != nil {
		var resp openai.ChatCompletionResponse
		err := json.NewDecoder(bytes.NewReader(body)).Decode(&resp)
		return resp, err
	}
	resp := w.ChatCompletionResponse
	if w.Choices != nil { // nil stays nil, as go-openai leaves it
		resp.Choices = make([]openai.ChatCompletionChoice, len(w.Choices))
	}
	for i, ch := range w.Choices {
		resp.Choices[i] = openai.ChatCompletionChoice{Index: ch.Index, Message: openai.ChatCompletionMessage(ch.Message),
			FinishReason: ch.FinishReason, LogProbs: ch.LogProbs, ContentFilterResults: ch.ContentFilterResults}
	}
	return resp, nil
}

// errorAnswer is the error of an HTTP error answer, as go-openai makes it:
// the body's "error" object with the status, else a RequestError holding
// the body.
func errorAnswer(hr *http.Response, body []byte) error {
	var er openai.ErrorResponse
	err := json.Unmarshal(body, &er)
	if err != nil || er.Error == nil {
		re := &openai.RequestError{HTTPStatus: hr.Status, HTTPStatusCode: hr.StatusCode, Err: err, Body: body}
		if er.Error != nil {
			re.Err = er.Error
		}
		return re
	}
	er.Error.HTTPStatus, er.Error.HTTPStatusCode = hr.Status, hr.StatusCode
	return er.Error
}
