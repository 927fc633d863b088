package store

import (
	"encoding/json"
	"time"
)

// TickRecord is everything one tick (or turn) produced; CommitTick stores it
// in one transaction.
type TickRecord struct {
	Tick int
	// Kind is the simulation kind; a store refuses a tick of another kind
	// than its first.
	Kind string
	// State is the kind's state after this tick, as JSON, without what is
	// kept in Memories and Records (so a row stays the size of the world
	// rather than growing with everything written before).
	State json.RawMessage
	// Memories are the narrative memory entries written at this tick, in
	// order per character.
	Memories []MemoryRecord
	// Records are rows of the kind's streams added or replaced at this tick.
	Records     []Record
	Intentions  []IntentionRecord
	Outputs     []OutputRecord
	Calls       []CallRecord
	Events      []string // event lines in the order they were emitted
	ApplyErrors []ApplyError
	History     []HistoryRecord // exchanges to append to each entity's history, in order
}

// MemoryRecord is one memory entry of a character, written at Tick.
type MemoryRecord struct {
	Tick        int // filled in when reading
	CharacterID string
	Entry       string
}

// Record is row N of a stream of a kind (a chronicle's message N, say), as
// JSON. Tick is filled in when reading.
type Record struct {
	Tick   int
	Stream string
	N      int
	Body   json.RawMessage
}

// IntentionRecord is one character's phase-1 intention.
type IntentionRecord struct {
	CharacterID string
	Intention   string
	Fallback    bool // the call failed and the current external_intent was kept
}

// OutputRecord is the game master's decision for one location.
type OutputRecord struct {
	LocationID string
	Output     string // the MasterOutput as JSON
	Fallback   bool   // the call failed and the state-preserving fallback was used
}

// CallRecord is one model call, successful or not. ID and Tick are filled in
// when reading; CommitTick stores calls under the record's tick.
type CallRecord struct {
	ID        int64
	Tick      int
	Phase     string
	EntityKey string
	Model     string // the model the request named; "" when stored before schema version 3
	Endpoint  string // the endpoint that answered (its name); "" when none did
	// EndpointFailures name the endpoints that failed an attempt of the
	// call, one name per attempt (llm.Result.EndpointFailures): counted
	// in the running totals per endpoint, not stored with the call.
	EndpointFailures []string
	Request          string // the messages sent, as JSON (what Calls reads back)
	// Messages, when set, are the messages sent, stored in place of Request
	// with each long content kept once (see Message).
	Messages []Message
	// Prepared, when set, is the request already put in its stored form by
	// PrepareRequest (as soon as the call was over), stored in place of
	// Messages and Request.
	Prepared         *PreparedRequest
	Raw              string // raw content of the last answer
	Output           string // the validated output, "" when the call failed
	LatencyMS        int64
	PromptTokens     int
	CompletionTokens int
	CachedTokens     int
	// BatchPromptTokens and BatchCompletionTokens are the part of the
	// tokens above a Batch API job answered, priced at the batch discount.
	BatchPromptTokens     int
	BatchCompletionTokens int
	Attempts              int
	Repairs               int
	ErrorKind             string // "" on success
	Error                 string // "" on success
	Fallback              bool
	// PromptTruncated is set when the prompt filled the model's context:
	// the server cut it to fit (llm.Result.PromptTruncated). Read as false
	// from a database older than version 9.
	PromptTruncated bool
}

// Failed reports whether the call ended in an error.
func (c CallRecord) Failed() bool { return c.Error != "" || c.ErrorKind != "" }

// ApplyError is one game master update that the apply step skipped.
type ApplyError struct {
	LocationID  string
	CharacterID string
	Reason      string
}

// HistoryRecord is one complete user/assistant exchange of an entity
// ("intention:ada", "resolution:common").
type HistoryRecord struct {
	EntityKey string
	User      string
	Assistant string
}

// Event is one stored event line.
type Event struct {
	Tick int    `json:"tick"`
	Seq  int    `json:"seq"` // 1-based order within the tick
	Line string `json:"line"`
}

// Usage sums a set of model calls.
type Usage struct {
	Calls            int   `json:"calls"`
	FailedCalls      int   `json:"failed_calls"`
	Repairs          int   `json:"repairs"`
	PromptTokens     int   `json:"prompt_tokens"`
	CompletionTokens int   `json:"completion_tokens"`
	CachedTokens     int   `json:"cached_tokens"`
	LatencyMS        int64 `json:"latency_ms"`
	// BatchPromptTokens and BatchCompletionTokens are the part of the
	// tokens above answered through Batch API jobs (schema version 7).
	BatchPromptTokens     int `json:"batch_prompt_tokens,omitempty"`
	BatchCompletionTokens int `json:"batch_completion_tokens,omitempty"`
	// EndpointFailures, counted per endpoint alone (Summary.ByEndpoint),
	// are the attempts the endpoint failed (schema version 8).
	EndpointFailures int `json:"endpoint_failures,omitempty"`
}

// GroupUsage is the usage of the calls sharing one phase or entity key.
type GroupUsage struct {
	Key string `json:"key"`
	Usage
}

// Summary is the state of a run at a glance, for `arbiter status`.
type Summary struct {
	LastTick        int       `json:"last_tick"` // 0 before the first commit
	LastCommittedAt time.Time `json:"last_committed_at,omitzero"`
	Total           Usage     `json:"total"`
	Fallbacks       int       `json:"fallbacks"` // intentions and outputs that fell back
	ApplyErrors     int       `json:"apply_errors"`
	// TruncatedPrompts counts the calls whose prompt filled the model's
	// context (the server cut it); 0 before schema version 9.
	TruncatedPrompts int          `json:"truncated_prompts"`
	ByPhase          []GroupUsage `json:"by_phase"`  // sorted by phase
	ByEntity         []GroupUsage `json:"by_entity"` // sorted by entity key
	// ByEndpoint sums the calls per endpoint that answered them, and the
	// attempts each failed, sorted by name; empty before schema version 6.
	ByEndpoint []GroupUsage `json:"by_endpoint,omitempty"`
	// LastStop is why the latest run stopped short, when it did so after the
	// last commit; nil otherwise.
	LastStop *Stop `json:"last_stop,omitempty"`
	// TextsDroppedThrough is the last tick whose prompt and answer texts
	// `arbiter compact` dropped (ticks 1 to it); 0 when it dropped none.
	TextsDroppedThrough int `json:"texts_dropped_through,omitempty"`
}

// Stop records a run that ended without committing the tick it was on.
type Stop struct {
	Tick      int       `json:"tick"`   // the tick that did not commit
	Reason    string    `json:"reason"` // quorum_failure, interrupted, budget_exhausted, error
	Error     string    `json:"error"`
	Events    []string  `json:"events"` // the tick's event lines, as emitted
	StoppedAt time.Time `json:"stopped_at"`
}
