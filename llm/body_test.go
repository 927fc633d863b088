package llm

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

// structured is a request of the shape ChatCompletion builds.
func structured(model, system, user string, temp float32, maxTokens int, schema json.RawMessage) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{Model: model, Temperature: temp, MaxTokens: maxTokens,
		Messages: []openai.ChatCompletionMessage{{Role: "system", Content: system}, {Role: "user", Content: user}},
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "S", Schema: schema, Strict: true}}}
}

// TestBodyIsGoOpenAIs: the body encoded for a request of ChatCompletion's
// shape is go-openai's encoding of it, byte for byte (HTML characters,
// U+2028, invalid UTF-8, a schema with spaces to compact, omitted and
// zero fields), and what go-openai is left to check keeps the fields it
// checks; a request setting anything else is left to go-openai.
func TestBodyIsGoOpenAIs(t *testing.T) {
	t.Parallel()
	schema := json.RawMessage(`{"type": "object", "description": "<a> & \u2028"}`)
	reasoning := structured("o3", "s", "u", 0, 0, schema)
	reasoning.MaxCompletionTokens = 300
	described := structured("m", "s", "", 0.5, 10, schema)
	described.ResponseFormat.JSONSchema.Description = "why <this>"
	for name, cr := range map[string]openai.ChatCompletionRequest{
		"structured":      structured("test-model", "You are <Ada> & \"friends\"\n\ttabs \u2028 é", "go", 0.7, 256, schema),
		"bad UTF-8":       structured("m", "a\xffb", "\x00", 1.25, 1, schema),
		"reasoning":       reasoning,
		"description":     described,
		"no schema":       {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user"}}, ResponseFormat: &openai.ChatCompletionResponseFormat{Type: "json_object"}},
		"nil messages":    {Model: "m"},
		"no messages":     {Model: "m", Messages: []openai.ChatCompletionMessage{}},
		"schema interior": {Model: "m", ResponseFormat: &openai.ChatCompletionResponseFormat{JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{}}},
	} {
		want, err := json.Marshal(cr)
		if err != nil {
			t.Fatal(err)
		}
		body, rest, ok := requestBody(cr)
		if !ok || string(body) != string(want) {
			t.Errorf("%s: ok %v, body\n%s\nwant (go-openai)\n%s", name, ok, body, want)
		}
		if rest.Messages != nil || rest.ResponseFormat != nil || rest.Model != cr.Model || rest.MaxTokens != cr.MaxTokens ||
			rest.MaxCompletionTokens != cr.MaxCompletionTokens || rest.Temperature != cr.Temperature {
			t.Errorf("%s: left to go-openai %+v", name, rest)
		}
	}
	seed := 1
	for name, cr := range map[string]openai.ChatCompletionRequest{
		"stream":   {Model: "m", Stream: true},
		"seed":     {Model: "m", Seed: &seed},
		"tools":    {Model: "m", ToolChoice: "auto"},
		"name":     {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x", Name: "ada"}}},
		"parts":    {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{}}}},
		"tool id":  {Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "tool", Content: "x", ToolCallID: "c"}}},
		"bad JSON": structured("m", "s", "u", 0, 0, json.RawMessage(`{`)),
	} {
		if body, rest, ok := requestBody(cr); ok || body != nil || !sameRequest(rest, cr) {
			t.Errorf("%s: encoded here (ok %v, %s), want it left to go-openai whole", name, ok, body)
		}
	}
}

// sameRequest tells whether a and b encode alike (or fail alike).
func sameRequest(a, b openai.ChatCompletionRequest) bool {
	ja, ea := json.Marshal(a)
	jb, eb := json.Marshal(b)
	return bytes.Equal(ja, jb) && (ea == nil) == (eb == nil)
}

// FuzzRequestBody: for any texts, model, limits and schema, the body
// encoded here is go-openai's, or the request is left to go-openai.
func FuzzRequestBody(f *testing.F) {
	f.Add("m", "You are <Ada> & co", "go \u2028", float32(0.7), 256, []byte(`{"type": "object"}`))
	f.Add("", "", "", float32(0), 0, []byte(`null`))
	f.Fuzz(func(t *testing.T, model, system, user string, temp float32, maxTokens int, schema []byte) {
		cr := structured(model, system, user, temp, maxTokens, schema)
		want, err := json.Marshal(cr)
		body, _, ok := requestBody(cr)
		if ok && (err != nil || string(body) != string(want)) {
			t.Errorf("body\n%s\nwant (go-openai, err %v)\n%s", body, err, want)
		}
		if !ok && err == nil {
			t.Errorf("left to go-openai, which encodes it")
		}
	})
}

// TestRetriedBodyIsSentWhole: the body a request's context carries is
// what reaches the server, with its length, on every attempt (a retry
// after a 500 reads it again), and go-openai's placeholder is not sent.
func TestRetriedBodyIsSentWhole(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(openaitest.Status(http.StatusInternalServerError, "server_error", "", "busy"), openaitest.JSON(validAnswer)))
	c, _ := newTestClient(t, srv.URL, nil)
	if res := c.Complete(t.Context(), testRequest("hello <there>")); res.Err != nil {
		t.Fatal(res.Err)
	}
	calls := srv.Calls()
	if len(calls) != 2 {
		t.Fatalf("%d calls, want 2", len(calls))
	}
	want, _ := json.Marshal(ChatCompletion(testRequest("hello <there>"), Messages(testRequest("hello <there>"), nil, 0)))
	for i, call := range calls {
		if string(call.Body) != string(want) {
			t.Errorf("attempt %d sent\n%s\nwant\n%s", i+1, call.Body, want)
		}
	}

	// The transport leaves the request it is given as it was.
	req, _ := http.NewRequestWithContext(withRequestBody(t.Context(), []byte("{}")), http.MethodPost, srv.URL, bytes.NewReader([]byte("x")))
	sent := withBody(req)
	b, _ := io.ReadAll(sent.Body)
	if string(b) != "{}" || sent.ContentLength != 2 || req.ContentLength != 1 || sent == req {
		t.Errorf("sent %q (length %d), the request given now has length %d", b, sent.ContentLength, req.ContentLength)
	}
}
