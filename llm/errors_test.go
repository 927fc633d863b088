package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

func TestKindString(t *testing.T) {
	t.Parallel()
	want := map[ErrorKind]string{
		KindUnknown: "unknown", KindTimeout: "timeout", KindRateLimit: "rate_limit", KindQuota: "quota",
		KindServer: "server", KindConnection: "connection", KindCanceled: "canceled", KindRefusal: "refusal",
		KindTruncated: "truncated", KindInvalidJSON: "invalid_json", KindSchema: "schema", KindAuth: "auth",
		KindBadRequest: "bad_request", KindNotFound: "not_found", KindSchemaInvalid: "schema_invalid", KindOversized: "oversized", KindCassette: "cassette", KindBadResponse: "bad_response", ErrorKind(99): "kind(99)",
	}
	for k, s := range want {
		if k.String() != s {
			t.Errorf("Kind(%d).String() = %q, want %q", int(k), k.String(), s)
		}
	}
	if len(kindNames) != len(want)-1 {
		t.Errorf("%d kinds named, %d tested", len(kindNames), len(want)-1)
	}
}

func TestErrorIsMatchesKind(t *testing.T) {
	t.Parallel()
	cause := &openai.APIError{HTTPStatusCode: 400, Message: "bad"}
	err := fmt.Errorf("tick 3, location common: %w", &Error{Kind: KindSchema, Message: "answer does not match", Err: cause})
	if !errors.Is(err, ErrSchema) {
		t.Error("errors.Is(err, ErrSchema) = false")
	}
	if errors.Is(err, ErrInvalidJSON) || errors.Is(err, ErrTimeout) {
		t.Error("a schema error matches another kind")
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not reachable through Unwrap")
	}
	if ErrorKindOf(err) != KindSchema || ErrorKindOf(errors.New("x")) != KindUnknown || ErrorKindOf(nil) != KindUnknown {
		t.Error("KindOf")
	}
}

func TestErrorText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *Error
		want string
	}{
		{&Error{Message: "connection refused to http://127.0.0.1:9/v1", Hint: "is the model server running?"},
			"connection refused to http://127.0.0.1:9/v1 (is the model server running?)"},
		{&Error{Message: "timeout after 30s waiting for http://h/v1", Attempts: 3}, "timeout after 30s waiting for http://h/v1 (3 attempts)"},
		{&Error{Message: "m", Attempts: 2, Hint: "h"}, "m (2 attempts; h)"},
		{&Error{Message: "m", Attempts: 1}, "m"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// timeoutErr is a net.Error that timed out.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassify(t *testing.T) {
	t.Parallel()
	cl := classifier{baseURL: "http://h:1/v1", timeout: 30 * time.Second}
	urlErr := func(err error) error { return &url.Error{Op: "Post", URL: "http://h:1/v1/chat/completions", Err: err} }
	opErr := func(err error) error { return urlErr(&net.OpError{Op: "dial", Net: "tcp", Err: err}) }
	tests := []struct {
		name string
		err  error
		kind ErrorKind
		text string // substring of Error()
	}{
		{"refused", opErr(&syscallErr{syscall.ECONNREFUSED}), KindConnection, "connection refused to http://h:1/v1"},
		{"reset", opErr(&syscallErr{syscall.ECONNRESET}), KindConnection, "closed before the answer"},
		{"eof", urlErr(io.EOF), KindConnection, "closed before the answer"},
		{"unexpected eof", io.ErrUnexpectedEOF, KindConnection, "closed before the answer"},
		{"dns", urlErr(&net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "h", IsNotFound: true}}), KindConnection, `cannot resolve host "h"`},
		{"other dial", opErr(errors.New("network is unreachable")), KindConnection, "cannot reach http://h:1/v1"},
		{"attempt deadline", urlErr(context.DeadlineExceeded), KindTimeout, "timeout after 30s waiting for http://h:1/v1"},
		{"net timeout", urlErr(timeoutErr{}), KindTimeout, "timeout after 30s"},
		{"408", &openai.APIError{HTTPStatusCode: 408}, KindTimeout, "408 request timeout"},
		{"529", &openai.RequestError{HTTPStatusCode: 529, Body: []byte("overloaded")}, KindServer, "529"},
		{"non-JSON 401", &openai.RequestError{HTTPStatusCode: 401, Body: []byte("<h1>nope</h1>")}, KindAuth, "401 unauthorized from http://h:1/v1: <h1>nope</h1>"},
		{"numeric code", &openai.APIError{HTTPStatusCode: 429, Code: 42, Message: "slow"}, KindRateLimit, "429 too many requests"},
		{"quota by type", &openai.APIError{HTTPStatusCode: 429, Type: "insufficient_quota"}, KindQuota, "billing"},
		{"reasoning params", fmt.Errorf("x: %w", openai.ErrReasoningModelLimitationsOther), KindBadRequest, "request not sent"},
		{"stream asked", openai.ErrChatCompletionStreamNotSupported, KindBadRequest, "request not sent"},
		{"content twice", fmt.Errorf("json: %w", openai.ErrContentFieldsMisused), KindBadRequest, "request not sent"},
		{"not an API response", &json.SyntaxError{}, KindBadResponse, "not an OpenAI-compatible response"},
		{"not a chat completion", &json.UnmarshalTypeError{Value: "array"}, KindBadResponse, "not an OpenAI-compatible response"},
		{"server closed idle connection", urlErr(errors.New("http: server closed idle connection")), KindConnection, "connection to http://h:1/v1 failed before an answer"},
		{"anything else", errors.New("weird"), KindUnknown, "failed: weird"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := cl.classify(context.Background(), tt.err)
			if e.Kind != tt.kind || !strings.Contains(e.Error(), tt.text) {
				t.Errorf("classify = %v %q, want %v containing %q", e.Kind, e.Error(), tt.kind, tt.text)
			}
			if !errors.Is(e, tt.err) {
				t.Error("the cause is lost")
			}
		})
	}

	t.Run("parent context", func(t *testing.T) {
		t.Parallel()
		canceled, cancel := context.WithCancel(context.Background())
		cancel()
		if e := cl.classify(canceled, urlErr(context.Canceled)); e.Kind != KindCanceled {
			t.Errorf("canceled parent: %v", e.Kind)
		}
		expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel2()
		if e := cl.classify(expired, urlErr(context.DeadlineExceeded)); e.Kind != KindTimeout || !strings.Contains(e.Error(), "deadline of the call") {
			t.Errorf("expired parent: %v %q", e.Kind, e)
		}
	})
}

// syscallErr wraps an errno the way os.SyscallError does.
type syscallErr struct{ errno syscall.Errno }

func (e *syscallErr) Error() string { return "connect: " + e.errno.Error() }
func (e *syscallErr) Unwrap() error { return e.errno }
