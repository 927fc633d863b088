package llm

import (
	"sync"

	openai "github.com/sashabaranov/go-openai"
)

// usageTally sums the usage of every answer the client received.
type usageTally struct {
	mu  sync.Mutex
	sum Usage
}

func (t *usageTally) add(u Usage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.sum = t.sum.Add(u)
}

func (t *usageTally) total() Usage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sum
}

// usageOf converts the server's usage report.
func usageOf(u openai.Usage) Usage {
	out := Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	if u.PromptTokensDetails != nil {
		out.CachedTokens = u.PromptTokensDetails.CachedTokens
	}
	return out
}

// Stats are what the client counted of its endpoints' rate limiting since
// it was made; with several endpoints, the concurrencies are their sums.
type Stats struct {
	// RateLimited is the 429 rate-limit answers received (insufficient_quota
	// excluded), each waited out or retried.
	RateLimited int64 `json:"rate_limited"`
	// Concurrency is the adaptive limit of attempts in flight now, and
	// LowestConcurrency the lowest it went; both are Config.Concurrency
	// when no 429 arrived.
	Concurrency       int `json:"concurrency"`
	LowestConcurrency int `json:"lowest_concurrency"`
	// Endpoints are each endpoint's figures, in the order configured.
	Endpoints []EndpointStats `json:"endpoints,omitempty"`
}
