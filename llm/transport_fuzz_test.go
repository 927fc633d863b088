package llm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// fixedAnswer is a server's answer, as a RoundTripper.
type fixedAnswer struct {
	status int
	body   []byte
	length int64
}

func (d fixedAnswer) RoundTrip(*http.Request) (*http.Response, error) {
	return &http.Response{StatusCode: d.status, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(d.body)), ContentLength: d.length}, nil
}

// FuzzTransport: whatever a server sends, the transport returns a body no
// larger than the limit and free of the configured secrets, or an
// ErrOversized; it never panics.
func FuzzTransport(f *testing.F) {
	f.Add(200, []byte(`{"choices":[]}`), int64(-1))
	f.Add(401, []byte(`{"error":{"message":"Bearer `+testKey+`"}}`), int64(-1))
	f.Add(200, []byte(strings.Repeat("x", 300)), int64(10))
	f.Add(429, []byte(testURLUser+":"+testURLPass), int64(1<<40))
	f.Fuzz(func(t *testing.T, status int, body []byte, length int64) {
		const limit = 256
		tr := transport{next: fixedAnswer{status, body, length}, limit: limit, baseURL: "http://h/v1",
			secrets: NewSecrets(Config{APIKey: testKey, BaseURL: "http://" + testUserInfo + "@h/v1"})}
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, "http://h/v1/chat/completions", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			if !errors.Is(err, ErrOversized) {
				t.Fatalf("err = %v", err)
			}
			return
		}
		got, _ := io.ReadAll(resp.Body)
		if len(body) > limit || length > limit {
			t.Fatalf("accepted %d bytes (Content-Length %d) over the limit %d", len(body), length, limit)
		}
		for _, s := range []string{testKey, testURLPass} {
			if bytes.Contains(got, []byte(s)) {
				t.Fatalf("body keeps %q: %q", s, got)
			}
		}
	})
}
