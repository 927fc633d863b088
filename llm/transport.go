package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"
)

// Bounds of an answer's body when Config.MaxResponseBytes is 0 (auto): a
// few times the largest answer max_tokens allows (a token is rarely more
// than 8 bytes of text, 32 once JSON-escaped), never under the floor; a
// request without max_tokens (GET /models, a chat without a limit) gets
// DefaultMaxResponseBytes.
const (
	DefaultMaxResponseBytes = 4 << 20 // 4 MiB
	minResponseBytes        = 256 << 10
	bytesPerToken           = 4 * 32
)

// responseLimit is the largest body accepted for a request asking for at
// most maxTokens tokens.
func (c Config) responseLimit(maxTokens int) int64 {
	switch {
	case c.MaxResponseBytes > 0:
		return min(c.MaxResponseBytes, math.MaxInt64-1) // the body is read up to limit+1
	case maxTokens <= 0:
		return DefaultMaxResponseBytes
	}
	return max(minResponseBytes, int64(maxTokens)*bytesPerToken)
}

// limitKey carries the body limit of one request in its context.
type limitKey struct{}

func withLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, limitKey{}, n)
}

// streamKey marks a request whose successful answer its caller reads as
// a stream (a Batch API file, a line at a time): the transport passes that
// body on unread, and the caller bounds what it reads and scrubs what it
// keeps (readBatchOutput).
type streamKey struct{}

func withStream(ctx context.Context) context.Context {
	return context.WithValue(ctx, streamKey{}, true)
}

// transport is the http.RoundTripper of the http.Client given to
// go-openai, the one door every byte from the server comes through. It
// hands the Retry-After of 429 and 503 answers to the attempt's holder
// (go-openai does not expose the headers of an error answer), refuses a
// body larger than the request's limit (an *Error of kind KindOversized,
// read no further than the limit), and scrubs the configured secrets from
// the body, so that nothing a server echoes (an Authorization header in an
// error) reaches an error, a log line or a stored row. The one exception
// is a successful answer read as a stream (withStream), which its reader
// bounds and scrubs. It notes in the call's serverNote an answer that says
// the server truncated the prompt. A request whose context carries its body
// (withRequestBody) goes out with that body.
type transport struct {
	next    http.RoundTripper
	secrets Secrets
	limit   int64  // when the request's context carries none
	baseURL string // redacted, for messages
}

func (t transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(withBody(req))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if hold, ok := req.Context().Value(retryAfterKey{}).(*retryAfter); ok {
			if d, ok := parseRetryAfter(resp.Header, time.Now()); ok {
				hold.put(d)
			}
		}
	}
	if resp.StatusCode/100 == 2 && req.Context().Value(streamKey{}) != nil {
		return resp, nil
	}
	limit := t.limit
	if n, ok := req.Context().Value(limitKey{}).(int64); ok && n > 0 {
		limit = n
	}
	oversized := func(size string) (*http.Response, error) {
		resp.Body.Close()
		return nil, &Error{Kind: KindOversized, StatusCode: resp.StatusCode,
			Message: fmt.Sprintf("answer from %s refused: %s over the limit of %d bytes", t.baseURL, size, limit),
			Hint:    "raise llm.max_response_bytes if the model's answers are really that long"}
	}
	if resp.ContentLength > limit {
		return oversized(fmt.Sprintf("%d bytes,", resp.ContentLength))
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if int64(len(body)) > limit {
		return oversized("its body runs")
	}
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	body = t.secrets.scrubBytes(body)
	if resp.StatusCode == http.StatusOK {
		readNote(req.Context(), body)
	}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	return resp, nil
}
