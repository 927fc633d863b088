package command

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// line is one line of a message with its markdown noise removed.
type line struct {
	n      int    // 1-based line number in the message
	text   string // the line without bullets, quote marks, headings, bold, backticks
	bullet bool   // it started with a list bullet ("-", "*", "•", "1.", ...)
	blank  bool   // nothing left, or a code fence: ends a paragraph
}

// splitLines cuts a message into cleaned lines.
func splitLines(msg string) []line {
	raw := strings.Split(strings.ReplaceAll(msg, "\r\n", "\n"), "\n")
	out := make([]line, len(raw))
	for i, r := range raw {
		out[i] = cleanLine(i+1, strings.ReplaceAll(r, "\r", " "))
	}
	return out
}

// cleanLine removes what markdown puts around a command: block quotes,
// heading marks, list bullets, bold and underline markers, backticks.
// A code fence is a blank line.
func cleanLine(n int, s string) line {
	l := line{n: n}
	s = strings.TrimSpace(s)
	if strings.HasPrefix(s, "```") || strings.HasPrefix(s, "~~~") {
		l.blank = true
		return l
	}
	for {
		t := s
		switch {
		case strings.HasPrefix(t, ">"):
			t = strings.TrimLeft(t, ">")
		case strings.HasPrefix(t, "#"):
			rest := strings.TrimLeft(t, "#")
			if rest == "" || startsWithSpace(rest) {
				t = rest
			}
		default:
			if rest, ok := cutBullet(t); ok {
				t, l.bullet = rest, true
			}
		}
		t = strings.TrimSpace(t)
		if t == s {
			break
		}
		s = t
	}
	s = strings.NewReplacer("**", "", "__", "", "`", "").Replace(s)
	l.text = strings.TrimSpace(s)
	l.blank = l.text == ""
	return l
}

// cutBullet removes a list bullet ("- ", "* ", "+ ", "• ", "1. ", "2) ").
func cutBullet(s string) (string, bool) {
	r, size := utf8.DecodeRuneInString(s)
	switch r {
	case '-', '*', '+', '•', '·', '–', '—', '‣', '◦':
		if rest := s[size:]; startsWithSpace(rest) {
			return rest, true
		}
		return s, false
	}
	i := 0
	for i < len(s) && i < 4 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i > 0 && i < len(s) && (s[i] == '.' || s[i] == ')') && startsWithSpace(s[i+1:]) {
		return s[i+1:], true
	}
	return s, false
}

func startsWithSpace(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return s != "" && unicode.IsSpace(r)
}
