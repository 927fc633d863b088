package llm

import (
	"context"
	"errors"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// hugeServer answers every chat completion with a valid envelope whose
// content is n bytes long, optionally without a Content-Length.
func hugeServer(t *testing.T, n int, chunked bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		head := `{"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"`
		tail := `"}}]}`
		w.Header().Set("Content-Type", "application/json")
		if !chunked {
			w.Header().Set("Content-Length", itoa(len(head)+n+len(tail)))
		}
		w.Write([]byte(head))
		chunk := []byte(strings.Repeat("a", 64<<10))
		for left := n; left > 0; left -= len(chunk) {
			if left < len(chunk) { // last piece
				chunk = chunk[:left]
			}
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		w.Write([]byte(tail))
	}))
	t.Cleanup(srv.Close)
	return srv
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestOversizedAnswerRefused(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		srv := hugeServer(t, 10<<20, chunked)
		c, _ := newTestClient(t, srv.URL, nil)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res := c.Complete(context.Background(), testRequest("hello")) // max_tokens 256: limit 256 KiB
		runtime.ReadMemStats(&after)
		if !errors.Is(res.Err, ErrOversized) {
			t.Fatalf("chunked=%v: want ErrOversized, got %v", chunked, res.Err)
		}
		if res.Attempts != 1 {
			t.Errorf("chunked=%v: an oversized answer is final, got %d attempts", chunked, res.Attempts)
		}
		if !strings.Contains(res.Err.Error(), "262144 bytes") || !strings.Contains(res.Err.Error(), "llm.max_response_bytes") {
			t.Errorf("error should name the limit and its key: %v", res.Err)
		}
		if res.Raw != "" {
			t.Errorf("nothing of a refused answer is kept, got %d bytes", len(res.Raw))
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
			t.Errorf("chunked=%v: a refused 10 MB answer allocated %d bytes", chunked, alloc)
		}
	}
}

func TestAnswerUnderLimitAccepted(t *testing.T) {
	t.Parallel()
	srv := hugeServer(t, 100<<10, true)
	c, _ := newTestClient(t, srv.URL, nil)
	res := c.Chat(context.Background(), ChatRequest{Params: Params{Model: "m", MaxTokens: 2048}, Messages: []Message{{Role: "user", Content: "hi"}}})
	if res.Err != nil || len(res.Content) != 100<<10 {
		t.Fatalf("a 100 KiB answer under a 256 KiB limit: err %v (%v), %d bytes", res.Err, errors.Unwrap(res.Err), len(res.Content))
	}
	c, _ = newTestClient(t, srv.URL, func(cfg *Config) { cfg.MaxResponseBytes = 50 << 10 })
	res = c.Chat(context.Background(), ChatRequest{Params: Params{Model: "m", MaxTokens: 2048}, Messages: []Message{{Role: "user", Content: "hi"}}})
	if !errors.Is(res.Err, ErrOversized) {
		t.Fatalf("llm.max_response_bytes 50 KiB: want ErrOversized, got %v", res.Err)
	}
}

func TestResponseLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cfg       Config
		maxTokens int
		want      int64
	}{
		{Config{}, 0, DefaultMaxResponseBytes},
		{Config{}, 400, 256 << 10},
		{Config{}, 2048, 2048 * 128},
		{Config{}, 16000, 16000 * 128},
		{Config{MaxResponseBytes: 1000}, 2048, 1000},
	} {
		if got := tc.cfg.responseLimit(tc.maxTokens); got != tc.want {
			t.Errorf("limit(%+v, %d) = %d, want %d", tc.cfg.MaxResponseBytes, tc.maxTokens, got, tc.want)
		}
	}
}

// TestAnnouncedSizeIsNotTrusted: a server announcing a terabyte under a
// limit that allows it, and sending a few bytes, costs a few bytes.
func TestAnnouncedSizeIsNotTrusted(t *testing.T) {
	tr := transport{next: fixedAnswer{200, []byte(`{"choices":[]}`), 1 << 40}, limit: 1 << 41, baseURL: "http://h/v1"}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	body := roundTrip(t, tr)
	runtime.ReadMemStats(&after)
	if body != `{"choices":[]}` {
		t.Fatalf("body %q", body)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("reading a body of 14 bytes announced as 1 TB allocated %d bytes", grew)
	}
}

// TestLargestLimit: llm.max_response_bytes at its largest value still reads
// a body (limit+1, how far it reads, overflowed to a negative count and
// read nothing).
func TestLargestLimit(t *testing.T) {
	limit := Config{MaxResponseBytes: math.MaxInt64}.responseLimit(0)
	tr := transport{next: fixedAnswer{200, []byte(`{"choices":[]}`), -1}, limit: limit, baseURL: "http://h/v1"}
	if body := roundTrip(t, tr); body != `{"choices":[]}` {
		t.Errorf("body under the largest limit = %q", body)
	}
}

// roundTrip makes one request through tr and returns the body it gives.
func roundTrip(t *testing.T, tr transport) string {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, "http://h/v1/chat/completions", nil)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestStreamedAnswer: a successful answer asked for as a stream (a batch
// file) is passed on unread, however large, for its reader to bound; an
// error answer to the same request is still bounded here.
func TestStreamedAnswer(t *testing.T) {
	big := []byte(strings.Repeat("x", 1000))
	for _, tc := range []struct {
		status int
		ok     bool
	}{{200, true}, {500, false}} {
		tr := transport{next: fixedAnswer{tc.status, big, -1}, limit: 100, baseURL: "http://h/v1"}
		req, _ := http.NewRequestWithContext(withStream(t.Context()), http.MethodGet, "http://h/v1/files/f/content", nil)
		resp, err := tr.RoundTrip(req)
		if tc.ok {
			if err != nil {
				t.Fatalf("a streamed 200: %v", err)
			}
			if b, _ := io.ReadAll(resp.Body); len(b) != len(big) {
				t.Errorf("a streamed 200 gave %d bytes, want %d", len(b), len(big))
			}
		} else if !errors.Is(err, ErrOversized) {
			t.Errorf("a streamed request's %d answer over the limit: %v, want ErrOversized", tc.status, err)
		}
	}
}
