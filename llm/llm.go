package llm

import (
	"encoding/json"
	"time"
)

// Message is one chat message sent to or received from the model.
type Message struct {
	Role       string     `json:"role"` // system | user | assistant | tool
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`   // assistant: the tools it called
	ToolCallID string     `json:"tool_call_id,omitempty"` // tool: the call this answers
}

// Exchange is one complete user/assistant turn kept in an entity's history.
type Exchange struct {
	User      string `json:"user"`
	Assistant string `json:"assistant"`
}

// Params are the per-phase model settings of a request.
type Params struct {
	Model       string
	Temperature float32
	MaxTokens   int
}

// Request is one structured-output call for one entity.
type Request struct {
	EntityKey  string // e.g. "intention:ada", "resolution:common"
	Phase      string // e.g. "intention", "resolution"
	Tick       int
	Params     Params
	System     string
	User       string
	SchemaName string          // json_schema name sent, e.g. "MasterOutput"
	Schema     json.RawMessage // strict JSON Schema sent with the request
	// Accept is the schema an answer must satisfy to be returned, when it is
	// looser than Schema because the caller checks some parts on its own (the
	// game master's answer: its envelope here, each character's update in
	// phases). Nil means Schema.
	Accept json.RawMessage
	// Check, when set, runs on an answer that matched Accept: an error is a
	// schema mismatch the model is asked to repair (KindSchema), for what
	// the caller checks in Go rather than in a per-call schema (the tick and
	// location a game master's answer must name), so that Accept stays the same
	// across calls and compiles once.
	Check func(json.RawMessage) error `json:"-"`
	// Record is what the entity's history keeps of User once the call's tick
	// commits: a compact account of what the entity was told that was new,
	// so that a past exchange does not repeat a whole earlier prompt. ""
	// keeps User whole.
	Record string
	// RecordAnswer, when set, is what the entity's history keeps of the
	// validated answer (a compact account of it); nil keeps the answer whole.
	RecordAnswer func(json.RawMessage) string `json:"-"`
	// Past, when not nil, are the entity's past exchanges this call sends
	// back (oldest first, already cut to the depth wanted), in place of the
	// client's history of EntityKey: a call made outside a run (`prompts
	// try`, `eval`) as the run made it at a tick of its own.
	Past []Exchange `json:"-"`
}

// Usage counts tokens as the server reported them.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CachedTokens     int `json:"cached_tokens"`
}

// Add returns the sum of two usages.
func (u Usage) Add(o Usage) Usage {
	return Usage{u.PromptTokens + o.PromptTokens, u.CompletionTokens + o.CompletionTokens, u.CachedTokens + o.CachedTokens}
}

// Total is prompt plus completion tokens.
func (u Usage) Total() int { return u.PromptTokens + u.CompletionTokens }

// Result is the outcome of one Request. Err is nil on success, in which case
// Output holds the schema-valid JSON answer. Messages, Raw, Attempts, Latency
// and Usage are filled in either way so every call can be recorded.
type Result struct {
	Request  Request
	Messages []Message // the messages of the last attempt, history included; nil once kept
	// Kept is what the context's keeper (WithKeep) made of Messages
	// when the call was over; the prompts were then let go: Messages is
	// nil, and so are the request's System, its User when it has a Record,
	// and its schemas.
	Kept   any
	Raw    string          // raw content of the last answer ("" if none arrived)
	Output json.RawMessage // validated answer; nil when Err != nil
	// Decoded is Output as the schema check decoded it (encoding/json
	// with UseNumber: objects map[string]any, arrays []any, numbers
	// json.Number), so that a caller need not read the answer again; nil
	// when Err != nil, and dropped from CreateEachThen's results once done
	// has had it. Treat it as read-only.
	Decoded  any
	Attempts int           // HTTP attempts made, retries and repairs included
	Repairs  int           // repair attempts made after invalid JSON or schema errors
	Latency  time.Duration // wall time of the whole call, retries included
	Usage    Usage         // summed over every attempt
	// BatchUsage is the part of Usage answered through a Batch API job
	// (CompleteBatch), priced at the batch discount.
	BatchUsage Usage
	// Endpoint names the endpoint the last attempt went to (its name or
	// base URL, never its key): the one that answered, or the one that
	// failed the call; "" when a cassette answered.
	Endpoint string
	// EndpointFailures names the endpoints that failed an attempt of the
	// call (refused, 5xx, a timeout, an answer that is not an
	// OpenAI-compatible response), one name per failed attempt, in order:
	// an endpoint that failed every attempt sent to it answered no call,
	// and is known by these alone.
	EndpointFailures []string
	// PromptTruncated is set when an answer's prompt did not fit the
	// model's context whole: its prompt_tokens reached ContextTokens (the
	// server cut the prompt to fit and the model answered what was left),
	// its prompt and completion tokens together passed it (the server
	// dropped the prompt's beginning to go on writing), or the server said
	// it truncated the prompt. The call may still have succeeded.
	PromptTruncated bool
	// ContextTokens is the model's context as the client knew it for the
	// last answer (llm.context_tokens, an endpoint's context_tokens, or
	// what Ollama's /api/show said); 0: unknown.
	ContextTokens int
	Err           error // *Error when the call failed
	// Recoveries are the failures the call went past or tried to, in order:
	// transient errors retried, answers sent back for repair. Err, when set,
	// is the failure after the last of them.
	Recoveries []Recovery

	// recorded is Request.RecordAnswer of Output, made by Complete in the
	// goroutine of the call rather than by whoever reads the exchange
	// (the tick, once every call is over).
	recorded *string
}

// Recovery is one failure of a call and what the client did about it
// (seed 002: emitted as TOOL_FAILURE, then RECOVERY_ATTEMPT).
type Recovery struct {
	Strategy string // StrategyRetry or StrategyRepair
	Err      *Error // the failure recovered from
	Success  bool   // the attempt that followed got past it
}

// Recovery strategies of the client.
const (
	StrategyRetry  = "retry"
	StrategyRepair = "repair"
)

// Exchange returns the history entry this result adds, and false when the call
// failed (a failed call never enters history).
func (r Result) Exchange() (Exchange, bool) {
	if r.Err != nil || r.Output == nil {
		return Exchange{}, false
	}
	user := r.Request.User
	if r.Request.Record != "" {
		user = r.Request.Record
	}
	answer := r.Raw // most often what the model wrote: held once, not copied
	if string(r.Output) != answer {
		answer = string(r.Output)
	}
	switch {
	case r.recorded != nil:
		answer = *r.recorded
	case r.Request.RecordAnswer != nil:
		answer = r.Request.RecordAnswer(r.Output)
	}
	return Exchange{User: user, Assistant: answer}, true
}
