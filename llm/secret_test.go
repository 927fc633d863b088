package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const (
	testKey      = "sk-live-Secret1234567890"
	testURLUser  = "alice"
	testURLPass  = "hunter2-pass"
	testUserInfo = testURLUser + ":" + testURLPass
)

// echoServer answers every request with status and a body repeating the
// request's Authorization header and URL, as some proxies do.
func echoServer(t *testing.T, status int) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, pass, _ := r.BasicAuth()
		msg := fmt.Sprintf("bad credentials: header %q user %q pass %q key %s", r.Header.Get("Authorization"), user, pass, testKey)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if status == http.StatusOK {
			json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": msg}}}})
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func withCreds(url string) string {
	return strings.Replace(url, "http://", "http://"+testUserInfo+"@", 1)
}

func assertNoSecret(t *testing.T, where, s string) {
	t.Helper()
	for _, secret := range []string{testKey, testURLPass, testUserInfo} {
		if strings.Contains(s, secret) {
			t.Errorf("%s leaks %q: %s", where, secret, s)
		}
	}
}

func TestSecretsScrubbedFromErrors(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusUnauthorized, http.StatusBadRequest, http.StatusInternalServerError, http.StatusOK} {
		t.Run(fmt.Sprint(status), func(t *testing.T) {
			t.Parallel()
			srv := echoServer(t, status)
			c, _ := newTestClient(t, withCreds(srv.URL)+"/v1", func(cfg *Config) { cfg.APIKey = testKey })
			res := c.Complete(context.Background(), testRequest("hello"))
			if res.Err == nil {
				t.Fatal("want an error")
			}
			assertNoSecret(t, "error", res.Err.Error())
			assertNoSecret(t, "raw answer", res.Raw)
			for i, r := range res.Recoveries {
				assertNoSecret(t, fmt.Sprintf("recovery %d", i), r.Err.Error())
			}
			for i, m := range res.Messages {
				assertNoSecret(t, fmt.Sprintf("message %d", i), m.Content)
			}
			if !strings.Contains(res.Err.Error()+res.Raw, Redacted) {
				t.Errorf("want %s in place of the secret, got error %q raw %q", Redacted, res.Err, res.Raw)
			}
			ch := c.Chat(context.Background(), ChatRequest{Params: Params{Model: "m"}, Messages: []Message{{Role: "user", Content: "hi"}}})
			if ch.Err != nil {
				assertNoSecret(t, "chat error", ch.Err.Error())
			}
			assertNoSecret(t, "chat content", ch.Content)
		})
	}
}

func TestSecretsScrubbedFromUnreachableURL(t *testing.T) {
	t.Parallel()
	c, _ := newTestClient(t, "http://"+testUserInfo+"@127.0.0.1:1/v1", func(cfg *Config) {
		cfg.APIKey = testKey
		cfg.MaxAttempts = 1
	})
	res := c.Complete(context.Background(), testRequest("hello"))
	if res.Err == nil {
		t.Fatal("want an error")
	}
	assertNoSecret(t, "error", res.Err.Error())
	if !strings.Contains(res.Err.Error(), "127.0.0.1:1") {
		t.Errorf("error should still name the host: %v", res.Err)
	}
}

func TestScrub(t *testing.T) {
	t.Parallel()
	s := NewSecrets(Config{APIKey: testKey, BaseURL: "https://" + testUserInfo + "@host.example/v1"})
	for _, tc := range []struct{ in, want string }{
		{"key " + testKey + " end", "key " + Redacted + " end"},
		{"url https://" + testUserInfo + "@host.example/v1", "url https://" + Redacted + "@host.example/v1"},
		{"pass=" + testURLPass, "pass=" + Redacted},
		{"nothing here", "nothing here"},
		// The user name alone is an ordinary word in a model's answer.
		{"The " + testURLUser + " opened the door", "The " + testURLUser + " opened the door"},
	} {
		if got := s.Scrub(tc.in); got != tc.want {
			t.Errorf("Scrub(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Too short to tell from ordinary text: left alone rather than
	// scrubbing every "-" of a message.
	if got := NewSecrets(Config{APIKey: "-"}).Scrub("a-b"); got != "a-b" {
		t.Errorf("a one-character key scrubbed text: %q", got)
	}
	if got := RedactURL("http://" + testUserInfo + "@h:1/v1"); got != "http://"+Redacted+"@h:1/v1" {
		t.Errorf("RedactURL = %q", got)
	}
	if got := RedactURL("http://h:1/v1?api-version=2024-06-01&api-key=sk-query"); strings.Contains(got, "sk-query") || !strings.Contains(got, "api-version=2024-06-01") {
		t.Errorf("RedactURL of a key in the query = %q", got)
	}
	if got := RedactURL("http://h:1/v1"); got != "http://h:1/v1" {
		t.Errorf("RedactURL without credentials = %q", got)
	}
}

func TestCleanURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"},
		{"https://user:hunter22@proxy.example/v1", "https://proxy.example/v1"},
		{"https://sk-abcdef123456@proxy.example/v1", "https://proxy.example/v1"},
		{"https://x.openai.azure.com/openai?api-version=2024-06-01&api-key=sk-secret1234", "https://x.openai.azure.com/openai?api-key=%5Bredacted%5D&api-version=2024-06-01"},
		{"https://h/v1?key=sk-secret1234&token=t0ps3cret#frag", "https://h/v1?key=%5Bredacted%5D&token=%5Bredacted%5D"},
		{"https://h/v1?a=%zz", "https://h/v1?[redacted]"},
		{"http://a b:secret@h/\x7f", Redacted},
	} {
		got := CleanURL(tc.in)
		if got != tc.want {
			t.Errorf("CleanURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, secret := range []string{"hunter22", "sk-abcdef123456", "sk-secret1234", "t0ps3cret", "secret"} {
			if strings.Contains(got, secret) {
				t.Errorf("CleanURL(%q) = %q keeps %q", tc.in, got, secret)
			}
		}
	}
}
