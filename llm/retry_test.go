package llm

import (
	"context"
	"net/http"
	"testing"
	"time"
)

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{map[string]string{"Retry-After": "3"}, 3 * time.Second, true},
		{map[string]string{"Retry-After": " 0 "}, 0, true},
		{map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{map[string]string{"Retry-After-Ms": "junk", "Retry-After": "9"}, 9 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{map[string]string{"Retry-After": now.Add(-time.Minute).Format(http.TimeFormat)}, 0, true},
		{map[string]string{"Retry-After": "1e300"}, 24 * time.Hour, true},
		{map[string]string{"Retry-After": "-4"}, 0, false},
		{map[string]string{"Retry-After": "NaN"}, 0, false},
		{map[string]string{"Retry-After": "soon"}, 0, false},
		{map[string]string{}, 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for k, v := range tt.header {
			h.Set(k, v)
		}
		got, ok := parseRetryAfter(h, now)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseRetryAfter(%v) = %v, %v; want %v, %v", tt.header, got, ok, tt.want, tt.ok)
		}
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	c := &Client{cfg: Config{BackoffBase: 500 * time.Millisecond, BackoffMax: 20 * time.Second}}
	c.jitter = func(ceil time.Duration) time.Duration { return ceil }
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second}
	for i, w := range want {
		if got := c.backoff(i+1, 0, false); got != w {
			t.Errorf("backoff(%d) ceiling = %v, want %v", i+1, got, w)
		}
	}
	if got := c.backoff(200, 0, false); got != 20*time.Second {
		t.Errorf("backoff(200) = %v, want the cap", got)
	}
	if got := c.backoff(1, 3*time.Second, true); got != 3*time.Second {
		t.Errorf("Retry-After 3s gave %v", got)
	}
	if got := c.backoff(1, time.Hour, true); got != 20*time.Second {
		t.Errorf("Retry-After 1h gave %v, want BackoffMax", got)
	}

	for range 1000 {
		if d := fullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("fullJitter(1s) = %v", d)
		}
	}
	if fullJitter(0) != 0 {
		t.Error("fullJitter(0) != 0")
	}
}

func TestSleepStopsWithContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := sleep(ctx, time.Hour); err == nil {
		t.Error("sleep ignored a canceled context")
	}
	if err := sleep(t.Context(), time.Millisecond); err != nil {
		t.Error(err)
	}
}
