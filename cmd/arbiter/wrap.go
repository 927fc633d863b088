package main

import (
	"strings"
	"unicode/utf8"
)

// wrap breaks the lines of text longer than width columns at spaces, never
// inside a word: a word longer than the line stays whole on a line of its
// own. A continued line keeps the line's indentation, and a list item's
// ("- ", "1. ") is carried under its text. Colour sequences take no column.
// width 0 leaves text as it is.
func wrap(text string, width int) string {
	if width <= 0 {
		return text
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = wrapLine(l, width)
	}
	return strings.Join(lines, "\n")
}

func wrapLine(line string, width int) string {
	if columnsOf(line) <= width {
		return line
	}
	body := strings.TrimLeft(line, " ")
	indent := len(line) - len(body)
	hang := strings.Repeat(" ", indent+listMarker(body))
	var b strings.Builder
	b.WriteString(line[:indent])
	at, gap := indent, ""
	for i, word := range strings.SplitAfter(body, " ") {
		if word == " " { // a run of spaces: kept between words on one line
			gap += word
			continue
		}
		word = strings.TrimSuffix(word, " ")
		n := columnsOf(word)
		switch {
		case i == 0:
		case at+len(gap)+n > width:
			b.WriteString("\n" + hang)
			at = len(hang)
		default:
			b.WriteString(gap)
			at += len(gap)
		}
		b.WriteString(word)
		at += n
		gap = " "
	}
	return b.String()
}

// listMarker is the width of the list marker body starts with ("- ",
// "12. "), 0 when it starts with none.
func listMarker(body string) int {
	if strings.HasPrefix(body, "- ") || strings.HasPrefix(body, "* ") {
		return 2
	}
	digits := len(body) - len(strings.TrimLeft(body, "0123456789"))
	if digits > 0 && strings.HasPrefix(body[digits:], ". ") {
		return digits + 2
	}
	return 0
}

// columnsOf is how many columns s takes on a terminal: its characters but
// those of SGR colour sequences (ESC [ ... m).
func columnsOf(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] == ';' || s[j] >= '0' && s[j] <= '9') {
				j++
			}
			if j < len(s) && s[j] == 'm' {
				i = j + 1
				continue
			}
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		n++
	}
	return n
}
