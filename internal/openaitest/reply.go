package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// DefaultUsage is the usage reported by every successful reply unless
// WithUsage says otherwise.
var DefaultUsage = openai.Usage{
	PromptTokens:        120,
	CompletionTokens:    30,
	TotalTokens:         150,
	PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 64},
}

// Reply is the scripted answer to one request. Build it with one of the
// constructors below and refine it with the With* methods.
type Reply struct {
	status     int
	header     http.Header
	message    openai.ChatCompletionMessage
	finish     openai.FinishReason
	usage      openai.Usage
	apiErr     *openai.APIError
	raw        string
	rawType    string
	hang       bool
	disconnect bool
	delay      time.Duration
	done       <-chan struct{} // set by the server: closed when it shuts down
	// fingerprint is the answer's system_fingerprint, set by the server
	// (see Ollama).
	fingerprint string
}

// Content answers with an assistant message holding s, finish_reason "stop".
func Content(s string) Reply {
	return Reply{
		status:  http.StatusOK,
		message: openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: s},
		finish:  openai.FinishReasonStop,
		usage:   DefaultUsage,
	}
}

// JSON answers with v encoded as JSON in the message content. It panics when v
// cannot be encoded, which is a mistake in the test.
func JSON(v any) Reply {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("openaitest.JSON: %v", err))
	}
	return Content(string(b))
}

// Refusal answers with message.refusal set and no content.
func Refusal(text string) Reply {
	r := Content("")
	r.message.Refusal = text
	return r
}

// Truncated answers with content cut off by the token limit
// (finish_reason "length").
func Truncated(content string) Reply {
	return Content(content).WithFinishReason(openai.FinishReasonLength)
}

// ToolCalls answers with an assistant message calling tools
// (finish_reason "tool_calls").
func ToolCalls(calls ...openai.ToolCall) Reply {
	r := Content("")
	r.message.ToolCalls = calls
	r.finish = openai.FinishReasonToolCalls
	return r
}

// Tool builds a function tool call with args encoded as JSON (a string is
// sent as is).
func Tool(id, name string, args any) openai.ToolCall {
	s, ok := args.(string)
	if !ok {
		b, err := json.Marshal(args)
		if err != nil {
			panic(fmt.Sprintf("openaitest.Tool: %v", err))
		}
		s = string(b)
	}
	return openai.ToolCall{ID: id, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: name, Arguments: s}}
}

// Status answers with an HTTP error in the OpenAI error format:
// {"error": {"message": msg, "type": errType, "code": code}}. An empty code is
// left out.
func Status(status int, errType, code, msg string) Reply {
	e := &openai.APIError{Message: msg, Type: errType}
	if code != "" {
		e.Code = code
	}
	return Reply{status: status, apiErr: e}
}

// Raw answers with a body as is, e.g. an HTML error page from a proxy.
func Raw(status int, contentType, body string) Reply {
	return Reply{status: status, raw: body, rawType: contentType}
}

// Hang never answers: it blocks until the client gives up (its request
// context ends) or the server shuts down.
func Hang() Reply { return Reply{hang: true} }

// Disconnect closes the connection without answering.
func Disconnect() Reply { return Reply{disconnect: true} }

// WithHeader adds a response header, e.g. WithHeader("Retry-After", "1").
func (r Reply) WithHeader(key, value string) Reply {
	h := r.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Add(key, value)
	r.header = h
	return r
}

// WithUsage replaces the usage reported.
func (r Reply) WithUsage(u openai.Usage) Reply {
	r.usage = u
	return r
}

// WithFinishReason replaces the finish_reason.
func (r Reply) WithFinishReason(f openai.FinishReason) Reply {
	r.finish = f
	return r
}

// WithDelay waits d before answering (less if the client gives up first).
func (r Reply) WithDelay(d time.Duration) Reply {
	r.delay = d
	return r
}

// write writes the reply and reports whether the client still waited for
// it as it was written: false for a hang, a disconnect, and a client that
// gave up (its timeout) first. (Afterwards the request's context says
// nothing: a client may close the connection once it has read the answer.)
func (r Reply) write(w http.ResponseWriter, req *http.Request, model string) bool {
	if r.delay > 0 {
		t := time.NewTimer(r.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-req.Context().Done():
			return false
		case <-r.done:
			return false
		}
	}
	switch {
	case r.hang:
		select {
		case <-req.Context().Done():
		case <-r.done:
		}
		return false
	case r.disconnect:
		hj, ok := w.(http.Hijacker)
		if !ok {
			panic("openaitest: response writer cannot be hijacked")
		}
		conn, _, err := hj.Hijack()
		if err == nil {
			_ = conn.Close()
		}
		return false
	}
	waiting := req.Context().Err() == nil
	switch {
	case r.apiErr != nil:
		writeJSON(w, r.status, r.header, openai.ErrorResponse{Error: r.apiErr})
	case r.rawType != "" || r.raw != "":
		for k, vs := range r.header {
			w.Header()[k] = vs
		}
		w.Header().Set("Content-Type", r.rawType)
		w.WriteHeader(r.status)
		_, _ = w.Write([]byte(r.raw))
	default:
		writeJSON(w, r.status, r.header, openai.ChatCompletionResponse{
			ID:      "chatcmpl-openaitest",
			Object:  "chat.completion",
			Created: time.Now().Unix(),
			Model:   model,
			Choices: []openai.ChatCompletionChoice{{Message: r.message, FinishReason: r.finish}},
			Usage:   r.usage,

			SystemFingerprint: r.fingerprint,
		})
	}
	return waiting
}
