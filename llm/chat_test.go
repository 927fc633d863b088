package llm

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

func chatRequest() ChatRequest {
	return ChatRequest{
		EntityKey: "chronicle:test",
		Params:    Params{Model: "test-model", Temperature: 0.8, MaxTokens: 300},
		Messages: []Message{
			{Role: "system", Content: "You build a history with the user."},
			{Role: "user", Content: "Let's start."},
			{Role: "assistant", Content: "CREATE PERIOD Dawn FIRST TONE light DESCRIPTION The start."},
			{Role: "user", Content: "System: ⚠️ Command parsing error: Missing required field TONE\n\nTry again."},
		},
	}
}

func TestChatAnswers(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("CREATE PERIOD Dusk LAST TONE dark DESCRIPTION The end.")))
	c, _ := newTestClient(t, srv.URL, nil)
	req := chatRequest()

	res := c.Chat(t.Context(), req)
	if res.Err != nil || res.Content != "CREATE PERIOD Dusk LAST TONE dark DESCRIPTION The end." {
		t.Fatalf("Chat = %q, %v", res.Content, res.Err)
	}
	if res.Attempts != 1 || res.Latency <= 0 || res.Usage != (Usage{120, 30, 64}) || c.Usage() != res.Usage {
		t.Errorf("Attempts %d, Latency %v, Usage %+v, client %+v", res.Attempts, res.Latency, res.Usage, c.Usage())
	}
	call := srv.Calls()[0]
	if call.Request.ResponseFormat != nil || len(call.Request.Tools) != 0 {
		t.Errorf("plain chat sent response_format %+v, tools %+v", call.Request.ResponseFormat, call.Request.Tools)
	}
	got := call.Messages()
	if len(got) != len(req.Messages) {
		t.Fatalf("sent %d messages, want %d", len(got), len(req.Messages))
	}
	for i, m := range req.Messages {
		if got[i].Role != m.Role || got[i].Content != m.Content {
			t.Errorf("message %d = %s %q, want %s %q", i, got[i].Role, got[i].Content, m.Role, m.Content)
		}
	}
	if call.Request.Model != "test-model" || call.Request.MaxTokens != 300 || call.Request.Temperature != 0.8 {
		t.Errorf("params sent: model %q, max_tokens %d, temperature %v", call.Request.Model, call.Request.MaxTokens, call.Request.Temperature)
	}
}

func TestChatRetriesTransientErrors(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Status(500, "server_error", "", "boom"),
		openaitest.Content("Hello."),
	))
	c, waits := newTestClient(t, srv.URL, nil)
	res := c.Chat(t.Context(), chatRequest())
	if res.Err != nil || res.Content != "Hello." || res.Attempts != 2 || len(waits.all()) != 1 {
		t.Errorf("Chat = %q, %v, attempts %d, waits %v", res.Content, res.Err, res.Attempts, waits.all())
	}
}

func TestChatMaxCompletionTokensForReasoningModels(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("ok")))
	c, _ := newTestClient(t, srv.URL, nil)
	req := chatRequest()
	req.Params = Params{Model: "o3-mini", MaxTokens: 512}
	if res := c.Chat(t.Context(), req); res.Err != nil {
		t.Fatal(res.Err)
	}
	var wire map[string]any
	if err := json.Unmarshal(srv.Calls()[0].Body, &wire); err != nil {
		t.Fatal(err)
	}
	if wire["max_completion_tokens"] != 512.0 || wire["max_tokens"] != nil {
		t.Errorf("max_completion_tokens = %v, max_tokens = %v", wire["max_completion_tokens"], wire["max_tokens"])
	}
}

func TestChatFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		reply    openaitest.Reply
		kind     error
		attempts int
		message  string
	}{
		{"refusal", openaitest.Refusal("I can't help with that."), ErrRefusal, 1, "model refused: I can't help with that."},
		{"content filter", openaitest.Content("").WithFinishReason(openai.FinishReasonContentFilter), ErrRefusal, 1, "answer withheld by the server's content filter"},
		{"truncated", openaitest.Truncated("CREATE PERIOD Dusk LAST TONE da"), ErrTruncated, 1, "max_tokens=300; raise it"},
		{"empty", openaitest.Content(""), &Error{Kind: KindUnknown}, 1, "answer is empty"},
		{"tool call", openaitest.ToolCalls(openaitest.Tool("1", "f", "{}")), &Error{Kind: KindUnknown}, 1, "answer is a tool call instead of a message"},
		{"401", openaitest.Status(401, "invalid_request_error", "invalid_api_key", "bad key"), ErrAuth, 1, "401 unauthorized"},
		{"500 until MaxAttempts", openaitest.Status(500, "server_error", "", "boom"), ErrServer, 2, "500 internal server error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := openaitest.New(t, openaitest.Always(tc.reply))
			c, _ := newTestClient(t, srv.URL, nil)
			res := c.Chat(t.Context(), chatRequest())
			if !errors.Is(res.Err, tc.kind) || !strings.Contains(res.Err.Error(), tc.message) {
				t.Errorf("Err = %v (%s), want kind %s containing %q", res.Err, ErrorKindOf(res.Err), ErrorKindOf(tc.kind), tc.message)
			}
			wantContent := ""
			if tc.name == "truncated" { // the text before the cut is kept for the caller
				wantContent = "CREATE PERIOD Dusk LAST TONE da"
			}
			if res.Content != wantContent || res.Attempts != tc.attempts {
				t.Errorf("Content %q, Attempts %d; want %q, %d", res.Content, res.Attempts, wantContent, tc.attempts)
			}
		})
	}
}

func TestChatBadRequestSendsNothing(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c, _ := newTestClient(t, srv.URL, nil)
	for _, req := range []ChatRequest{
		{EntityKey: "no model", Messages: []Message{{Role: "user", Content: "hi"}}},
		{EntityKey: "no messages", Params: Params{Model: "m"}},
	} {
		if res := c.Chat(t.Context(), req); !errors.Is(res.Err, ErrBadRequest) || res.Attempts != 0 {
			t.Errorf("%s: Err = %v, Attempts %d", req.EntityKey, res.Err, res.Attempts)
		}
	}
	if srv.CallCount() != 0 {
		t.Errorf("%d calls sent", srv.CallCount())
	}
}

func TestChatCanceled(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil)
	c, _ := newTestClient(t, srv.URL, nil)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if res := c.Chat(ctx, chatRequest()); !errors.Is(res.Err, ErrCanceled) || srv.CallCount() != 0 {
		t.Errorf("Err = %v, calls %d", res.Err, srv.CallCount())
	}
}
