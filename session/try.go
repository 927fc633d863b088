package session

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
)

// Caller is a kind whose model calls can be made one at a time outside a
// run, as a run makes them at a committed tick: `arbiter prompts try`
// sends one, `arbiter eval` many. The session finds it by type assertion;
// a kind without it answers `prompts try` with Plays' sentence.
type Caller interface {
	// CallPhases are the phases a model answers.
	CallPhases() []string
	// Entities lists whom phase calls at the tick after state, in the
	// kind's order (the characters of a phase that calls characters);
	// an unknown phase is an *InputError
	// naming the known ones.
	Entities(phase string, state any) ([]string, error)
	// CallAt is the call phase makes for q.Entity at tick q.Tick+1 from the
	// committed state q.State, as a run makes it: its prompts, schema and
	// checks, and the entity's past exchanges as of that tick (from
	// q.Store; none before the first commit). A call whose tick is
	// committed uses what that tick stored (a resolution its characters'
	// intentions). An unknown phase or entity is an *InputError naming
	// what exists.
	CallAt(ctx context.Context, q RequestQuery) (*Call, error)
	// Judge is the kind's own reading of res, the answer to the call of q:
	// the checks a run makes before an answer touches the world, and what
	// the answer would change, applied to q.State in memory.
	Judge(q RequestQuery, res llm.Result) Verdict
	// Assertions are the checks of an answer an eval suite may name that
	// only this kind knows (whether a character moves), by name.
	Assertions() map[string]KindAssertion
}

// Call is one model call of a kind, ready to send outside a run.
type Call struct {
	// Request names the call (Phase, EntityKey, Tick, Params) and, for a
	// structured-output call, is what is sent (its Past set).
	Request llm.Request
	// Messages are what the first attempt sends, history included.
	Messages []llm.Message
	// Key is a digest of what decides the answer (the model, its
	// parameters, the messages, the schema or tools the first attempt
	// sends): an eval caches answers by it.
	Key string
	// Send makes the call through c. A call whose answer is not a
	// structured output (a reply in a conversation, a model seat's tool calls)
	// comes back as one: Raw the text, Output the answer as JSON.
	Send func(ctx context.Context, c *llm.Client) llm.Result
}

// StructuredCall is the Call of a structured-output request, sent with
// Complete: its past exchanges ride on req.Past.
func StructuredCall(req llm.Request) *Call {
	msgs := llm.Messages(req, req.Past, len(req.Past))
	h := sha256.New()
	fmt.Fprintf(h, "structured\x00%s\x00%g\x00%d\x00%s\x00%d:", req.Params.Model, req.Params.Temperature, req.Params.MaxTokens, req.SchemaName, len(req.Schema))
	h.Write(req.Schema)
	for _, m := range msgs {
		fmt.Fprintf(h, "\x00%s\x00%d:", m.Role, len(m.Content))
		io.WriteString(h, m.Content)
	}
	return &Call{Request: req, Messages: msgs, Key: hex.EncodeToString(h.Sum(nil)),
		Send: func(ctx context.Context, c *llm.Client) llm.Result { return c.Complete(ctx, req) }}
}

// KeyOf is the Key of a call whose request is v (a chat or tool request):
// a digest of its JSON.
func KeyOf(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Verdict is what a kind makes of one answer.
type Verdict struct {
	// Problems are the kind's checks the answer failed: what a run would
	// skip or reject of it, one sentence each.
	Problems []string `json:"problems"`
	// Fallback: a run would not use the answer at all and fall back (the
	// call failed, or its answer could not be read).
	Fallback bool `json:"fallback"`
	// Changes are what the answer would do to the world, one line each
	// ("ada moves from square to tavern"), in the kind's order.
	Changes []string `json:"changes"`
	// Facts are what the kind's assertions read of the answer (who moves
	// where, who is present); the kind's own, opaque to the session.
	Facts any `json:"-"`
}

// KindAssertion is a check of an answer that a kind defines for eval
// suites: Help says what its argument is, Parse reads the argument as the
// suite wrote it (decoded YAML) into the check, or says what is wrong.
type KindAssertion struct {
	Help  string
	Parse func(arg any) (func(Answer) (pass bool, detail string), error)
}

// Answer is one answer as an assertion sees it.
type Answer struct {
	Output  json.RawMessage // the schema-valid answer; nil when the call failed
	Verdict Verdict
}

// Message is one chat message of a call, as the model client sends it. A
// type alias: the session hands the client's messages on as they are.
type Message = llm.Message

// Client is the model client calls made outside a run go through
// (TryClient, NewClient). A type alias, as ClientConfig is.
type Client = llm.Client

// NewClient is a model client of c with no history of its own: a judge's,
// whose calls each carry what they send.
func NewClient(c ClientConfig) (*Client, error) {
	c.Depth = 0
	client, err := llm.New(c)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return client, nil
}

// ErrorKind names the kind of a failed call's error ("schema", "timeout",
// ...); "" for a call that did not fail.
func ErrorKind(err error) string {
	if err == nil {
		return ""
	}
	return llm.ErrorKindOf(err).String()
}

// Truncated says why res, an answer whose prompt reached the model's
// context (llm.Result.PromptTruncated), answers a prompt the model did not
// read whole; "" when it did. `prompts try` and `eval` count such an answer
// as failed: it judges another prompt than the one written.
func Truncated(res llm.Result) string {
	if !res.PromptTruncated {
		return ""
	}
	return fmt.Sprintf("prompt truncated: %d prompt tokens reached the model's context of %d, so the model answered a prompt cut short (shorten the prompt, lower llm.depth, or give the model a larger context)",
		res.Usage.PromptTokens, res.ContextTokens)
}

// Trial is one call made by `prompts try`: the request as sent and what
// came back, read by the kind.
type Trial struct {
	Call    *Call
	Result  llm.Result
	Verdict Verdict
}

// caller is the session's kind as a Caller, or the input error saying
// the kind's calls cannot be tried.
func (s *Session) caller() (Caller, error) {
	if c, ok := s.Kind.(Caller); ok {
		return c, nil
	}
	return nil, inputErrorf("%s is a %s simulation: its calls cannot be tried one at a time (%s)", s.Dir, s.Sim.Kind, how(s.Dir, s.Kind))
}

// CallPhases are the phases of the session's kind that a model answers.
func (s *Session) CallPhases() ([]string, error) {
	c, err := s.caller()
	if err != nil {
		return nil, err
	}
	return c.CallPhases(), nil
}

// CallTick checks that a call may be made at tick (the tick it belongs
// to, from the committed state before it): 1 to the latest committed
// tick plus one.
func (s *Session) CallTick(tick int) error {
	if last := s.LastTick(); tick < 1 || tick > last+1 {
		return inputErrorf("tick %d: not a tick a call can be made at (committed ticks: 0..%d; a call belongs to ticks 1..%d, the state before it committed)", tick, last, last+1)
	}
	return nil
}

// Call builds the call phase makes for entity at tick (1 .. latest+1) from
// the committed state before it, as a run makes it, with the session's
// templates and settings.
func (s *Session) Call(ctx context.Context, phase, entity string, tick int) (*Call, RequestQuery, error) {
	return s.CallPatched(ctx, phase, entity, tick, nil)
}

// CallPatched is Call from the committed state changed by patch, a JSON
// merge patch (RFC 7386) over the state as JSON: a hand-written eval case
// that moves a character or rewrites a moment. A patch that does not fit
// the state is an *InputError.
func (s *Session) CallPatched(ctx context.Context, phase, entity string, tick int, patch json.RawMessage) (*Call, RequestQuery, error) {
	c, err := s.caller()
	if err != nil {
		return nil, RequestQuery{}, err
	}
	if !slices.Contains(c.CallPhases(), phase) {
		return nil, RequestQuery{}, inputErrorf("phase %q: a %s simulation's model calls are %s", phase, s.Sim.Kind, orList(c.CallPhases()))
	}
	if err := s.CallTick(tick); err != nil {
		return nil, RequestQuery{}, err
	}
	state, err := s.callState(ctx, tick-1)
	if err != nil {
		return nil, RequestQuery{}, err
	}
	if patch != nil {
		if state, err = patched(state, patch); err != nil {
			return nil, RequestQuery{}, &InputError{Err: err}
		}
	}
	if entity == "" {
		ids, err := c.Entities(phase, state)
		if err != nil {
			return nil, RequestQuery{}, err
		}
		if len(ids) != 1 {
			return nil, RequestQuery{}, inputErrorf("--entity: whom is the call for? %s", orEntities(phase, ids))
		}
		entity = ids[0]
	}
	q := RequestQuery{Phase: phase, Entity: entity, Tick: tick - 1, State: state, Store: s.store, Depth: s.settings.Depth}
	call, err := c.CallAt(ctx, q)
	return call, q, err
}

// callState is StateAt(tick), the last one read kept: an eval makes many
// calls from the state of one tick, which kinds read and never change.
func (s *Session) callState(ctx context.Context, tick int) (any, error) {
	s.called.Lock()
	defer s.called.Unlock()
	if s.called.state != nil && s.called.tick == tick {
		return s.called.state, nil
	}
	state, err := s.StateAt(ctx, tick, false)
	if err == nil {
		s.called.tick, s.called.state = tick, state
	}
	return state, err
}

// Entities lists whom phase calls at tick (1 .. latest+1).
func (s *Session) Entities(ctx context.Context, phase string, tick int) ([]string, error) {
	c, err := s.caller()
	if err != nil {
		return nil, err
	}
	if err := s.CallTick(tick); err != nil {
		return nil, err
	}
	state, err := s.callState(ctx, tick-1)
	if err != nil {
		return nil, err
	}
	return c.Entities(phase, state)
}

// Judge is the kind's reading of res, the answer to the call of q.
func (s *Session) Judge(q RequestQuery, res llm.Result) Verdict {
	c, err := s.caller()
	if err != nil {
		return Verdict{}
	}
	return c.Judge(q, res)
}

// KindAssertions are the eval assertions the session's kind defines.
func (s *Session) KindAssertions() map[string]KindAssertion {
	if c, ok := s.Kind.(Caller); ok {
		return c.Assertions()
	}
	return nil
}

// TryClient is a model client for calls made outside a run (`prompts
// try`, `eval`): the session's endpoints and limits, a cassette when one
// is set, and no history of its own (each call carries its past). It
// needs Settings.LLM; with no endpoint configured the error says how to
// configure one. No lock is taken and nothing is written to state.db.
func (s *Session) TryClient(logger *slog.Logger) (*llm.Client, error) {
	if s.settings.LLM == nil {
		return nil, errors.New("session: TryClient needs Settings.LLM")
	}
	e, err := s.settings.LLM()
	if err != nil && !(e.BaseURL == "" && s.settings.Cassette.ReplayOnly()) {
		return nil, err
	}
	e.Depth, e.Logger, e.Cassette = 0, logger, s.settings.Cassette
	c, err := llm.New(e)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return c, nil
}

// Try makes the call phase makes for entity at tick through client, and
// has the kind read the answer. It commits nothing.
func (s *Session) Try(ctx context.Context, client *llm.Client, phase, entity string, tick int) (*Trial, error) {
	call, q, err := s.Call(ctx, phase, entity, tick)
	if err != nil {
		return nil, err
	}
	t := &Trial{Call: call}
	t.Result = call.Send(ctx, client)
	if ctx.Err() != nil && t.Result.Err != nil {
		return nil, ctx.Err()
	}
	t.Verdict = s.Judge(q, t.Result)
	return t, nil
}

// patched is state (a pointer to the kind's state) with the merge patch
// applied, as a new value of the same type.
func patched(state any, patch json.RawMessage) (any, error) {
	doc, err := json.Marshal(state)
	if err != nil {
		return nil, err
	}
	var base, p any
	if err := json.Unmarshal(doc, &base); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil, fmt.Errorf("state patch: %w", err)
	}
	merged, err := json.Marshal(mergePatch(base, p))
	if err != nil {
		return nil, err
	}
	out := reflect.New(reflect.TypeOf(state).Elem())
	dec := json.NewDecoder(bytes.NewReader(merged))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out.Interface()); err != nil {
		return nil, fmt.Errorf("state patch does not fit the state: %w", err)
	}
	return out.Interface(), nil
}

// mergePatch is doc with patch applied as RFC 7386 says: objects merge
// key by key, null removes a key, anything else replaces. doc is not
// changed.
func mergePatch(doc, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	base, _ := doc.(map[string]any)
	d := make(map[string]any, len(base)+len(p))
	maps.Copy(d, base)
	for k, v := range p {
		if v == nil {
			delete(d, k)
			continue
		}
		d[k] = mergePatch(d[k], v)
	}
	return d
}

// orEntities is the sentence naming the entities a phase calls, for an
// error about one that is not among them.
func orEntities(phase string, ids []string) string {
	if len(ids) == 0 {
		return fmt.Sprintf("phase %s calls no one at that tick", phase)
	}
	return fmt.Sprintf("phase %s calls %s", phase, strings.Join(ids, ", "))
}
