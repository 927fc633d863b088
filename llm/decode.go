package llm

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	openai "github.com/sashabaranov/go-openai"
)

// decodeValue decodes s, one JSON value between white space, to what
// encoding/json's Decoder with UseNumber gives: map[string]any (the last
// of a repeated key), []any, string, json.Number, bool and nil. It reports
// false for anything else, which parseJSON leaves to encoding/json for its
// error. It reads s where encoding/json's Decoder copied it into buffers it
// grew, and decodes without its scanner's call per byte: every answer of
// every call goes through it (FuzzDecodeValue holds the two equal).
func decodeValue(s string) (any, bool) {
	d := valueDecoder{s: s}
	v, ok := d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(s)
}

type valueDecoder struct {
	s     string
	i     int
	share bool // strings are parts of s, not copies
}

// maxDepth is encoding/json's nesting limit, past which it fails.
const maxDepth = 10000

func (d *valueDecoder) space() {
	for d.i < len(d.s) {
		switch d.s[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *valueDecoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.s) {
		return nil, false
	}
	switch c := d.s[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		if s, ok := d.string(); ok {
			return s, true
		}
		return nil, false
	case c == '-' || c >= '0' && c <= '9':
		if n, ok := d.number(); ok {
			return json.Number(n), true
		}
		return nil, false
	}
	for _, lit := range [...]struct {
		text  string
		value any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if d.literal(lit.text) {
			return lit.value, true
		}
	}
	return nil, false
}

func (d *valueDecoder) object(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // {
	m := map[string]any{}
	d.space()
	if d.i < len(d.s) && d.s[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != '"' {
			return nil, false
		}
		key, ok := d.string()
		if !ok {
			return nil, false
		}
		d.space()
		if d.i >= len(d.s) || d.s[d.i] != ':' {
			return nil, false
		}
		d.i++
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[key] = v
		if more, ok := d.after('}'); !ok {
			return nil, false
		} else if !more {
			return m, true
		}
	}
}

func (d *valueDecoder) array(depth int) (any, bool) {
	if depth > maxDepth {
		return nil, false
	}
	d.i++ // [
	a := make([]any, 0)
	d.space()
	if d.i < len(d.s) && d.s[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		if more, ok := d.after(']'); !ok {
			return nil, false
		} else if !more {
			return a, true
		}
	}
}

// number reads a number as JSON writes it, as its text.
func (d *valueDecoder) number() (string, bool) {
	s, start := d.s, d.i
	i := start
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i = digits(s, i)
	default:
		return "", false
	}
	if i < len(s) && s[i] == '.' {
		if i++; i >= len(s) || !isDigit(s[i]) {
			return "", false
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return "", false
		}
		i = digits(s, i)
	}
	d.i = i
	return d.clone(s[start:i]), true
}

// clone is s, a part of d.s, as a string of its own unless d shares d.s.
func (d *valueDecoder) clone(s string) string {
	if d.share {
		return s
	}
	return strings.Clone(s)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func digits(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// string reads a string: its escapes undone, each byte of invalid UTF-8 and
// each lone surrogate made U+FFFD, as encoding/json does.
func (d *valueDecoder) string() (string, bool) {
	s := d.s
	start := d.i + 1
	// Most strings have no escape and are valid UTF-8: copied whole.
	i := start
	for i < len(s) {
		c := s[i]
		if c == '"' {
			d.i = i + 1
			return d.clone(s[start:i]), true
		}
		if c == '\\' || c < ' ' || c >= utf8.RuneSelf {
			break
		}
		i++
	}
	var b []byte
	b = append(b, s[start:i]...)
	for i < len(s) {
		switch c := s[i]; {
		case c == '"':
			d.i = i + 1
			return string(b), true
		case c < ' ':
			return "", false
		case c == '\\':
			if i+1 >= len(s) {
				return "", false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				r, ok := hex4(s, i+2)
				if !ok {
					return "", false
				}
				i += 6
				if utf16.IsSurrogate(r) {
					r2, ok := rune(-1), false
					if i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
						r2, ok = hex4(s, i+2)
					}
					if dec := utf16.DecodeRune(r, r2); ok && dec != utf8.RuneError {
						i += 6
						b = utf8.AppendRune(b, dec)
						continue
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
				continue
			default:
				return "", false
			}
			i += 2
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			b = utf8.AppendRune(b, r) // U+FFFD for a byte that is not UTF-8
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	r, err := strconv.ParseUint(s[i:i+4], 16, 32) // with a base, no sign, prefix or underscore
	return rune(r), err == nil
}

// decodeChatAnswer reads the chat completion answers of OpenAI-compatible
// servers without reflection: an object of id, object, created, model,
// system_fingerprint, service_tier, choices (each of index, message of
// role, content and refusal, finish_reason and a null logprobs) and usage
// (prompt_tokens_details included), each key once and as written here,
// each value of its field's type. It reports false for anything else,
// which decodeChat leaves to encoding/json; for what it reads it gives
// encoding/json's value (FuzzDecodeChat). Its strings share one copy of
// body.
func decodeChatAnswer(body []byte) (openai.ChatCompletionResponse, bool) {
	d := valueDecoder{s: string(body), share: true}
	var resp openai.ChatCompletionResponse
	ok := d.fields(func(key string) bool {
		switch key {
		case "id":
			return d.text(&resp.ID)
		case "object":
			return d.text(&resp.Object)
		case "created":
			return d.integer(&resp.Created, 64)
		case "model":
			return d.text(&resp.Model)
		case "system_fingerprint":
			return d.text(&resp.SystemFingerprint)
		case "service_tier":
			var tier string
			ok := d.text(&tier)
			resp.ServiceTier = openai.ServiceTier(tier)
			return ok
		case "choices":
			return d.choices(&resp.Choices)
		case "usage":
			return d.usage(&resp.Usage)
		}
		return false
	})
	d.space()
	return resp, ok && d.i == len(d.s)
}

func (d *valueDecoder) choices(out *[]openai.ChatCompletionChoice) bool {
	if !d.literal("[") {
		return false
	}
	*out = []openai.ChatCompletionChoice{}
	if d.literal("]") {
		return true
	}
	for {
		var ch openai.ChatCompletionChoice
		ok := d.fields(func(key string) bool {
			switch key {
			case "index":
				var n int64
				ok := d.integer(&n, strconv.IntSize)
				ch.Index = int(n)
				return ok
			case "message":
				return d.fields(func(key string) bool {
					switch key {
					case "role":
						return d.text(&ch.Message.Role)
					case "content":
						return d.text(&ch.Message.Content)
					case "refusal":
						return d.literal("null") || d.text(&ch.Message.Refusal)
					}
					return false
				})
			case "finish_reason":
				var reason string
				ok := d.text(&reason)
				ch.FinishReason = openai.FinishReason(reason)
				return ok
			case "logprobs":
				return d.literal("null")
			}
			return false
		})
		if !ok {
			return false
		}
		*out = append(*out, ch)
		if more, ok := d.after(']'); !ok || !more {
			return ok
		}
	}
}

func (d *valueDecoder) usage(u *openai.Usage) bool {
	return d.fields(func(key string) bool {
		var n int64
		var ok bool
		switch key {
		case "prompt_tokens", "completion_tokens", "total_tokens":
			ok = d.integer(&n, strconv.IntSize)
		case "prompt_tokens_details":
			details := &openai.PromptTokensDetails{}
			u.PromptTokensDetails = details
			return d.fields(func(key string) bool {
				var n int64
				ok := d.integer(&n, strconv.IntSize)
				switch key {
				case "cached_tokens":
					details.CachedTokens = int(n)
				case "audio_tokens":
					details.AudioTokens = int(n)
				default:
					return false
				}
				return ok
			})
		default:
			return false
		}
		switch key {
		case "prompt_tokens":
			u.PromptTokens = int(n)
		case "completion_tokens":
			u.CompletionTokens = int(n)
		default:
			u.TotalTokens = int(n)
		}
		return ok
	})
}

// fields reads an object, each of its keys once, its value read by field
// (which reports false for a key it does not read).
func (d *valueDecoder) fields(field func(key string) bool) bool {
	if !d.literal("{") {
		return false
	}
	if d.literal("}") {
		return true
	}
	var keys [16]string
	seen := keys[:0]
	for {
		d.space()
		var key string
		if !d.text(&key) || slices.Contains(seen, key) {
			return false
		}
		seen = append(seen, key)
		if d.space(); !strings.HasPrefix(d.s[d.i:], ":") {
			return false
		}
		d.i++
		if !field(key) {
			return false
		}
		if more, ok := d.after('}'); !ok || !more {
			return ok
		}
	}
}

// after reads what follows a member of an object or an element of an
// array that end is the end of: a comma, more to come, or end.
func (d *valueDecoder) after(end byte) (more, ok bool) {
	if d.space(); d.i >= len(d.s) {
		return false, false
	}
	switch d.s[d.i] {
	case ',':
		d.i++
		return true, true
	case end:
		d.i++
		return false, true
	}
	return false, false
}

// text reads a string (not null) into out.
func (d *valueDecoder) text(out *string) bool {
	if d.space(); !strings.HasPrefix(d.s[d.i:], `"`) {
		return false
	}
	v, ok := d.string()
	if ok {
		*out = v
	}
	return ok
}

// integer reads an integer as JSON writes it, which fits in bits (an int
// field's: strconv.IntSize).
func (d *valueDecoder) integer(out *int64, bits int) bool {
	d.space()
	start := d.i
	v, ok := d.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		d.i = start
		return false
	}
	*out = n
	return true
}

// literal reads lit (true, false, null, a bracket, a brace) if it comes
// next.
func (d *valueDecoder) literal(lit string) bool {
	if d.space(); !strings.HasPrefix(d.s[d.i:], lit) {
		return false
	}
	d.i += len(lit)
	return true
}
