package llm

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Client makes structured-output calls to one OpenAI-compatible endpoint,
// or to several (Config.Endpoints). It is safe for concurrent use.
type Client struct {
	cfg     Config
	class   classifier // of the client as a whole: every key, the first endpoint named
	schemas schemaCache
	history *History
	usage   usageTally
	eps     []*endpoint            // every endpoint, each once
	pool    []*endpoint            // where calls go
	phases  map[string][]*endpoint // a phase's own endpoints
	log     *slog.Logger

	// Replaced in tests to observe and skip the waits between retries.
	wait   func(ctx context.Context, d time.Duration) error
	jitter func(ceil time.Duration) time.Duration
}

// keepKey is the context key of WithKeep.
type keepKey struct{}

// WithKeep returns ctx with keep: every call made under it, once over,
// hands its messages to keep in the goroutine that made the call, and the
// Result keeps what keep made of them (Result.Kept) instead of the prompts.
// A caller that holds thousands of results until it stores them (a tick of
// a large world) then holds what keep made of them (the store's prepared
// request, its texts compressed) rather than every prompt whole. It rides
// on the context, not the client, because one client may serve several
// runs at once (an arena), each storing into its own state.db.
func WithKeep(ctx context.Context, keep func([]Message) any) context.Context {
	return context.WithValue(ctx, keepKey{}, keep)
}

// letGo hands res's messages to the keeper of ctx, if any, and lets the
// prompts go; a request without a Record keeps its User, which its
// history entry is.
func letGo(ctx context.Context, res *Result) {
	keep, _ := ctx.Value(keepKey{}).(func([]Message) any)
	if keep == nil || res.Messages == nil {
		return
	}
	res.Kept = keep(res.Messages)
	res.Messages = nil
	res.Request.System, res.Request.Schema, res.Request.Accept = "", nil, nil
	if res.Request.Record != "" {
		res.Request.User = ""
	}
}

// New validates cfg, fills in its defaults and returns a client.
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")

	list := cfg.Endpoints
	if len(list) == 0 {
		list = []Endpoint{{BaseURL: cfg.BaseURL, APIKey: cfg.APIKey}}
	}
	all := []Secrets{NewSecrets(cfg)}
	for _, ep := range append(slices.Clone(list), slices.Concat(slices.Collect(maps.Values(cfg.PhaseEndpoints))...)...) {
		all = append(all, NewSecrets(Config{BaseURL: ep.BaseURL, APIKey: ep.APIKey}))
	}
	secrets := joinSecrets(all...)
	c := &Client{
		cfg:     cfg,
		history: NewHistory(cfg.Depth),
		log:     cfg.Logger,
		wait:    sleep,
		jitter:  fullJitter,
	}
	c.pool = c.endpoints(list, secrets)
	c.class = classifier{baseURL: RedactURL(cmp.Or(list[0].BaseURL, DefaultBaseURL)), secrets: secrets, timeout: cfg.Timeout}
	if len(list) > 1 {
		c.class.baseURL = fmt.Sprintf("%d endpoints", len(list))
	}
	for _, phase := range slices.Sorted(maps.Keys(cfg.PhaseEndpoints)) {
		if eps := cfg.PhaseEndpoints[phase]; len(eps) > 0 {
			if c.phases == nil {
				c.phases = map[string][]*endpoint{}
			}
			c.phases[phase] = c.endpoints(eps, secrets)
		}
	}
	return c, nil
}

// endpoints makes list ready; an endpoint listed for two phases (the same
// entry under the same name: Validate refuses two others of one name) is
// one endpoint, with one set of limits.
func (c *Client) endpoints(list []Endpoint, secrets Secrets) []*endpoint {
	out := make([]*endpoint, 0, len(list))
	for _, e := range list {
		ep := newEndpoint(c.cfg, e, secrets)
		if i := slices.IndexFunc(c.eps, func(o *endpoint) bool { return o.name == ep.name }); i >= 0 {
			ep = c.eps[i]
		} else {
			c.eps = append(c.eps, ep)
		}
		out = append(out, ep)
	}
	return out
}

// poolOf is where the calls of phase go.
func (c *Client) poolOf(phase string) []*endpoint {
	if p, ok := c.phases[phase]; ok {
		return p
	}
	return c.pool
}

// Config returns the configuration in use, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// Secrets returns the scrubber of the client's credentials.
func (c *Client) Secrets() Secrets { return c.class.secrets }

// History returns the per-entity history that Complete sends back.
func (c *Client) History() *History { return c.history }

// Usage returns the tokens of every answer received so far, failed
// attempts included.
func (c *Client) Usage() Usage { return c.usage.total() }

// Stats returns the 429 rate limits received so far and the adaptive
// concurrency they left, summed over the endpoints, and each endpoint's.
func (c *Client) Stats() Stats {
	var st Stats
	now := time.Now()
	for _, ep := range c.eps {
		es := ep.stats(now)
		st.RateLimited += es.RateLimited
		st.Concurrency += es.Concurrency
		st.LowestConcurrency += es.Lowest
		st.Endpoints = append(st.Endpoints, es)
	}
	return st
}

// Complete makes one structured-output call: the system prompt, the last
// Depth exchanges of the entity's history and the user prompt, answered under
// the request's JSON schema (strict). Transient failures are retried with
// backoff; an answer that is not JSON or does not match the schema is sent
// back with the error for up to RepairAttempts corrections. Complete never
// adds to the history; see History.
//
// The Result always says what happened; Err is a *Error when the call failed.
func (c *Client) Complete(ctx context.Context, req Request) Result {
	return c.complete(ctx, req, nil, "")
}

// given is an answer the client received other than by a live call of
// Complete's (a line of a Batch API job's output): complete checks it
// first, as it would the first live answer.
type given struct {
	ans   answer
	usage Usage
}

// complete is Complete, whose first answer is first when not nil: no call
// is made for it, and a repair it needs is asked live. The call has a
// span when ctx has telemetry, naming job, the Batch API job it was sent
// in ("" for none), when the call was.
func (c *Client) complete(ctx context.Context, req Request, first *given, job string) Result {
	ctx, span := spanOf(ctx, req.EntityKey, req.Phase, req.Tick, req.Params)
	if span == nil {
		return c.completeCall(ctx, req, first, nil)
	}
	how := new(called)
	res := c.completeCall(ctx, req, first, how)
	d := done(res.Usage, res.Attempts, res.Repairs, res.Latency, res.Endpoint, res.EndpointFailures, res.Err)
	d.BatchJob = job
	c.endSpan(ctx, span, d, *how)
	return res
}

// completeCall is complete; how, when not nil, is told of each answer for
// the call's span.
func (c *Client) completeCall(ctx context.Context, req Request, first *given, how *called) (res Result) {
	res.Request = req
	ctx = watchCall(ctx, req.EntityKey)
	defer finish(ctx, &res, time.Now())

	if err := c.checkRequest(req); err != nil {
		res.Err = err
		return res
	}
	schema, serr := c.acceptSchema(req)
	if serr != nil {
		res.Err = serr
		return res
	}
	log := c.log.With("entity", req.EntityKey, "phase", req.Phase, "tick", req.Tick)

	msgs := c.messages(req)
	repair := -1 // index in res.Recoveries of the last repair asked for
	avoid := ""  // the endpoint whose answer is being repaired
	for {
		res.Messages = msgs
		var (
			ans     answer
			rt      route
			usage   Usage
			callErr *Error
		)
		if first != nil {
			ans, rt.attempts, usage = first.ans, 1, first.usage
			res.BatchUsage = usage
			first = nil
		} else {
			ans, rt, usage, callErr = c.send(ctx, log, &res.Recoveries, req, msgs, avoid)
		}
		how.saw(ans, rt, msgs)
		res.Attempts += rt.attempts
		if ans.endpoint != "" {
			res.Endpoint = ans.endpoint
		}
		res.EndpointFailures = append(res.EndpointFailures, rt.failed...)
		if ans.window.Tokens > 0 {
			res.ContextTokens = ans.window.Tokens
		}
		res.PromptTruncated = res.PromptTruncated || ans.truncated
		res.Usage = res.Usage.Add(usage)
		if callErr != nil {
			if repair >= 0 { // the repair asked for got no answer
				tellRecovered(ctx, res.Recoveries[repair])
			}
			callErr.Attempts = res.Attempts
			res.Err = callErr
			return res
		}
		res.Raw = ans.content
		out, decoded, bad := checkRequested(schema, req, ans)
		if repair >= 0 { // the answer after a repair tells whether it held
			res.Recoveries[repair].Success = bad == nil
			tellRecovered(ctx, res.Recoveries[repair])
		}
		if bad == nil {
			res.Output, res.Decoded = out, decoded
			return res
		}
		bad.Attempts = res.Attempts
		if !bad.Kind.Repairable() || res.Repairs >= c.cfg.RepairAttempts || ctx.Err() != nil {
			res.Err = bad
			return res
		}
		res.Repairs++
		repair, avoid = len(res.Recoveries), ans.endpoint
		res.Recoveries = append(res.Recoveries, Recovery{Strategy: StrategyRepair, Err: bad})
		tellFailed(ctx, bad) // before the repair is asked for
		log.Info("model answer rejected, asking for a repair", "kind", bad.Kind.String(),
			"repair", res.Repairs, "error", bad.Message)
		msgs = append(slices.Clip(msgs),
			Message{Role: openai.ChatMessageRoleAssistant, Content: ans.content},
			Message{Role: openai.ChatMessageRoleUser, Content: repairPrompt(bad, req.SchemaName)})
	}
}

// finish completes res, the Result of a call that began at start, as the
// call returns: its latency, its failure told to the Watch of ctx, its
// answer as recorded, its messages to the keeper of ctx.
func finish(ctx context.Context, res *Result, start time.Time) {
	res.Latency = time.Since(start)
	tellFinal(ctx, res.Err)
	if res.Err == nil && res.Output != nil && res.Request.RecordAnswer != nil {
		rec := res.Request.RecordAnswer(res.Output)
		res.recorded = &rec
	}
	letGo(ctx, res)
}

// checkRequest catches requests that no server could answer.
func (c *Client) checkRequest(req Request) *Error {
	var missing []string
	if req.Params.Model == "" {
		missing = append(missing, "a model (set llm.model)")
	}
	if req.SchemaName == "" {
		missing = append(missing, "a schema name")
	}
	if len(req.Schema) == 0 {
		missing = append(missing, "a schema")
	}
	if len(missing) == 0 {
		return nil
	}
	who := req.EntityKey
	if who == "" {
		who = "a " + req.Phase + " call"
	}
	return &Error{Kind: KindBadRequest, Message: "request of " + who + " has no " + strings.Join(missing, ", no ")}
}

// messages builds system, history and user messages.
func (c *Client) messages(req Request) []Message {
	if req.Past != nil {
		return Messages(req, req.Past, len(req.Past))
	}
	return Messages(req, c.history.Get(req.EntityKey), c.cfg.Depth)
}

// Messages is what Complete sends first for req: the system prompt, the last
// depth exchanges of hist (the entity's history, oldest first) and the user
// prompt.
func Messages(req Request, hist []Exchange, depth int) []Message {
	hist = hist[max(0, len(hist)-max(depth, 0)):]
	msgs := make([]Message, 0, 2+2*len(hist))
	if req.System != "" {
		msgs = append(msgs, Message{Role: openai.ChatMessageRoleSystem, Content: req.System})
	}
	for _, ex := range hist {
		msgs = append(msgs,
			Message{Role: openai.ChatMessageRoleUser, Content: ex.User},
			Message{Role: openai.ChatMessageRoleAssistant, Content: ex.Assistant})
	}
	return append(msgs, Message{Role: openai.ChatMessageRoleUser, Content: req.User})
}

// ChatCompletion is the chat completion Complete sends first for req, whose
// messages are msgs (see Messages): go-openai's request, the engine's
// schema in its json_schema response format, strict. Its bytes on the wire
// are go-openai's encoding of it.
func ChatCompletion(req Request, msgs []Message) openai.ChatCompletionRequest {
	cr := openai.ChatCompletionRequest{
		Model:       req.Params.Model,
		Messages:    make([]openai.ChatCompletionMessage, len(msgs)),
		Temperature: req.Params.Temperature,
		MaxTokens:   req.Params.MaxTokens,
		ResponseFormat: &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:   req.SchemaName,
				Schema: req.Schema,
				Strict: true,
			},
		},
	}
	for i, m := range msgs {
		cr.Messages[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content}
	}
	return cr
}

// send makes one chat completion with retries, to another endpoint than
// the one named avoid while one is in, and returns the first choice, where
// its attempts went and the usage of every answer received.
func (c *Client) send(ctx context.Context, log *slog.Logger, recs *[]Recovery, req Request, msgs []Message, avoid string) (answer, route, Usage, *Error) {
	cr := ChatCompletion(req, msgs)
	resp, rt, usage, err := c.create(ctx, log, recs, callSite{req.EntityKey, req.Phase, req.Tick}, avoid, cr)
	if err != nil {
		return answer{endpoint: rt.endpoint()}, rt, usage, err
	}
	a := answer{maxTokens: req.Params.MaxTokens, endpoint: rt.endpoint(), window: rt.window, truncated: rt.truncated}
	if len(resp.Choices) > 0 {
		ch := resp.Choices[0]
		a.content, a.refusal, a.finish = ch.Message.Content, ch.Message.Refusal, ch.FinishReason
		a.toolCalls = len(ch.Message.ToolCalls)
	}
	a.model = resp.Model
	return a, rt, usage, nil
}

// Models lists the ids of the models the endpoint serves (GET /models), with
// the same retries and errors as Complete.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	var list openai.ModelsList
	_, err := c.retry(ctx, c.log, nil, c.pool, 0, "", func(ctx context.Context, ep *endpoint) error {
		var err error
		list, err = ep.oa.ListModels(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(list.Models))
	for i, m := range list.Models {
		ids[i] = m.ID
	}
	return ids, nil
}
