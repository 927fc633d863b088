package openaitest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	openai "github.com/sashabaranov/go-openai"
)

func client(url string) *openai.Client {
	cfg := openai.DefaultConfig("sk-test")
	cfg.BaseURL = url
	return openai.NewClientWithConfig(cfg)
}

func chat(user string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model: "test-model",
		Messages: []openai.ChatCompletionMessage{
			{Role: "system", Content: "sys"},
			{Role: "user", Content: user},
		},
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name: "Thing", Strict: true, Schema: rawSchema(`{"type":"object"}`),
			},
		},
	}
}

type rawSchema string

func (r rawSchema) MarshalJSON() ([]byte, error) { return []byte(r), nil }

func TestRepliesAndRecording(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.JSON(map[string]int{"n": 1}),
		openaitest.Refusal("no"),
		openaitest.Truncated(`{"n":`),
		openaitest.ToolCalls(openaitest.Tool("call_1", "submit_orders", map[string]any{"orders": []string{}})),
		openaitest.Status(429, "insufficient_quota", "insufficient_quota", "quota").WithHeader("Retry-After", "1"),
	))
	c := client(srv.URL)
	ctx := t.Context()

	r, err := c.CreateChatCompletion(ctx, chat("first"))
	if err != nil || r.Choices[0].Message.Content != `{"n":1}` || r.Choices[0].FinishReason != "stop" {
		t.Fatalf("JSON reply: %+v, %v", r, err)
	}
	if u := r.Usage; u.PromptTokens == 0 || u.CompletionTokens == 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens ||
		u.PromptTokensDetails == nil || u.PromptTokensDetails.CachedTokens == 0 {
		t.Errorf("usage = %+v", u)
	}

	r, _ = c.CreateChatCompletion(ctx, chat("second"))
	if m := r.Choices[0].Message; m.Refusal != "no" || m.Content != "" {
		t.Errorf("refusal reply: %+v", m)
	}
	r, _ = c.CreateChatCompletion(ctx, chat("third"))
	if r.Choices[0].FinishReason != openai.FinishReasonLength || r.Choices[0].Message.Content != `{"n":` {
		t.Errorf("truncated reply: %+v", r.Choices[0])
	}
	r, _ = c.CreateChatCompletion(ctx, chat("fourth"))
	if ch := r.Choices[0]; ch.FinishReason != openai.FinishReasonToolCalls || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Arguments != `{"orders":[]}` {
		t.Errorf("tool call reply: %+v", ch)
	}
	for range 2 { // the last reply repeats
		_, err = c.CreateChatCompletion(ctx, chat("fifth"))
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 429 || apiErr.Code != "insufficient_quota" || apiErr.Type != "insufficient_quota" {
			t.Errorf("status reply: %v", err)
		}
	}

	calls := srv.Calls()
	if len(calls) != 6 || srv.CallCount() != 6 {
		t.Fatalf("%d calls recorded", len(calls))
	}
	if c0 := calls[0]; c0.N != 1 || c0.LastUserMessage() != "first" || c0.SystemMessage() != "sys" ||
		c0.SchemaName() != "Thing" || !c0.Strict() || string(c0.Schema()) != `{"type":"object"}` ||
		c0.Header.Get("Authorization") != "Bearer sk-test" || len(c0.Body) == 0 {
		t.Errorf("call 1 = %+v", c0)
	}
	if calls[5].N != 6 {
		t.Errorf("call 6 has N = %d", calls[5].N)
	}
}

func TestRetryAfterHeaderAndRaw(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Sequence(
		openaitest.Status(429, "requests", "rate_limit_exceeded", "slow down").WithHeader("Retry-After", "2"),
		openaitest.Raw(502, "text/html", "<h1>bad gateway</h1>"),
	))
	for i, want := range []struct {
		status int
		header string
	}{{429, "2"}, {502, ""}} {
		req, _ := http.NewRequestWithContext(t.Context(), "POST", srv.URL+"/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want.status || resp.Header.Get("Retry-After") != want.header {
			t.Errorf("reply %d: %d Retry-After %q", i, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
}

func TestHangEndsWithTheClient(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Hang()))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := client(srv.URL).CreateChatCompletion(ctx, chat("x"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v", err)
	}
}

func TestHangEndsWithTheServer(t *testing.T) {
	t.Parallel()
	// A hung request still in flight when the test ends must not block Cleanup.
	done := make(chan struct{})
	t.Run("server", func(t *testing.T) {
		arrived := make(chan struct{})
		srv := openaitest.New(t, func(*openaitest.Call) openaitest.Reply {
			close(arrived)
			return openaitest.Hang()
		})
		go func() {
			defer close(done)
			_, _ = client(srv.URL).CreateChatCompletion(context.Background(), chat("x"))
		}()
		<-arrived
	})
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the hung request outlived the server")
	}
}

func TestDisconnect(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Disconnect()))
	if _, err := client(srv.URL).CreateChatCompletion(t.Context(), chat("x")); err == nil {
		t.Error("no error after a dropped connection")
	}
}

func TestMaxInFlight(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Always(openaitest.Content("{}").WithDelay(30*time.Millisecond)))
	c := client(srv.URL)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() { _, _ = c.CreateChatCompletion(t.Context(), chat("x")) })
	}
	wg.Wait()
	if got := srv.MaxInFlight(); got < 2 || got > 4 {
		t.Errorf("MaxInFlight = %d", got)
	}
}

func TestMatchRoutes(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, openaitest.Match(
		openaitest.Always(openaitest.Content("fallback")),
		openaitest.Route{If: openaitest.UserContains("ada"), Then: openaitest.Sequence(openaitest.Content("ada 1"), openaitest.Content("ada 2"))},
	))
	c := client(srv.URL)
	var got []string
	for _, u := range []string{"ada", "bo", "ada", "ada"} {
		r, err := c.CreateChatCompletion(t.Context(), chat(u))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.Choices[0].Message.Content)
	}
	if want := "ada 1,fallback,ada 2,ada 2"; strings.Join(got, ",") != want {
		t.Errorf("replies = %s, want %s", strings.Join(got, ","), want)
	}
}

func TestModelsAndAuth(t *testing.T) {
	t.Parallel()
	srv := openaitest.New(t, nil, openaitest.WithModels("a", "b"), openaitest.WithAPIKey("sk-test"))
	list, err := client(srv.URL).ListModels(t.Context())
	if err != nil || len(list.Models) != 2 || list.Models[1].ID != "b" {
		t.Errorf("models = %+v, %v", list, err)
	}

	cfg := openai.DefaultConfig("sk-wrong")
	cfg.BaseURL = srv.URL
	_, err = openai.NewClientWithConfig(cfg).CreateChatCompletion(t.Context(), chat("x"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 401 {
		t.Errorf("wrong key: %v", err)
	}
	if srv.CallCount() != 0 {
		t.Error("an unauthorized request was recorded")
	}

	_, err = client(srv.URL).GetModel(t.Context(), "a")
	if !errors.As(err, &apiErr) || apiErr.HTTPStatusCode != 404 {
		t.Errorf("unknown route: %v", err)
	}
}

// TestDelivered: a reply counts as delivered when the client still waited
// for it: not one written after the client's timeout, nor a hang.
func TestDelivered(t *testing.T) {
	t.Parallel()
	var srv *openaitest.Server
	arrived := make(chan struct{})
	t.Run("server", func(t *testing.T) {
		srv = openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
			if c.N == 1 {
				return openaitest.Content("{}")
			}
			arrived <- struct{}{} // the client gives up once the call is here
			if c.N == 3 {
				return openaitest.Hang()
			}
			<-c.Context().Done() // answer only once the client has gone
			return openaitest.Content("{}")
		})
		c := client(srv.URL)
		if _, err := c.CreateChatCompletion(t.Context(), chat("read")); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			ctx, cancel := context.WithCancel(t.Context())
			go func() {
				<-arrived
				cancel()
			}()
			_, err := c.CreateChatCompletion(ctx, chat("late"))
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want the client's cancel", err)
			}
		}
	}) // the server closes here, once its handlers are done
	var got []bool
	for _, c := range srv.Calls() {
		got = append(got, c.Delivered())
	}
	if len(got) != 3 || !got[0] || got[1] || got[2] {
		t.Errorf("delivered = %v, want [true false false]", got)
	}
}
