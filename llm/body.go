package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"

	openai "github.com/sashabaranov/go-openai"
)

// go-openai encodes each message with a MarshalJSON of its own, whose
// output encoding/json then scans and copies again, and it encoded every
// character's prompt and past exchanges that way: a ninth of the engine's
// CPU and a sixth of the bytes it allocated at 10,000 characters. A call
// of the shape ChatCompletion builds (messages of a role and a content, a
// json_schema response format) is encoded here in one pass instead, into
// the same bytes (TestBodyIsGoOpenAIs), and go-openai sends it with its
// own headers, URL, errors and decoding of the answer: it is given the
// request without its messages and response format, and the transport puts
// the body back (withBody). Any other request is go-openai's to encode.

// A bodyMessage, bodyFormat and bodyRequest are go-openai's message,
// response format and request, as far as ChatCompletion sets them, with
// the same JSON names in the same order.
type bodyMessage struct {
	Role    string `json:"role"`
	Content string `json:"content,omitempty"`
}

type bodyFormat struct {
	Type       openai.ChatCompletionResponseFormatType `json:"type,omitempty"`
	JSONSchema *bodySchema                             `json:"json_schema,omitempty"`
}

type bodySchema struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Schema      json.Marshaler `json:"schema"`
	Strict      bool           `json:"strict"`
}

type bodyRequest struct {
	Model               string        `json:"model"`
	Messages            []bodyMessage `json:"messages"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	Temperature         float32       `json:"temperature,omitempty"`
	Stream              bool          `json:"stream"`
	ResponseFormat      *bodyFormat   `json:"response_format,omitempty"`
}

// requestBody returns the body go-openai would send for cr and cr without
// what that body holds beyond go-openai's checks (its messages and
// response format); ok is false when cr sets anything bodyRequest does not
// hold.
func requestBody(cr openai.ChatCompletionRequest) (body []byte, rest openai.ChatCompletionRequest, ok bool) {
	rest = cr
	rest.Messages, rest.ResponseFormat = nil, nil
	other := rest
	other.Model, other.MaxTokens, other.MaxCompletionTokens, other.Temperature = "", 0, 0, 0
	if !reflect.ValueOf(other).IsZero() {
		return nil, cr, false
	}
	br := bodyRequest{Model: cr.Model, MaxTokens: cr.MaxTokens, MaxCompletionTokens: cr.MaxCompletionTokens, Temperature: cr.Temperature}
	if cr.Messages != nil {
		br.Messages = make([]bodyMessage, len(cr.Messages))
	}
	for i, m := range cr.Messages {
		br.Messages[i] = bodyMessage{Role: m.Role, Content: m.Content}
		m.Role, m.Content = "", ""
		if !reflect.ValueOf(m).IsZero() {
			return nil, cr, false
		}
	}
	if rf := cr.ResponseFormat; rf != nil {
		br.ResponseFormat = &bodyFormat{Type: rf.Type}
		if s := rf.JSONSchema; s != nil {
			br.ResponseFormat.JSONSchema = &bodySchema{Name: s.Name, Description: s.Description, Schema: s.Schema, Strict: s.Strict}
		}
	}
	body, err := json.Marshal(br)
	if err != nil { // go-openai's encoding says why
		return nil, cr, false
	}
	return body, rest, true
}

// bodyKey carries the body of a request in its context, for the transport.
type bodyKey struct{}

func withRequestBody(ctx context.Context, body []byte) context.Context {
	return context.WithValue(ctx, bodyKey{}, body)
}

// withBody is req with the body its context carries, if any; req itself is
// left as it is (a RoundTripper does not change its request).
func withBody(req *http.Request) *http.Request {
	body, ok := req.Context().Value(bodyKey{}).([]byte)
	if !ok {
		return req
	}
	if req.Body != nil {
		req.Body.Close()
	}
	r := *req
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	return &r
}
