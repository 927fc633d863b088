// The terminal shows text that a model, a server or a shared file wrote
// with every control character other than newline and tab escaped, never
// raw, so such text cannot set the clipboard (OSC 52), the window title
// (OSC 0), clear the screen or move the cursor. go-gh's pkg/asciisanitizer,
// a transform.Transformer that gh applies to API responses, is the model.
// The CLI's stdout and stderr are escapeWriters (see IOStreams);
// writeControl is the one way past one, for the escapes arbiter itself
// writes (chat's /copy, a cleared screen, a progress line).

package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/transform"
)

// escaper escapes every control character other than newline and tab as Go
// writes it in a quoted string (\x1b, \x00, \a, \r), DEL and the C1 controls
// as \u007f and \u009b (so that a JSON document stays one), and each byte
// that is not UTF-8 as \xff. A carriage return right before a newline is
// kept (a line ending); one at the end of src waits for what follows, as an
// incomplete UTF-8 character does.
type escaper struct{ transform.NopResetter }

func (escaper) Transform(dst, src []byte, atEOF bool) (nDst, nSrc int, err error) {
	for nSrc < len(src) {
		rest := src[nSrc:]
		r, n := utf8.DecodeRune(rest)
		out := rest[:n]
		switch {
		case !atEOF && (r == utf8.RuneError && !utf8.FullRune(rest) || r == '\r' && len(rest) == 1):
			return nDst, nSrc, transform.ErrShortSrc
		case r == '\r' && len(rest) > 1 && rest[1] == '\n':
			out, n = rest[:2], 2
		case r == utf8.RuneError && n == 1:
			out = fmt.Appendf(nil, `\x%02x`, rest[0])
		case r < 0x20 && isControl(r):
			q := strconv.QuoteRune(r)
			out = []byte(q[1 : len(q)-1])
		case isControl(r):
			out = fmt.Appendf(nil, `\u%04x`, r)
		}
		if nDst+len(out) > len(dst) {
			return nDst, nSrc, transform.ErrShortDst
		}
		nDst += copy(dst[nDst:], out)
		nSrc += n
	}
	return nDst, nSrc, nil
}

// isControl reports whether r is escaped: C0 but newline and tab, DEL, C1.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f
}

// escaped returns s escaped by escaper; text with nothing to escape is
// returned as it is.
func escaped(s string) string {
	out, _, _ := transform.String(escaper{}, s)
	return out
}

// escapedLine is escaped for text shown on one line: newlines and tabs are escaped
// too (\n, \t).
func escapedLine(s string) string {
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(escaped(strings.ReplaceAll(s, "\r\n", "\n")))
}

// escapeWriter writes everything through escaper: bytes written in several
// calls are escaped as the one text they make (a UTF-8 character or a "\r\n"
// split between two writes is seen whole). It is safe for concurrent use.
type escapeWriter struct {
	mu sync.Mutex
	w  io.Writer
	t  *transform.Writer
}

// newEscapeWriter returns an escapeWriter writing to w; an escapeWriter is returned as it is.
func newEscapeWriter(w io.Writer) *escapeWriter {
	if ew, ok := w.(*escapeWriter); ok {
		return ew
	}
	return &escapeWriter{w: w, t: transform.NewWriter(w, escaper{})}
}

func (w *escapeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.t.Write(p)
}

// Flush writes what a last write left waiting (an incomplete character, a
// carriage return), escaped.
func (w *escapeWriter) Flush() error { return w.control("") }

// control writes seq as it is, after what is waiting. A closed
// transform.Writer keeps what it had waiting: a new one follows it.
func (w *escapeWriter) control(seq string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.t.Close()
	w.t = transform.NewWriter(w.w, escaper{})
	if err == nil {
		_, err = io.WriteString(w.w, seq)
	}
	return err
}

// writeControl writes seq, an escape sequence arbiter itself makes (OSC 52 to
// set the clipboard, a cleared screen, a progress line's return), to w as
// it is: past an escapeWriter's escaping, and to any other writer unchanged.
func writeControl(w io.Writer, seq string) error {
	if cw, ok := w.(interface{ control(string) error }); ok {
		return cw.control(seq)
	}
	_, err := io.WriteString(w, seq)
	return err
}

// sgr is a colour sequence (SGR: ESC [ digits and semicolons m), at most 16
// parameter bytes.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]{0,16}m")

// writeStyled writes s to w with its colour sequences (as a kind paints a
// screen for a colour terminal) as they are, and everything else through w.
// The text s carries is the painter's to escape: writeStyled only lets
// colour through.
func writeStyled(w io.Writer, s string) error {
	last := 0
	for _, m := range sgr.FindAllStringIndex(s, -1) {
		if _, err := io.WriteString(w, s[last:m[0]]); err != nil {
			return err
		}
		if err := writeControl(w, s[m[0]:m[1]]); err != nil {
			return err
		}
		last = m[1]
	}
	_, err := io.WriteString(w, s[last:])
	return err
}

// colourPassing is a writer for text painted for a colour terminal: each write
// goes to w through writeStyled.
func colourPassing(w io.Writer) io.Writer { return colourWriter{w} }

type colourWriter struct{ w io.Writer }

func (c colourWriter) Write(p []byte) (int, error) {
	if err := writeStyled(c.w, string(p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c colourWriter) control(seq string) error { return writeControl(c.w, seq) }
