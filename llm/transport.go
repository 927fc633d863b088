package llm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"time"

	openai "github.com/sashabaranov/go-openai"
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

// maxPresize is the most readBody sets aside for a body before reading it.
const maxPresize = 1 << 20

// unknownSize is what readBody sets aside for a body of unknown size.
const unknownSize = 8 << 10

// limitKey carries the body limit of one request in its context.
type limitKey struct{}

func withLimit(ctx context.Context, n int64) context.Context {
	return context.WithValue(ctx, limitKey{}, n)
}

// transport is the HTTP client given to go-openai, the one door every byte
// from the server comes through. It records the Retry-After of 429 and 503
// answers in the attempt's holder, refuses a body larger than the request's
// limit (an *Error of kind KindOversized, read no further than the limit),
// and scrubs the configured secrets from the body, so that nothing a server
// echoes (an Authorization header in an error) reaches an error, a log line
// or a stored row.
type transport struct {
	next    openai.HTTPDoer
	secrets Secrets
	limit   int64  // when the request's context carries none
	baseURL string // redacted, for messages
}

func (h transport) Do(req *http.Request) (*http.Response, error) {
	resp, body, err := h.fetch(req)
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	resp.ContentLength = int64(len(body))
	return resp, nil
}

// fetch makes req and returns the answer with its whole body, read and
// scrubbed as Do says; resp.Body is closed.
func (h transport) fetch(req *http.Request) (*http.Response, []byte, error) {
	return h.fetchInto(req, new(bytes.Buffer))
}

// fetchInto is fetch, reading the body into buf, which the body may share.
func (h transport) fetchInto(req *http.Request, buf *bytes.Buffer) (*http.Response, []byte, error) {
	resp, err := h.next.Do(req)
	if err != nil {
		return nil, nil, err
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if hold, ok := req.Context().Value(retryAfterKey{}).(*retryAfter); ok {
			if d, ok := parseRetryAfter(resp.Header, time.Now()); ok {
				hold.put(d)
			}
		}
	}
	limit := h.limit
	if n, ok := req.Context().Value(limitKey{}).(int64); ok && n > 0 {
		limit = n
	}
	oversized := func(size string) (*http.Response, []byte, error) {
		resp.Body.Close()
		return nil, nil, &Error{Kind: KindOversized, StatusCode: resp.StatusCode,
			Message: fmt.Sprintf("answer from %s refused: %s over the limit of %d bytes", h.baseURL, size, limit),
			Hint:    "raise llm.max_response_bytes if the model's answers are really that long"}
	}
	if resp.ContentLength > limit {
		return oversized(fmt.Sprintf("%d bytes,", resp.ContentLength))
	}
	body, err := readBodyInto(buf, resp.Body, resp.ContentLength, limit)
	if int64(len(body)) > limit {
		return oversized("its body runs")
	}
	resp.Body.Close()
	if err != nil {
		return nil, nil, err
	}
	return resp, h.secrets.scrubBytes(body), nil
}

// readBody reads at most limit+1 bytes of r, into a buffer of the announced
// size when there is one (io.ReadAll grows its buffer from 512 bytes,
// copying as it goes), but no larger than maxPresize before the bytes
// arrive: a server may announce more than it sends. A body of unknown size
// starts at unknownSize: a Go server (Ollama's) announces the size of an
// answer up to 2 KiB and sends a longer one in chunks.
func readBody(r io.Reader, size, limit int64) ([]byte, error) {
	return readBodyInto(new(bytes.Buffer), r, size, limit)
}

// readBodyInto is readBody into b, emptied first.
func readBodyInto(b *bytes.Buffer, r io.Reader, size, limit int64) ([]byte, error) {
	b.Reset()
	if size < 0 {
		size = unknownSize
	}
	b.Grow(int(min(size, maxPresize, limit+1)) + bytes.MinRead) // ReadFrom asks for MinRead free
	_, err := b.ReadFrom(io.LimitReader(r, limit+1))
	return b.Bytes(), err
}
