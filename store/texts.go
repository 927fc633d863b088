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
	"slices"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/s2"
)

// Message is one message of a call's request as a caller hands it to
// CommitTick (CallRecord.Messages). The store keeps each long content once
// in its texts table, however many calls send it: a phase's calls share
// instructions, and every call of an entity resends its past exchanges, so
// storing every request whole made state.db grow with the history depth
// times the world.
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

// textID is a text's key as a set of keys holds it: its 16 bytes, not
// their 32 in hex, and no allocation of its own. A commit at 100,000
// characters refers to about 440,000 texts, and the store holds the set of
// the last commit's besides.
type textID [16]byte

// idOf is key's textID, and false when key is not one textKey makes
// (upper-case hex decodes too, but its id is another key's).
func idOf(key string) (id textID, ok bool) {
	if len(key) != hex.EncodedLen(len(id)) {
		return id, false
	}
	if _, err := hex.Decode(id[:], []byte(key)); err != nil {
		return id, false
	}
	return id, id.key() == key
}

// key is id in the form textKey makes.
func (id textID) key() string { return hex.EncodeToString(id[:]) }

// keySet is a set of text keys.
type keySet map[textID]struct{}

// add puts key in the set; a key textKey could not have made is left out.
func (s keySet) add(key string) {
	if id, ok := idOf(key); ok {
		s[id] = struct{}{}
	}
}

func (s keySet) has(key string) bool {
	id, ok := idOf(key)
	if !ok {
		return false
	}
	_, in := s[id]
	return in
}

// textCache holds the keys of the texts the last commit referenced, which
// are stored: the next commit, which resends most of them (the system
// prompts, the past exchanges), writes only the others.
// Every call of a tick asks it, from its own goroutine, for each of its
// messages: the set is swapped whole, never changed, so they read it
// without a lock that every call would contend for.
type textCache struct {
	keys atomic.Pointer[keySet]
}

func (c *textCache) has(key string) bool {
	m := c.keys.Load()
	return m != nil && m.has(key)
}

// warm reports whether the store has committed a tick: before it, the
// cache knows none of the texts stored.
func (c *textCache) warm() bool { return c.keys.Load() != nil }

// replace makes keys the set; the caller no longer changes it.
func (c *textCache) replace(keys keySet) { c.keys.Store(&keys) }

// PreparedRequest is a call's messages in the form calls.request_json keeps
// them, with the long texts they refer to that the store may not hold yet,
// compressed: what a tick keeps of a call until its commit, in place of the
// prompts themselves (which were most of a tick's memory).
type PreparedRequest struct {
	json  string       // the keys of the texts it refers to are in it (requestRefs)
	texts []storedText // those of them the store did not hold when prepared
	// Once spooled (spoolRequest), json and texts are empty: they are in
	// file from off, the JSON (jsonLen bytes), the texts' keys, then
	// their bodies.
	file    *spoolFile
	off     int64
	jsonLen int32
	spooled []spooledText
}

type storedText struct {
	key  string
	held heldText
}

// PrepareRequest does, outside the commit and concurrently with other calls,
// what the commit of msgs would: scrub and bound each content, hash the
// long ones, and compress those the last commit did not refer to; then it
// writes the result to the store's spool (spoolRequest) until the commit.
// It is safe for concurrent use; CommitTick then only writes.
func (s *Store) PrepareRequest(msgs []Message) *PreparedRequest {
	p := s.prepare(msgs)
	s.spoolRequest(p)
	return p
}

// prepare is PrepareRequest held in memory.
func (s *Store) prepare(msgs []Message) *PreparedRequest {
	p := &PreparedRequest{}
	out := make([]storedMessage, len(msgs))
	for i, m := range msgs {
		out[i] = storedMessage{Role: m.Role, ToolCalls: json.RawMessage(s.clean(string(m.ToolCalls))), ToolCallID: m.ToolCallID}
		if len(m.ToolCalls) == 0 {
			out[i].ToolCalls = nil
		}
		// Most of a call's texts were in the last commit (the instructions,
		// the past exchanges), stored scrubbed and bounded: a content with
		// the key of one of them is that text, with nothing to scrub. Only
		// the others, most often the new prompt alone, are scanned for secrets.
		var key string
		if len(m.Content) >= minSharedText && len(m.Content) <= MaxStoredRequest {
			if key = textKey(m.Content); s.texts.has(key) {
				out[i].Ref = key
				continue
			}
		}
		content := bounded(s.clean(m.Content), MaxStoredRequest)
		if len(content) < minSharedText {
			out[i].Content = &content
			continue
		}
		if key == "" || content != m.Content {
			key = textKey(content)
		}
		out[i].Ref = key
		if !s.texts.has(key) {
			p.texts = append(p.texts, storedText{key, s.dicts.hold(content)})
		}
	}
	b, err := json.Marshal(out)
	if err != nil { // strings and raw JSON always marshal
		b = []byte("[]")
	}
	p.json = string(b)
	return p
}

// writePrepared has the commit write the texts of p that neither this
// commit nor the last one referred to, and returns what gives its
// request_json.
func (s *Store) writePrepared(w *tickWriter, p *PreparedRequest, used keySet) func() (string, error) {
	if p.file != nil {
		return s.writeSpooled(w, p, used)
	}
	for _, t := range p.texts {
		writeText(w, t.key, t.held.text, used)
	}
	// The keys are read back from the request rather than held beside it:
	// a tick's calls held each of their keys twice.
	for _, key := range requestRefs(p.json) {
		used.add(key)
	}
	return func() (string, error) { return p.json, nil }
}

// writeText has the commit write the text under key, its content given by
// text, unless it has written or referred to it already (used, which it
// joins). The texts are written together, by writeTexts.
func writeText(w *tickWriter, key string, text func() (string, error), used keySet) {
	if !used.has(key) {
		w.addText(pendingText{key: key, text: text})
	}
	used.add(key)
}

// pendingText is a text for the commit's blocks: a text of the texts table
// under key, or, with no key, a request whose place in its block is
// written to at.
type pendingText struct {
	key  string
	text func() (string, error)
	at   *[]byte
}

// putText stores text (already scrubbed and bounded) in texts, unless this
// commit or the last one referenced it, and returns its key.
func (s *Store) putText(w *tickWriter, text string, used keySet) string {
	key := textKey(text)
	if !s.texts.has(key) {
		writeText(w, key, func() (string, error) { return text, nil }, used)
	}
	used.add(key)
	return key
}

// getText reads the text stored under key.
func (s *Store) getText(ctx context.Context, key string) (string, error) {
	texts, err := s.textsOf(ctx, []string{key})
	if err != nil {
		return "", err
	}
	text, ok := texts[key]
	if !ok {
		return "", fmt.Errorf("text %s is missing", key)
	}
	return text, nil
}

// How a text's body is written: its first byte says how the rest holds it.
const (
	bodyPlain    = 0 // as is
	bodyDeflated = 1 // DEFLATE-compressed: written by versions before 5, still read
	bodyS2       = 2 // S2-compressed (klauspost/compress/s2, block format)
)

// minPacked is the shortest text worth compressing: below it, the
// compressor's fixed cost per text outweighs the bytes it saves.
const minPacked = 1024

// pack writes text as a texts body. S2 rather than DEFLATE: it shrinks
// English and JSON prompts somewhat less but in far less time, and every
// call's new texts are packed in the goroutine that made it, on the path of
// the tick. A packer is pooled with its buffers, and the body is copied out
// at its size: a tick holds thousands of them until its commit.
func pack(text string) []byte {
	if len(text) < minPacked {
		return append([]byte{bodyPlain}, text...)
	}
	p := packers.Get().(*packer)
	defer packers.Put(p)
	p.in = append(p.in[:0], text...) // s2 takes bytes
	size := 1 + s2.MaxEncodedLen(len(p.in))
	p.out = slices.Grow(p.out[:0], size)[:size]
	p.out[0] = bodyS2
	n := len(s2.Encode(p.out[1:], p.in)) // in p.out, which is large enough
	return bytes.Clone(p.out[:1+n])
}

type packer struct{ in, out []byte }

var packers = sync.Pool{New: func() any { return new(packer) }}

// unpack reads a texts body back.
func unpack(body []byte) (string, error) {
	if len(body) == 0 {
		return "", errors.New("empty body")
	}
	switch body[0] {
	case bodyPlain:
		return string(body[1:]), nil
	case bodyS2:
		text, err := s2.Decode(nil, body[1:])
		return string(text), err
	case bodyDeflated:
		text, err := io.ReadAll(flate.NewReader(bytes.NewReader(body[1:])))
		return string(text), err
	default:
		return "", fmt.Errorf("body of unknown form %d", body[0])
	}
}

// requestRefs lists the keys of the texts a stored calls.request_json
// refers to.
func requestRefs(stored string) []string {
	var msgs []storedMessage
	if json.Unmarshal([]byte(stored), &msgs) != nil {
		return nil
	}
	var keys []string
	for _, m := range msgs {
		if m.Ref != "" {
			keys = append(keys, m.Ref)
		}
	}
	return keys
}

// expandRequest turns calls.request_json back into the messages as sent,
// as JSON: a stored reference is replaced by its text, from texts.
func expandRequest(stored string, texts map[string]string) (string, error) {
	var msgs []storedMessage
	if err := json.Unmarshal([]byte(stored), &msgs); err != nil {
		return stored, nil // written whole by an earlier arbiter, or cut at MaxStoredRequest
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = Message{Role: m.Role, ToolCalls: m.ToolCalls, ToolCallID: m.ToolCallID}
		switch {
		case m.Ref != "":
			text, ok := texts[m.Ref]
			if !ok {
				return "", fmt.Errorf("message %d: text %s is missing", i+1, m.Ref)
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
