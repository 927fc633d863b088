package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Message is one message of a call's request as a caller hands it to
// CommitTick (CallRecord.Messages). The store keeps each long content once
// in its texts table, however many calls send it: a phase's calls share
// instructions, and every call of an entity resends its past exchanges, so
// storing every request whole made state.db grow with the history depth
// times the world (688 MB of 870 MB after 200 ticks at 100 characters).
type Message struct {
	Role       string          `json:"role"`
	Content    string          `json:"content"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// storedMessage is a Message in calls.request_json: Content inline when
// short, else Ref, the key of its text.
type storedMessage struct {
	Role       string          `json:"role"`
	Content    *string         `json:"content,omitempty"`
	Ref        string          `json:"ref,omitempty"`
	ToolCalls  json.RawMessage `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// minSharedText is the shortest content kept in texts; shorter ones are
// cheaper inline than by reference. The past exchanges in history are kept
// the same way, so an exchange and the requests that resend it share one
// text.
const minSharedText = 128

// textKey is the key of a text: the first 16 bytes of its SHA-256, in hex.
func textKey(text string) string {
	// Hashed through a small buffer: sha256 takes bytes, and converting a
	// prompt of kilobytes to them allocated a copy of every text of a tick.
	h := sha256.New()
	var buf [512]byte
	for len(text) > 0 {
		n := copy(buf[:], text)
		h.Write(buf[:n]) // a hash does not fail
		text = text[n:]
	}
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0])[:16])
}

// textCache holds the keys of the texts the last commit referenced, which
// are stored: the next commit, which resends most of them (the system
// prompts, the past exchanges), writes only the others.
type textCache struct {
	mu   sync.Mutex
	keys map[string]struct{}
}

func (c *textCache) has(key string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.keys[key]
	return ok
}

func (c *textCache) replace(keys map[string]struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.keys = keys
}

// requestJSON is how calls.request_json keeps msgs, each long content
// written to texts (once: INSERT OR IGNORE, and not at all when the last
// commit referenced it). used collects the keys referenced.
func (s *Store) requestJSON(w *tickWriter, msgs []Message, used map[string]struct{}) string {
	return s.writePrepared(w, s.PrepareRequest(msgs), used)
}

// PreparedRequest is a call's messages in the form calls.request_json keeps
// them, with the long texts they refer to that the store may not hold yet,
// compressed: what a tick keeps of a call until its commit, in place of the
// prompts themselves (which were most of a tick's memory).
type PreparedRequest struct {
	json  string
	refs  []string     // the keys of the texts the request refers to
	texts []storedText // those of them the store did not hold when prepared
}

type storedText struct {
	key  string
	body []byte // as the texts table keeps it (see deflate)
}

// PrepareRequest does, outside the commit and concurrently with other calls,
// what the commit of msgs would: scrub and bound each content, hash the
// long ones, and compress those the last commit did not refer to. It is
// safe for concurrent use; CommitTick then only writes.
func (s *Store) PrepareRequest(msgs []Message) *PreparedRequest {
	p := &PreparedRequest{}
	out := make([]storedMessage, len(msgs))
	for i, m := range msgs {
		content := bounded(s.clean(m.Content), MaxStoredRequest)
		out[i] = storedMessage{Role: m.Role, ToolCalls: json.RawMessage(s.clean(string(m.ToolCalls))), ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) == 0 {
			out[i].ToolCalls = nil
		}
		if len(content) < minSharedText {
			out[i].Content = &content
			continue
		}
		key := textKey(content)
		out[i].Ref = key
		p.refs = append(p.refs, key)
		if !s.texts.has(key) {
			p.texts = append(p.texts, storedText{key, deflate(content)})
		}
	}
	b, err := json.Marshal(out)
	if err != nil { // strings and raw JSON always marshal
		b = []byte("[]")
	}
	p.json = string(b)
	return p
}

// writePrepared writes the texts of p that neither this commit nor the last
// one referred to, and returns its request_json.
func (s *Store) writePrepared(w *tickWriter, p *PreparedRequest, used map[string]struct{}) string {
	for _, t := range p.texts {
		writeText(w, t.key, func() []byte { return t.body }, used)
	}
	for _, key := range p.refs {
		used[key] = struct{}{}
	}
	return p.json
}

// writeText writes the text under key, its body made by body, unless this
// commit has written or referred to it already (used, which it joins).
func writeText(w *tickWriter, key string, body func() []byte, used map[string]struct{}) {
	if _, done := used[key]; !done {
		w.exec("texts", "INSERT INTO texts (key, body) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, body())
	}
	used[key] = struct{}{}
}

// putText stores text (already scrubbed and bounded) in texts, compressed,
// unless this commit or the last one referenced it, and returns its key.
func (s *Store) putText(w *tickWriter, text string, used map[string]struct{}) string {
	key := textKey(text)
	if !s.texts.has(key) {
		writeText(w, key, func() []byte { return deflate(text) }, used)
	}
	used[key] = struct{}{}
	return key
}

// getText reads the text stored under key.
func (s *Store) getText(ctx context.Context, key string) (string, error) {
	var body []byte
	if err := s.db.QueryRowContext(ctx, "SELECT body FROM texts WHERE key = ?", key).Scan(&body); err != nil {
		return "", fmt.Errorf("text %s: %w", key, err)
	}
	text, err := inflate(body)
	if err != nil {
		return "", fmt.Errorf("text %s: %w", key, err)
	}
	return text, nil
}

// How a text's body is written: its first byte says how the rest holds it.
const (
	bodyPlain    = 0 // as is
	bodyDeflated = 1 // DEFLATE-compressed
)

// minDeflated is the shortest text worth compressing: below it, the
// compressor's fixed cost per text outweighs the bytes it saves.
const minDeflated = 1024

// deflate writes text as a texts body: prompts are English and JSON, which
// shrink about three times. The format is DEFLATE (RFC 1951), written by
// klauspost/compress, which does it in about two thirds of the standard
// library's time at the fastest level. A deflater is pooled with its
// scratch buffer (it holds about a megabyte of tables), and the body is
// copied out at its size: a tick holds thousands of them until its commit.
func deflate(text string) []byte {
	if len(text) < minDeflated {
		return append([]byte{bodyPlain}, text...)
	}
	d := deflaters.Get().(*deflater)
	defer deflaters.Put(d)
	d.out.Reset()
	d.out.WriteByte(bodyDeflated)
	d.zw.Reset(&d.out)
	for len(text) > 0 { // through a small buffer: Write takes bytes
		n := copy(d.in[:], text)
		d.zw.Write(d.in[:n]) // a bytes.Buffer does not fail
		text = text[n:]
	}
	d.zw.Close()
	return bytes.Clone(d.out.Bytes())
}

type deflater struct {
	zw  *flate.Writer
	in  [4096]byte
	out bytes.Buffer
}

// inflate reads a texts body back.
func inflate(body []byte) (string, error) {
	if len(body) == 0 {
		return "", errors.New("empty body")
	}
	switch body[0] {
	case bodyPlain:
		return string(body[1:]), nil
	case bodyDeflated:
		text, err := io.ReadAll(flate.NewReader(bytes.NewReader(body[1:])))
		return string(text), err
	default:
		return "", fmt.Errorf("body of unknown form %d", body[0])
	}
}

var deflaters = sync.Pool{New: func() any {
	zw, _ := flate.NewWriter(nil, flate.BestSpeed) // the level is valid
	return &deflater{zw: zw}
}}

// expandRequest turns calls.request_json back into the messages as sent,
// as JSON: a stored reference is replaced by its text.
func (s *Store) expandRequest(ctx context.Context, stored string) (string, error) {
	var msgs []storedMessage
	if err := json.Unmarshal([]byte(stored), &msgs); err != nil {
		return stored, nil // written whole by an earlier arbiter, or cut at MaxStoredRequest
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		switch {
		case m.Ref != "":
			text, err := s.getText(ctx, m.Ref)
			if err != nil {
				return "", fmt.Errorf("message %d: %w", i+1, err)
			}
			out[i].Content = text
		case m.Content != nil:
			out[i].Content = *m.Content
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	return string(b), nil
}
