package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// logHandler prints records in arbiter's log format, e.g.
//
//	2025.06.05 14:32:10 | WARNING | ⚖️ phase2a: Phase 2a: common fallback (timeout: ...)
//
// The component is the record's "phase" attribute (phase1, phase2a) or "arbiter".
type logHandler struct {
	mu    *sync.Mutex
	w     io.Writer
	level slog.Level
	attrs []slog.Attr
	now   func() time.Time
}

func newLogHandler(w io.Writer, level slog.Level) *logHandler {
	return &logHandler{mu: &sync.Mutex{}, w: w, level: level, now: time.Now}
}

func (h *logHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }

func (h *logHandler) Handle(_ context.Context, r slog.Record) error {
	component := "arbiter"
	var details []string
	pick := func(a slog.Attr) bool {
		switch a.Key {
		case "phase":
			component = phaseComponent(a.Value.String())
		case "tick":
		default:
			details = append(details, a.Key+"="+quoteIfNeeded(a.Value.String()))
		}
		return true
	}
	for _, a := range h.attrs {
		pick(a)
	}
	r.Attrs(pick)
	t := r.Time
	if t.IsZero() {
		t = h.now()
	}
	line := fmt.Sprintf("%s | %s | ⚖️ %s: %s", t.Format("2006.01.02 15:04:05"), levelName(r.Level), component, r.Message)
	// The seed's fallback warnings carry everything in the message; other
	// records (retries, skipped updates) show their details after it.
	if len(details) > 0 && (h.level <= slog.LevelInfo || !strings.Contains(r.Message, "fallback")) {
		line += " (" + strings.Join(details, " ") + ")"
	}
	line += "\n"
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := io.WriteString(h.w, line)
	return err
}

func (h *logHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append(append([]slog.Attr{}, h.attrs...), attrs...)
	return &c
}

func (h *logHandler) WithGroup(string) slog.Handler { return h }

func phaseComponent(phase string) string {
	switch phase {
	case "intention":
		return "phase1"
	case "resolution":
		return "phase2a"
	case "apply":
		return "apply"
	}
	return phase
}

func levelName(l slog.Level) string {
	switch {
	case l >= slog.LevelError:
		return "ERROR"
	case l >= slog.LevelWarn:
		return "WARNING"
	case l >= slog.LevelInfo:
		return "INFO"
	}
	return "DEBUG"
}

func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		return strconv.Quote(v)
	}
	return v
}
