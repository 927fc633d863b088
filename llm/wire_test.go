package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

// seen is what a server received of one request.
type seen struct {
	body                      string
	auth, contentType, accept string
	path                      string
}

// againstGoOpenAI sends cr to a server that answers status and body, once
// by go-openai's CreateChatCompletion and once by postChat, and returns
// what the server saw and what each got back.
func againstGoOpenAI(t *testing.T, cr openai.ChatCompletionRequest, status int, body string) (want, got seen, wantResp, gotResp openai.ChatCompletionResponse, wantErr, gotErr error) {
	t.Helper()
	var last seen
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		last = seen{string(b), r.Header.Get("Authorization"), r.Header.Get("Content-Type"), r.Header.Get("Accept"), r.URL.Path}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)

	oc := openai.DefaultConfig("sk-wire")
	oc.BaseURL = srv.URL + "/v1"
	wantResp, wantErr = openai.NewClientWithConfig(oc).CreateChatCompletion(t.Context(), cr)
	want = last
	c, err := New(Config{BaseURL: srv.URL + "/v1", APIKey: "sk-wire"})
	if err != nil {
		t.Fatal(err)
	}
	gotResp, gotErr = c.postChat(t.Context(), cr)
	got = last
	wantResp.SetHeader(nil) // postChat keeps no headers; nothing reads them
	return want, got, wantResp, gotResp, wantErr, gotErr
}

func wireRequests() map[string]openai.ChatCompletionRequest {
	schema := json.RawMessage(`{"type": "object", "properties": {"a": {"type": "string"}}}`)
	return map[string]openai.ChatCompletionRequest{
		"structured": {
			Model: "m", Temperature: 0.7, MaxTokens: 256,
			Messages: []openai.ChatCompletionMessage{
				{Role: "system", Content: "You are <Ada> & \"friends\"\n\ttabs \u2028 é"},
				{Role: "user", Content: "past"}, {Role: "assistant", Content: `{"a":"b"}`},
				{Role: "user", Content: ""},
			},
			ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
				JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "s", Schema: schema, Strict: true}},
		},
		"tools": {
			Model: "m", MaxCompletionTokens: 10,
			Messages: []openai.ChatCompletionMessage{
				{Role: "user", Content: "move", Name: "ada"},
				{Role: "assistant", ToolCalls: []openai.ToolCall{{ID: "c1", Type: openai.ToolTypeFunction,
					Function: openai.FunctionCall{Name: "move", Arguments: `{"to":"x"}`}}}},
				{Role: "tool", Content: "done", ToolCallID: "c1"},
			},
			Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "move", Parameters: schema}}},
		},
		"content parts": {
			Model: "m",
			Messages: []openai.ChatCompletionMessage{{Role: "user", MultiContent: []openai.ChatMessagePart{
				{Type: openai.ChatMessagePartTypeText, Text: "hi"}}}},
		},
	}
}

// TestPostChatAsGoOpenAI: postChat sends the very bytes and headers
// go-openai sends, to the same path, and returns the same response and
// the same errors, for answers of every kind.
func TestPostChatAsGoOpenAI(t *testing.T) {
	t.Parallel()
	answers := []struct {
		name   string
		status int
		body   string
	}{
		{"answer", 200, `{"id":"x","object":"chat.completion","created":7,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":\"\\u00e9\"}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`},
		{"refusal and tool calls", 200, `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"no","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls","logprobs":null}]}`},
		{"content as parts", 200, `{"choices":[{"message":{"role":"assistant","content":[{"type":"text","text":"hi"}]}}]}`},
		{"data after the answer", 200, `{"choices":[]} trailing`},
		{"not JSON", 200, `<html>proxy</html>`},
		{"wrong type", 200, `{"choices":[{"index":"zero"}]}`},
		{"API error", 400, `{"error":{"message":"bad schema","type":"invalid_request_error","param":"response_format","code":null}}`},
		{"error without an error object", 502, `Bad Gateway`},
		{"error object of the wrong shape", 500, `{"error":"boom"}`},
		{"empty error body", 503, ``},
	}
	for name, cr := range wireRequests() {
		for _, a := range answers {
			t.Run(name+"/"+a.name, func(t *testing.T) {
				t.Parallel()
				want, got, wantResp, gotResp, wantErr, gotErr := againstGoOpenAI(t, cr, a.status, a.body)
				if got != want {
					t.Errorf("server saw\n%+v\nwant (go-openai)\n%+v", got, want)
				}
				if !reflect.DeepEqual(gotResp, wantResp) {
					t.Errorf("response\n%+v\nwant\n%+v", gotResp, wantResp)
				}
				if !reflect.DeepEqual(gotErr, wantErr) {
					t.Errorf("error %#v (%v)\nwant %#v (%v)", gotErr, gotErr, wantErr, wantErr)
				}
			})
		}
	}
}

// TestPostChatRefusesWhatGoOpenAIRefuses: requests go-openai would not
// send are not sent, with its errors, which the classifier knows.
func TestPostChatRefusesWhatGoOpenAIRefuses(t *testing.T) {
	t.Parallel()
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls++ }))
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}
	for _, tt := range []struct {
		cr   openai.ChatCompletionRequest
		want error
	}{
		{openai.ChatCompletionRequest{Model: "m", Messages: msgs, Stream: true}, openai.ErrChatCompletionStreamNotSupported},
		{openai.ChatCompletionRequest{Model: "o1", Messages: msgs, MaxTokens: 5}, openai.ErrReasoningModelMaxTokensDeprecated},
		{openai.ChatCompletionRequest{Model: "m", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x",
			MultiContent: []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: "y"}}}}}, openai.ErrContentFieldsMisused},
	} {
		if _, err := c.postChat(t.Context(), tt.cr); !errors.Is(err, tt.want) {
			t.Errorf("%+v: err %v, want %v", tt.cr, err, tt.want)
		}
	}
	if calls != 0 {
		t.Errorf("%d requests reached the server", calls)
	}
}

// FuzzDecodeChat: whatever a server answers, decodeChat returns what
// go-openai's decoding returns, response and error.
func FuzzDecodeChat(f *testing.F) {
	f.Add([]byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"a\":1}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3}}`))
	f.Add([]byte(`{"choices":[{"message":{"content":[{"type":"text","text":"hi"}]}}]}`))
	f.Add([]byte(`{"choices":[{"message":{"MultiContent":[{"type":"text"}],"content":"x"}}]}`))
	f.Add([]byte(`{"choices":[{"message":null}]} {}`))
	f.Add([]byte(`{"choices":[{"message":{"tool_calls":[{"function":{"name":1}}]}}]}`))
	// What servers send, which decodeChatAnswer reads, and near misses.
	f.Add([]byte(`{"id":"chatcmpl-1","object":"chat.completion","created":1732400000,"model":"m","system_fingerprint":"fp_ollama",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"{\"intention\":\"I \u00e9 \ud83d\ude00 go\"}","refusal":null},` +
		`"finish_reason":"stop","logprobs":null}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,` +
		`"prompt_tokens_details":{"cached_tokens":4,"audio_tokens":0}},"service_tier":"default"}`))
	f.Add([]byte(` { "choices" : [ ] , "usage" : { "prompt_tokens" : -0 } } `))
	f.Add([]byte(`{"choices":[{"index":1.0}]}`))
	f.Add([]byte(`{"created":1e3}`))
	f.Add([]byte(`{"id":"a","id":"b"}`))
	f.Add([]byte(`{"usage":{"prompt_tokens":1},"usage":{"completion_tokens":2}}`))
	f.Add([]byte(`{"ID":"x","choices":[{"message":{"Content":"y"}}]}`))
	f.Add([]byte(`{"\u0069d":"x","choices":[{"message":{"content":null}}]}`))
	f.Add([]byte(`{"usage":{"prompt_tokens_details":null,"total_tokens":99999999999999999999}}`))
	f.Add([]byte("{\"model\":\"\xff\"}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		var want openai.ChatCompletionResponse
		wantErr := json.NewDecoder(bytes.NewReader(body)).Decode(&want)
		got, gotErr := decodeChat(body)
		if (gotErr == nil) != (wantErr == nil) || (gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("error %v, want %v", gotErr, wantErr)
		}
		if wantErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decoded\n%#v\nwant\n%#v", got, want)
		}
	})
}

// TestWireTypesMatchGoOpenAI: the types decodeChat reads a choice and its
// message into have go-openai's fields, in its order, with its JSON names:
// a field go-openai adds would otherwise be dropped without a word (the
// message's conversion is checked by the compiler, a choice's is not).
func TestWireTypesMatchGoOpenAI(t *testing.T) {
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[wireChoice](), reflect.TypeFor[openai.ChatCompletionChoice]()},
		{reflect.TypeFor[wireAnswerMessage](), reflect.TypeFor[openai.ChatCompletionMessage]()},
		{reflect.TypeFor[wireMessage](), reflect.TypeFor[openai.ChatCompletionMessage]()},
	} {
		ours, theirs := pair[0], pair[1]
		if ours.NumField() != theirs.NumField() {
			t.Errorf("%v has %d fields, %v %d", ours, ours.NumField(), theirs, theirs.NumField())
			continue
		}
		for i := range ours.NumField() {
			if o, g := ours.Field(i), theirs.Field(i); o.Name != g.Name {
				t.Errorf("%v field %d is %s, %v's %s", ours, i, o.Name, theirs, g.Name)
			}
		}
	}
	for i := range reflect.TypeFor[wireChoice]().NumField() {
		if got, want := reflect.TypeFor[wireChoice]().Field(i).Tag, reflect.TypeFor[openai.ChatCompletionChoice]().Field(i).Tag; got != want {
			t.Errorf("choice field %d: tag %q, go-openai's %q", i, got, want)
		}
	}
}

// TestSentBodyOutlivesItsReaders: a request body's buffer goes back to the
// pool only when the sender released it and every reader net/http was
// given has been written whole; a failed write leaves its reader counted
// (net/http may write it again). (Not parallel: a released buffer may be
// taken again.)
func TestSentBodyOutlivesItsReaders(t *testing.T) {
	b := newSentBody()
	b.buf.WriteString(`{"model":"m"}`)
	first := b.reader()
	second, err := b.getBody() // a retry on another connection
	if err != nil {
		t.Fatal(err)
	}
	b.release() // the sender is done: the answer came before the body was sent
	b.wrote(httptrace.WroteRequestInfo{Err: io.ErrClosedPipe})
	first.Close() // a no-op: net/http closes what it wrote, or not
	if got, _ := io.ReadAll(second); string(got) != `{"model":"m"}` {
		t.Fatalf("a reader not yet written read %q", got)
	}
	b.wrote(httptrace.WroteRequestInfo{}) // first, written at last
	if b.refs.Load() != 1 || b.buf.Len() == 0 {
		t.Fatalf("released with a reader to write: %d references, %d bytes", b.refs.Load(), b.buf.Len())
	}
	b.wrote(httptrace.WroteRequestInfo{})
	if b.refs.Load() != 0 || b.buf.Len() != 0 {
		t.Errorf("not released when the last reader was written: %d references, %d bytes", b.refs.Load(), b.buf.Len())
	}
}

// TestPostChatReleasesItsBodies: postChat sends a body net/http knows to
// be in memory (which it sends with the headers in one system call, and
// any other in two), and each goes back to the pool once written and
// answered. (Not parallel: it counts every body released.)
func TestPostChatReleasesItsBodies(t *testing.T) {
	if got, want := reflect.TypeOf(newSentBody().reader()), reflect.TypeOf(io.NopCloser(bytes.NewReader(nil))); got != want {
		t.Errorf("body of type %s; want %s, of a *bytes.Reader", got, want)
	}
	var released atomic.Int32
	testHookBodyReleased = func(pooled bool) {
		if pooled {
			released.Add(1)
		}
	}
	t.Cleanup(func() { testHookBodyReleased = func(bool) {} })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			t.Error(err)
		}
		io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"{}"}}]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	// A trace of the caller's own still sees its events.
	var wrote atomic.Int32
	ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { wrote.Add(1) }})
	for range 20 {
		if _, err := c.postChat(ctx, wireRequests()["structured"]); err != nil {
			t.Fatal(err)
		}
	}
	if released.Load() < 20 || wrote.Load() != 20 {
		t.Errorf("%d bodies released and %d writes traced after 20 calls; want 20 of each", released.Load(), wrote.Load())
	}
}

// TestPostChatRedirected: a request redirected still gets its answer (307
// sends the body again, as net/http does), and its body is left to the
// collector, since a redirect's write reports to the same trace while the
// first may still be sending it; past 10 redirects the call fails as
// net/http's default client fails it. (Not parallel: it counts every body
// released.)
func TestPostChatRedirected(t *testing.T) {
	var pooled, abandoned atomic.Int32
	testHookBodyReleased = func(p bool) {
		if p {
			pooled.Add(1)
		} else {
			abandoned.Add(1)
		}
	}
	t.Cleanup(func() { testHookBodyReleased = func(bool) {} })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/v1/chat/completions":
			http.Redirect(w, r, "/v2/chat/completions", http.StatusTemporaryRedirect)
		case r.URL.Path == "/v2/chat/completions" && len(body) > 0:
			io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"{}"}}]}`)
		default: // /loop
			http.Redirect(w, r, "/loop/chat/completions", http.StatusTemporaryRedirect)
		}
	}))
	t.Cleanup(srv.Close)
	c, err := New(Config{BaseURL: srv.URL + "/v1"})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.postChat(t.Context(), wireRequests()["structured"])
	if err != nil || len(resp.Choices) != 1 {
		t.Fatalf("redirected call: %+v, %v", resp, err)
	}
	if pooled.Load() != 0 || abandoned.Load() != 1 {
		t.Errorf("%d bodies pooled and %d left to the collector; want the redirected one left", pooled.Load(), abandoned.Load())
	}
	loop, err := New(Config{BaseURL: srv.URL + "/loop"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loop.postChat(t.Context(), wireRequests()["structured"]); err == nil || !strings.Contains(err.Error(), "stopped after 10 redirects") {
		t.Errorf("a redirect loop: %v; want net/http's %q", err, "stopped after 10 redirects")
	}
}
