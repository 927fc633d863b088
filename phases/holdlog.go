package phases

import (
	"context"
	"log/slog"
	"sync"
)

// holdLog is a slog.Handler that keeps the records of one call's work, each
// with the handler (attributes included) it was meant for, instead of
// writing them: a call made ahead of its phase logs with that phase, in the
// simulation's order (flush). It appends to *held under mu, when set (a
// round's lock: the slot is the round's, guarded by it).
type holdLog struct {
	next slog.Handler
	held *[]heldRecord
	mu   *sync.Mutex
}

type heldRecord struct {
	next slog.Handler
	r    slog.Record
}

func (l holdLog) Enabled(ctx context.Context, level slog.Level) bool {
	return l.next.Enabled(ctx, level)
}

func (l holdLog) Handle(_ context.Context, r slog.Record) error {
	h := heldRecord{l.next, r.Clone()}
	if l.mu != nil {
		l.mu.Lock()
		defer l.mu.Unlock()
	}
	*l.held = append(*l.held, h)
	return nil
}

func (l holdLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return holdLog{next: l.next.WithAttrs(attrs), held: l.held, mu: l.mu}
}

func (l holdLog) WithGroup(name string) slog.Handler {
	return holdLog{next: l.next.WithGroup(name), held: l.held, mu: l.mu}
}

// flush writes held log records, in order.
func flush(ctx context.Context, logs ...[]heldRecord) {
	lctx := context.WithoutCancel(ctx)
	for _, held := range logs {
		for _, h := range held {
			h.next.Handle(lctx, h.r) // a log handler's failure is not the tick's
		}
	}
}
