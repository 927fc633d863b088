package llm

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// The messages of a request are most of its bytes, and encoding/json
// escapes a string a byte at a time: appendMessages writes them itself,
// eight bytes at a time where nothing needs escaping, as encoding/json
// writes them. Everything else of the request is still encoding/json's.

// plainMessages reports whether every message is text only, which
// appendMessages writes: no content parts, function call or tool calls.
func plainMessages(msgs []openai.ChatCompletionMessage) bool {
	for _, m := range msgs {
		if m.MultiContent != nil || m.FunctionCall != nil || len(m.ToolCalls) > 0 {
			return false
		}
	}
	return true
}

// restPrefix is how encoding/json begins a wireRequest with no model and
// no messages; the fields after them follow.
const restPrefix = `{"model":"","messages":[]`

// encodePlain writes cr, whose messages are plainMessages, to buf as
// encodeChat does: the model and messages by hand, then what encoding/json
// writes of the rest of the request after restPrefix.
func encodePlain(buf *bytes.Buffer, cr openai.ChatCompletionRequest) error {
	begin := buf.Len()
	b := append(buf.AvailableBuffer(), `{"model":`...)
	b = appendString(b, cr.Model)
	b = append(b, `,"messages":`...)
	b = appendMessages(b, cr.Messages)
	buf.Write(b)
	start := buf.Len()
	rest := wireRequest{Messages: []wireMessage{}, ChatCompletionRequest: cr}
	var schema encodedSchema
	spliced := false
	if rf := cr.ResponseFormat; rf != nil && rf.JSONSchema != nil {
		schema, spliced = rf.JSONSchema.Schema.(encodedSchema)
		spliced = spliced && len(schema) > 0 // an empty one is encoding/json's null
	}
	if spliced { // encoded as null, then written in its place
		rf := *cr.ResponseFormat
		js := *rf.JSONSchema
		js.Schema = nil
		rf.JSONSchema = &js
		rest.ResponseFormat = &rf
	}
	if err := json.NewEncoder(buf).Encode(rest); err != nil {
		buf.Truncate(begin)
		return err
	}
	out := buf.Bytes()
	if !bytes.HasPrefix(out[start:], []byte(restPrefix)) { // cannot be: go-openai's fields changed
		buf.Truncate(begin)
		return encodeWire(buf, cr)
	}
	n := copy(out[start:], out[start+len(restPrefix):len(out)-1]) // less the prefix, and the newline Encode ends with
	buf.Truncate(start + n)
	if spliced && !spliceSchema(buf, start, schema) { // cannot be: go-openai's fields changed
		buf.Truncate(begin)
		return encodeWire(buf, cr)
	}
	return nil
}

// encodedSchema is a Request's Schema when SchemaEncoded says it is as
// encoding/json writes it: encodePlain writes it as it is, where
// encoding/json checks and compacts a json.RawMessage byte by byte, at every
// call (an arbiter's schema is kilobytes, and new at every call: a
// fiftieth of the engine's CPU). Encoded otherwise, it is a
// json.RawMessage.
type encodedSchema json.RawMessage

// MarshalJSON returns the schema as it is, null if empty (as a
// json.RawMessage).
func (s encodedSchema) MarshalJSON() ([]byte, error) {
	if len(s) == 0 {
		return []byte("null"), nil
	}
	return s, nil
}

// spliceSchema writes schema in place of the null that encoding/json wrote
// for it in the request in buf from start, and reports whether it found
// it: the first "schema" key after the first "response_format" key, since
// a quote in a string is escaped and every field before is a number, a
// boolean or a string (see openai.ChatCompletionRequest).
func spliceSchema(buf *bytes.Buffer, start int, schema encodedSchema) bool {
	out := buf.Bytes()
	rf := bytes.Index(out[start:], []byte(`"response_format":`))
	if rf < 0 {
		return false
	}
	from := start + rf
	at := bytes.Index(out[from:], []byte(`"schema":null`))
	if at < 0 {
		return false
	}
	at += from + len(`"schema":`)
	var small [256]byte
	tail := append(small[:0], out[at+len("null"):]...)
	buf.Truncate(at)
	buf.Write(schema)
	buf.Write(tail)
	return true
}

// appendMessages appends msgs as encoding/json encodes []wireMessage.
func appendMessages(b []byte, msgs []openai.ChatCompletionMessage) []byte {
	b = append(b, '[')
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"role":`...)
		b = appendString(b, m.Role)
		for _, f := range [...]struct{ key, value string }{
			{`,"content":`, m.Content},
			{`,"refusal":`, m.Refusal},
			{`,"name":`, m.Name},
			{`,"reasoning_content":`, m.ReasoningContent},
			{`,"tool_call_id":`, m.ToolCallID},
		} {
			if f.value != "" { // omitempty
				b = append(b, f.key...)
				b = appendString(b, f.value)
			}
		}
		b = append(b, '}')
	}
	return append(b, ']')
}

// appendString appends s as a JSON string exactly as encoding/json writes
// it, HTML-escaped: <, > and & as \u003c, \u003e and \u0026, U+2028 and
// U+2029 escaped, an invalid UTF-8 byte as \ufffd.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if i+8 <= len(s) && plainWord(word(s, i)) {
			i += 8
			continue
		}
		// A byte at a time to the end of the word, as encoding/json does.
		for end := min(i+8, len(s)); i < end; {
			c := s[i]
			if c < utf8.RuneSelf {
				if plainByte[c] {
					i++
					continue
				}
				b = append(b, s[start:i]...)
				switch c {
				case '\\', '"':
					b = append(b, '\\', c)
				case '\b':
					b = append(b, '\\', 'b')
				case '\f':
					b = append(b, '\\', 'f')
				case '\n':
					b = append(b, '\\', 'n')
				case '\r':
					b = append(b, '\\', 'r')
				case '\t':
					b = append(b, '\\', 't')
				default: // other control bytes, and <, > and &
					b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
				}
				i++
				start = i
				continue
			}
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b = append(b, s[start:i]...)
				b = append(b, `\ufffd`...)
			case r == '\u2028' || r == '\u2029':
				b = append(b, s[start:i]...)
				b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			default:
				i += size
				continue
			}
			i += size
			start = i
		}
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainByte tells the ASCII bytes written as they are.
var plainByte = func() (t [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// word is the eight bytes of s from i, little-endian.
func word(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// plainWord reports whether all eight bytes of x are plainByte, with the
// bit tricks of "Bit Twiddling Hacks" (a byte is zero, or below n, where
// the high bit of its lane is set after the subtraction): no byte below
// 0x20 or from 0x80, and none of " \ < > &.
func plainWord(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	q, bs, lt, gt, amp := x^(ones*'"'), x^(ones*'\\'), x^(ones*'<'), x^(ones*'>'), x^(ones*'&')
	bad := x | (x-ones*0x20)&^x | (q-ones)&^q | (bs-ones)&^bs | (lt-ones)&^lt | (gt-ones)&^gt | (amp-ones)&^amp
	return bad&highs == 0
}
