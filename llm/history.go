package llm

import (
	"slices"
	"sync"
)

// History keeps the last exchanges of every entity key (e.g. "intention:ada"),
// safe for concurrent use. Only complete exchanges enter it: the caller
// appends Result.Exchange once the tick that made the call has committed, so
// a failed or rolled-back call never reaches the next prompt. The empty key
// has no history.
type History struct {
	depth int

	mu sync.RWMutex
	m  map[string][]Exchange
}

// NewHistory returns an empty history keeping depth exchanges per key.
func NewHistory(depth int) *History {
	return &History{depth: max(depth, 0), m: make(map[string][]Exchange)}
}

// Depth is the number of exchanges kept (and sent back) per key.
func (h *History) Depth() int { return h.depth }

// Get returns a copy of the last Depth exchanges of key, oldest first.
func (h *History) Get(key string) []Exchange {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return slices.Clone(h.m[key])
}

// Append adds one exchange to key, dropping the oldest beyond Depth.
func (h *History) Append(key string, ex Exchange) {
	if key == "" || h.depth == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m[key] = h.keep(append(h.m[key], ex))
}

// Commit appends the exchange of every successful result to its entity key
// and skips the failed ones.
func (h *History) Commit(results ...Result) {
	for _, r := range results {
		if ex, ok := r.Exchange(); ok {
			h.Append(r.Request.EntityKey, ex)
		}
	}
}

// Load replaces the whole history, e.g. with the one persisted by a previous
// run, keeping the last Depth exchanges of each key.
func (h *History) Load(m map[string][]Exchange) {
	fresh := make(map[string][]Exchange, len(m))
	for k, exs := range m {
		if k == "" || h.depth == 0 || len(exs) == 0 {
			continue
		}
		fresh[k] = h.keep(slices.Clone(exs))
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.m = fresh
}

// Snapshot returns a deep copy of the whole history, for persisting.
func (h *History) Snapshot() map[string][]Exchange {
	h.mu.RLock()
	defer h.mu.RUnlock()
	out := make(map[string][]Exchange, len(h.m))
	for k, exs := range h.m {
		out[k] = slices.Clone(exs)
	}
	return out
}

// keep trims exs to its last Depth entries in a slice of its own.
func (h *History) keep(exs []Exchange) []Exchange {
	if len(exs) > h.depth {
		exs = slices.Clone(exs[len(exs)-h.depth:])
	}
	return exs
}
