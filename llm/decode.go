package llm

import (
	"encoding/json"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
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
	s string
	i int
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
		return d.string()
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	for _, lit := range [...]struct {
		text  string
		value any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		if strings.HasPrefix(d.s[d.i:], lit.text) {
			d.i += len(lit.text)
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
		m[key.(string)] = v
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
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
		d.space()
		if d.i >= len(d.s) {
			return nil, false
		}
		switch d.s[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// number reads a number as JSON writes it, as its text.
func (d *valueDecoder) number() (any, bool) {
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
		return nil, false
	}
	if i < len(s) && s[i] == '.' {
		if i++; i >= len(s) || !isDigit(s[i]) {
			return nil, false
		}
		i = digits(s, i)
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if i >= len(s) || !isDigit(s[i]) {
			return nil, false
		}
		i = digits(s, i)
	}
	d.i = i
	return json.Number(strings.Clone(s[start:i])), true
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
func (d *valueDecoder) string() (any, bool) {
	s := d.s
	start := d.i + 1
	// Most strings have no escape and are valid UTF-8: copied whole.
	i := start
	for i < len(s) {
		c := s[i]
		if c == '"' {
			d.i = i + 1
			return strings.Clone(s[start:i]), true
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
			return nil, false
		case c == '\\':
			if i+1 >= len(s) {
				return nil, false
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
					return nil, false
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
				return nil, false
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
	return nil, false
}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4(s string, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for _, c := range []byte(s[i : i+4]) {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
