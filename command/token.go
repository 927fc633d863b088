package command

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one word, quoted string or separator of a command's text.
type token struct {
	start, end int    // byte offsets in the text
	word       string // upper case, without * _ around it and , ; . after it: what keywords match
	quoted     bool   // a quoted string: never a keyword
	sep        bool   // ":", "=" or a dash standing alone
	lineStart  bool   // first token of its line
	upper      bool   // written in capitals
}

// tokenize cuts text into tokens. A quote opens a quoted string only where a
// token starts, and only when it closes on the same line before a space or
// the end; otherwise it is an ordinary character.
func tokenize(text string) []token {
	var toks []token
	lineStart := true
	// unclosed[r] is the offset up to which a quote r is known not to close:
	// if no closing quote follows one opener on its line, none follows a
	// later one either. Without it, a line of many lone quotes would be
	// searched again for each.
	unclosed := map[rune]int{}
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == '\n':
			lineStart = true
			i += size
			continue
		case unicode.IsSpace(r):
			i += size
			continue
		}
		t := token{start: i, lineStart: lineStart}
		lineStart = false
		switch {
		case r == ':' || r == '=':
			t.end, t.sep = i+size, true
		case isDash(r) && standsAlone(text, i+size):
			t.end, t.sep = i+size, true
		default:
			if strings.ContainsRune(quotes, r) && i >= unclosed[r] {
				end, ok := closeQuote(text, i, r, size)
				if ok {
					t.end, t.quoted = end, true
					break
				}
				unclosed[r] = lineEnd(text, i)
			}
			t.end = wordEnd(text, i)
			t.word, t.upper = wordOf(text[t.start:t.end])
		}
		toks = append(toks, t)
		i = t.end
	}
	return toks
}

// lineEnd is the offset of the end of the line holding offset i.
func lineEnd(text string, i int) int {
	if j := strings.IndexByte(text[i:], '\n'); j >= 0 {
		return i + j
	}
	return len(text)
}

// quotes are the runes that may open a quoted string.
const quotes = "\"“„'‘«"

func isDash(r rune) bool { return r == '-' || r == '–' || r == '—' || r == '−' }

// standsAlone reports whether a dash ending at i is followed by a space, a
// line end or the end of text.
func standsAlone(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsSpace(r)
}

// wordEnd is the end of the word starting at i: the next space, ":" or "=".
func wordEnd(text string, i int) int {
	for j, r := range text[i:] {
		if unicode.IsSpace(r) || (j > 0 && (r == ':' || r == '=')) {
			return i + j
		}
	}
	return len(text)
}

// closeQuote returns the end of the quoted string opened by r at i, if it
// closes on the same line and the closing quote ends a token.
func closeQuote(text string, i int, r rune, size int) (int, bool) {
	var closers string
	switch r {
	case '"':
		closers = `"”`
	case '“', '„':
		closers = `”"“`
	case '\'':
		closers = `'’`
	case '‘':
		closers = `’'`
	case '«':
		closers = `»`
	default:
		return 0, false
	}
	j := i + size
	for j < len(text) {
		c, csize := utf8.DecodeRuneInString(text[j:])
		if c == '\n' {
			return 0, false
		}
		if strings.ContainsRune(closers, c) && j > i+size {
			end := j + csize
			if endsToken(text, end) {
				return end, true
			}
		}
		j += csize
	}
	return 0, false
}

// endsToken reports whether position i ends a token: the end, a space, or
// punctuation that may follow a quoted name.
func endsToken(text string, i int) bool {
	if i >= len(text) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsSpace(r) || strings.ContainsRune(",;.:=!?)*_", r)
}

// wordOf returns the form of a word that keywords match, and whether it is
// written in capitals (at least one letter, none lower case).
func wordOf(s string) (string, bool) {
	s = strings.Trim(s, "*_")
	s = strings.TrimRight(s, ",;.!?")
	s = strings.Trim(s, "*_")
	letters, lower := false, false
	for _, r := range s {
		if unicode.IsLetter(r) {
			letters = true
			lower = lower || unicode.IsLower(r)
		}
	}
	return strings.ToUpper(s), letters && !lower
}

// unquote returns the inside of a quoted token's text.
func unquote(s string) string {
	_, first := utf8.DecodeRuneInString(s)
	_, last := utf8.DecodeLastRuneInString(s)
	if len(s) < first+last {
		return s
	}
	return s[first : len(s)-last]
}
