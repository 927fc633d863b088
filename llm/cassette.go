package llm

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// A Cassette is a file of chat completions, one JSON object a line: what a
// client sent (the request in its canonical form, with the entity, phase and
// tick it was for) and what came of it (the server's answer, or the error the
// call ended with, with the retries it went through). A client given a
// cassette to record (RecordCassette) appends every chat completion it makes
// to it as the call ends; a client given one to replay (ReplayCassette)
// answers from it without contacting the endpoint.
//
// One line is one chat completion as create makes it: a structured call and
// each of its repair re-asks, each turn of a tool conversation and each chat
// message are lines of their own. The retries of one request (a 500, then an
// answer) are kept inside its line, with the attempts made, so that a replay
// ends every call as the recorded one ended (the same failures, fallbacks
// and events) without waiting out backoffs that served no purpose, and a call
// cut short by a phase deadline fails again instead of asking for the
// attempts the deadline prevented.
//
// A line's key is the SHA-256 of its request in canonical JSON (model,
// messages, response format and schema, tools, sampling parameters: every
// field sent). Identical requests are answered in the order they were
// recorded, the same entity's first. When two recording runs asked the same
// request for the same entity at the same tick (a tick that did not commit,
// asked again after a resume), the later run's answers are the ones replayed:
// the run state holds only what they led to. Nothing a server could echo
// back is written unscrubbed: every line passes through the client's Secrets,
// and no header or URL is recorded.
type Cassette struct {
	path   string
	replay bool
	live   bool // replay: a request with no recorded answer goes to the endpoint

	mu      sync.Mutex
	f       *os.File // record
	created bool     // record: this cassette created the file
	wrote   int      // record: lines written
	session int      // record: the number of this recording run in the file
	werr    error    // record: the first failed write
	queues  map[string][]*cassetteEntry
	models  []string // replay: the models the recorded requests asked, sorted
}

// maxCassetteLine bounds one line of a cassette, a request and its answer.
const maxCassetteLine = 64 << 20

// CassetteError is a cassette that cannot be read, or a line of it that is
// not a recorded call. Line is 0 when the file as a whole is at fault.
type CassetteError struct {
	Path string
	Line int
	Err  error
}

func (e *CassetteError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("cassette %s line %d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("cassette %s: %v", e.Path, e.Err)
}

func (e *CassetteError) Unwrap() error { return e.Err }

// cassetteEntry is one line of a cassette.
type cassetteEntry struct {
	Key      string                         `json:"key"`
	Session  int                            `json:"session,omitempty"`
	Entity   string                         `json:"entity,omitempty"`
	Phase    string                         `json:"phase,omitempty"`
	Tick     int                            `json:"tick,omitempty"`
	Request  json.RawMessage                `json:"request"`
	Attempts int                            `json:"attempts"`
	Retries  []cassetteRetry                `json:"retries,omitempty"`
	Response *openai.ChatCompletionResponse `json:"response,omitempty"`
	Error    *cassetteError                 `json:"error,omitempty"`
}

// cassetteError is an *Error as a cassette keeps it (its cause is not kept).
type cassetteError struct {
	Kind         string `json:"kind"`
	Status       int    `json:"status,omitempty"`
	Code         string `json:"code,omitempty"`
	Message      string `json:"message"`
	Hint         string `json:"hint,omitempty"`
	RetryAfterMS int64  `json:"retry_after_ms,omitempty"`
}

// cassetteRetry is a failure a recorded call was retried after, and whether
// the next try got past it.
type cassetteRetry struct {
	cassetteError
	Success bool `json:"success"`
}

// callSite names what a chat completion is for, for the cassette and its
// errors: the entity, its phase and the tick (0 when the caller has none).
type callSite struct {
	Entity string
	Phase  string
	Tick   int
}

// RecordCassette opens path to record into, creating it with mode 0600 when
// it does not exist. An existing file must be a cassette (every line is
// checked first, so a mistyped path never has lines appended to it); the
// calls are appended after its lines, as a new recording run.
func RecordCassette(path string) (*Cassette, error) {
	exists, err := regularOrAbsent(path)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, &CassetteError{Path: path, Err: err}
	}
	c := &Cassette{path: path, f: f, created: !exists}
	entries, end, err := readCassette(f, path)
	if err == nil && end > 0 && end != '\n' {
		_, err = f.Write([]byte{'\n'})
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	for _, e := range entries {
		c.session = max(c.session, e.Session)
	}
	c.session++
	return c, nil
}

// ReplayCassette reads the cassette at path to answer from. With live, a
// request it has no answer for is sent to the endpoint; without, the call
// fails with ErrCassette.
func ReplayCassette(path string, live bool) (*Cassette, error) {
	if _, err := regularOrAbsent(path); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, &CassetteError{Path: path, Err: err}
	}
	defer f.Close()
	entries, _, err := readCassette(f, path)
	if err != nil {
		return nil, err
	}
	return &Cassette{path: path, replay: true, live: live, queues: queue(entries), models: recordedModels(entries)}, nil
}

// recordedModels lists the models the requests of entries asked, each once.
func recordedModels(entries []*cassetteEntry) []string {
	var models []string
	for _, e := range entries {
		var req struct {
			Model string `json:"model"`
		}
		if json.Unmarshal(e.Request, &req) == nil && req.Model != "" && !slices.Contains(models, req.Model) {
			models = append(models, req.Model)
		}
	}
	slices.Sort(models)
	return models
}

// regularOrAbsent reports whether path exists, and refuses a folder, a
// device or a pipe.
func regularOrAbsent(path string) (bool, error) {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, &CassetteError{Path: path, Err: err}
	case !info.Mode().IsRegular():
		return true, &CassetteError{Path: path, Err: fmt.Errorf("not a regular file (%s)", info.Mode().Type())}
	}
	return true, nil
}

// queue orders the entries to replay by key: the answers of the latest
// recording run that asked a request for an entity at a tick, in file order.
func queue(entries []*cassetteEntry) map[string][]*cassetteEntry {
	type site struct {
		key, entity string
		tick        int
	}
	latest := map[site]int{}
	for _, e := range entries {
		s := site{e.Key, e.Entity, e.Tick}
		latest[s] = max(latest[s], e.Session)
	}
	q := map[string][]*cassetteEntry{}
	for _, e := range entries {
		if e.Session == latest[site{e.Key, e.Entity, e.Tick}] {
			q[e.Key] = append(q[e.Key], e)
		}
	}
	return q
}

// Replaying reports whether the cassette answers calls (else it records them).
func (c *Cassette) Replaying() bool { return c != nil && c.replay }

// ReplayOnly reports whether calls never reach the endpoint: a replay
// without --replay-missing live.
func (c *Cassette) ReplayOnly() bool { return c != nil && c.replay && !c.live }

// Unused is how many recorded answers a replay has not given (yet).
func (c *Cassette) Unused() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, q := range c.queues {
		n += len(q)
	}
	return n
}

// Close ends a recording: it closes the file, removes it when this cassette
// created it and recorded nothing, and returns the first write that failed.
func (c *Cassette) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.f == nil {
		return nil
	}
	err := c.f.Close()
	c.f = nil
	if c.created && c.wrote == 0 {
		if rerr := os.Remove(c.path); err == nil {
			err = rerr
		}
	}
	if c.werr != nil {
		return c.werr
	}
	if err != nil {
		return &CassetteError{Path: c.path, Err: err}
	}
	return nil
}

// take removes and returns the next recorded answer to the request of key,
// the entity's own first.
func (c *Cassette) take(key, entity string) (*cassetteEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[key]
	if len(q) == 0 {
		return nil, false
	}
	i := 0
	for j, e := range q {
		if e.Entity == entity {
			i = j
			break
		}
	}
	e := q[i]
	c.queues[key] = append(q[:i:i], q[i+1:]...)
	return e, true
}

// write appends one line and returns the failure, which the cassette keeps:
// a recording with a line missing no longer replays its run.
func (c *Cassette) write(line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.werr != nil {
		return c.werr
	}
	if c.f == nil {
		c.werr = &CassetteError{Path: c.path, Err: errors.New("write after Close")}
		return c.werr
	}
	if _, err := c.f.Write(append(line, '\n')); err != nil {
		c.werr = &CassetteError{Path: c.path, Err: fmt.Errorf("recording stopped: %w", err)}
		return c.werr
	}
	c.wrote++
	return nil
}

// taped makes the chat completion cr through the client's cassette:
// recorded after it is made live, or answered from the recording.
func (c *Client) taped(ctx context.Context, log *slog.Logger, recs *[]Recovery, who callSite, avoid string, cr openai.ChatCompletionRequest) (openai.ChatCompletionResponse, route, Usage, *Error) {
	tape, secrets := c.cfg.Cassette, c.class.secrets
	key, request, err := cassetteKey(cr, secrets)
	if err != nil {
		return openai.ChatCompletionResponse{}, route{}, Usage{}, &Error{Kind: KindBadRequest, Err: err,
			Message: "request of " + who.Entity + " cannot be encoded: " + err.Error()}
	}
	if tape.replay {
		if e, ok := tape.take(key, who.Entity); ok {
			resp, n, u, err := c.replayed(e, recs)
			return resp, route{attempts: n}, u, err
		}
		if !tape.live {
			return openai.ChatCompletionResponse{}, route{}, Usage{}, tape.miss(key, who, cr)
		}
		log.Info("no recorded answer in the cassette; asking the endpoint", "cassette", tape.path, "key", key[:12])
		return c.live(ctx, log, recs, who.Phase, avoid, cr)
	}

	before := 0
	if recs != nil {
		before = len(*recs)
	}
	resp, rt, usage, callErr := c.live(ctx, log, recs, who.Phase, avoid, cr)
	if callErr != nil && (callErr.Kind == KindCanceled || errors.Is(ctx.Err(), context.Canceled)) {
		// An interrupted call is no answer: its tick is rolled back and
		// asked again when the run resumes.
		return resp, rt, usage, callErr
	}
	e := &cassetteEntry{Key: key, Session: tape.session, Entity: who.Entity, Phase: who.Phase, Tick: who.Tick,
		Request: request, Attempts: rt.attempts}
	if recs != nil {
		for _, r := range (*recs)[before:] {
			e.Retries = append(e.Retries, cassetteRetry{cassetteError: keptError(r.Err), Success: r.Success})
		}
	}
	if callErr != nil {
		k := keptError(callErr)
		e.Error = &k
	} else {
		e.Response = &resp
	}
	line, err := json.Marshal(e)
	if err == nil {
		line = []byte(secrets.Scrub(string(line)))
		err = tape.write(line)
	}
	if err != nil {
		return resp, rt, usage, &Error{Kind: KindCassette, Attempts: rt.attempts, Err: err,
			Message: fmt.Sprintf("the call of %s was made but could not be recorded: %v", who.Entity, err),
			Hint:    "the cassette no longer holds the whole run; free the disk or record to another file"}
	}
	return resp, rt, usage, callErr
}

// replayed ends a call as the recording says it ended.
func (c *Client) replayed(e *cassetteEntry, recs *[]Recovery) (openai.ChatCompletionResponse, int, Usage, *Error) {
	if recs != nil {
		for _, r := range e.Retries {
			*recs = append(*recs, Recovery{Strategy: StrategyRetry, Err: r.err(e.Attempts), Success: r.Success})
		}
	}
	if e.Error != nil {
		return openai.ChatCompletionResponse{}, e.Attempts, Usage{}, e.Error.err(e.Attempts)
	}
	u := usageOf(e.Response.Usage)
	c.usage.add(u)
	return *e.Response, e.Attempts, u, nil
}

// miss is the error of a request the cassette has no answer for.
func (c *Cassette) miss(key string, who callSite, cr openai.ChatCompletionRequest) *Error {
	what := who.Entity
	if what == "" {
		what = "a call"
	}
	if who.Tick > 0 {
		what += fmt.Sprintf(" at tick %d", who.Tick)
	}
	if who.Phase != "" {
		what += " (phase " + who.Phase + ")"
	}
	hint := "the run asked what the recorded run did not (changed files, prompts, settings or model?); record again, or replay with --replay-missing live to ask the endpoint"
	if len(c.models) > 0 && !slices.Contains(c.models, cr.Model) {
		// The likeliest miss of all: the same run under another model.
		hint = fmt.Sprintf("the cassette was recorded with model %s, not %s: replay with --model %s (or ARBITER_LLM_MODEL=%s), or record again",
			strings.Join(c.models, ", "), cr.Model, c.models[0], c.models[0])
	}
	return &Error{Kind: KindCassette,
		Message: fmt.Sprintf("cassette %s has no recorded answer for %s: request %s, model %s, %d messages",
			c.path, what, key[:12], cr.Model, len(cr.Messages)),
		Hint: hint}
}

// keptError is e as a cassette keeps it.
func keptError(e *Error) cassetteError {
	return cassetteError{Kind: e.Kind.String(), Status: e.StatusCode, Code: e.Code, Message: e.Message,
		Hint: e.Hint, RetryAfterMS: e.RetryAfter.Milliseconds()}
}

// err is the *Error a kept error stands for; its kind was checked on reading.
func (k cassetteError) err(attempts int) *Error {
	kind, _ := kindNamed(k.Kind)
	return &Error{Kind: kind, Attempts: attempts, StatusCode: k.Status, Code: k.Code, Message: k.Message,
		Hint: k.Hint, RetryAfter: time.Duration(k.RetryAfterMS) * time.Millisecond}
}

// kindNamed is the Kind whose String is name.
func kindNamed(name string) (ErrorKind, bool) {
	for k, n := range kindNames {
		if n == name {
			return ErrorKind(k), true
		}
	}
	return KindUnknown, false
}

// cassetteKey returns the key of cr and its request as a cassette keeps it:
// the JSON sent, canonical (object keys sorted, no HTML escaping) and
// scrubbed of secrets. Every call goes through it, so the request is
// canonicalised again only when scrubbing changed it (a secret in a key
// could change their order); canonical JSON is its own canonical form.
func cassetteKey(cr openai.ChatCompletionRequest, secrets Secrets) (string, json.RawMessage, error) {
	raw, err := json.Marshal(cr)
	if err != nil {
		return "", nil, err
	}
	c, err := canonicalJSON(raw)
	if err != nil {
		return "", nil, err
	}
	if s := secrets.Scrub(string(c)); s != string(c) {
		return requestKey([]byte(s))
	}
	return keyOf(c), c, nil
}

// requestKey canonicalises a kept request and returns its key and form.
func requestKey(request []byte) (string, json.RawMessage, error) {
	c, err := canonicalJSON(request)
	if err != nil {
		return "", nil, err
	}
	return keyOf(c), c, nil
}

// keyOf is the key of a canonical request.
func keyOf(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:])
}

// canonicalJSON re-encodes one JSON value with object keys sorted, numbers
// as written and no HTML escaping.
func canonicalJSON(raw []byte) ([]byte, error) {
	v, err := parseJSON(string(raw))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// readCassette reads every line of a cassette and checks it: one JSON object
// of the known fields, a request object whose key matches it (a line without
// a key gets it computed, for cassettes written by hand), and either a
// response or an error of a known kind. It also returns the file's last
// byte (0 when empty), so that a recording can end an unfinished line.
func readCassette(r io.Reader, path string) ([]*cassetteEntry, byte, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var (
		entries []*cassetteEntry
		last    byte
	)
	for n := 1; ; n++ {
		line, err := readLine(br)
		if len(line) > 0 {
			last = line[len(line)-1]
		}
		if err != nil && err != io.EOF {
			return nil, 0, &CassetteError{Path: path, Line: n, Err: err}
		}
		if trimmed := bytes.TrimSpace(line); len(trimmed) > 0 {
			e, perr := parseCassetteLine(trimmed)
			if perr != nil {
				return nil, 0, &CassetteError{Path: path, Line: n, Err: perr}
			}
			entries = append(entries, e)
		}
		if err == io.EOF {
			return entries, last, nil
		}
	}
}

// readLine reads one line, its newline included, of at most
// maxCassetteLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		part, err := br.ReadSlice('\n')
		if len(line)+len(part) > maxCassetteLine {
			return nil, fmt.Errorf("line longer than %d MiB", maxCassetteLine>>20)
		}
		line = append(line, part...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
}

// parseCassetteLine reads and checks one line.
func parseCassetteLine(line []byte) (*cassetteEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	e := new(cassetteEntry)
	if err := dec.Decode(e); err != nil {
		return nil, fmt.Errorf("not a recorded call: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a recorded call: more than one JSON value on the line")
	}
	if req := bytes.TrimSpace(e.Request); len(req) == 0 || req[0] != '{' {
		return nil, errors.New("no request object")
	}
	key, request, err := requestKey(e.Request)
	if err != nil {
		return nil, fmt.Errorf("request: %v", err)
	}
	switch {
	case e.Key == "":
		e.Key = key
	case e.Key != key:
		return nil, fmt.Errorf("key %.12s… does not match its request (%.12s…): the request was edited; remove the key to have it computed", e.Key, key)
	}
	e.Request = request
	switch {
	case e.Response == nil && e.Error == nil:
		return nil, errors.New("neither a response nor an error")
	case e.Response != nil && e.Error != nil:
		return nil, errors.New("both a response and an error")
	case e.Attempts < 0 || e.Session < 0 || e.Tick < 0:
		return nil, errors.New("attempts, session and tick must not be negative")
	}
	if e.Attempts == 0 {
		e.Attempts = 1
	}
	kept := make([]cassetteError, 0, 1+len(e.Retries))
	if e.Error != nil {
		kept = append(kept, *e.Error)
	}
	for _, r := range e.Retries {
		kept = append(kept, r.cassetteError)
	}
	for _, k := range kept {
		if _, ok := kindNamed(k.Kind); !ok {
			return nil, fmt.Errorf("unknown error kind %q", k.Kind)
		}
	}
	return e, nil
}

// ParseErrorKind is the ErrorKind whose String is name, for an error read
// back from a file (an eval's cached answer).
func ParseErrorKind(name string) (ErrorKind, bool) { return kindNamed(name) }
