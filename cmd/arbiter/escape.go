// The terminal shows text that a model, a server or a shared file wrote
// with every control character other than newline and tab escaped (\x1b,
// \x00, \r, \u007f, \u009b), never raw, so such text cannot set the
// clipboard (OSC 52), the window title (OSC 0), clear the screen, move the
// cursor or hide what follows it. go-gh's pkg/asciisanitizer, which gh
// applies to API responses, is the model.
//
// escaped is the one function that does it; an escapeWriter applies it to
// everything written through it (the CLI's stdout and stderr, see
// IOStreams), and writeControl is the one way past it, for the escapes
// arbiter itself writes (the clipboard of `chat`'s /copy, a cleared screen,
// a progress line).

package main

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// escaped returns s with every control character other than newline and tab
// escaped as Go writes it in a quoted string (\x1b, \x00, \a, \r), DEL and
// the C1 controls as \u007f and \u009b (so that a JSON document stays one),
// and each byte that is not UTF-8 as \xff. A carriage return right before a
// newline is kept (a line ending). Text with nothing to escape is returned
// as it is.
func escaped(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	appendEscaped(&b, s, true)
	return b.String()
}

// escapedLine is escaped for text shown on one line: newlines and tabs are escaped
// too (\n, \t).
func escapedLine(s string) string {
	if clean(s) && !strings.ContainsAny(s, "\n\t") {
		return s
	}
	var b strings.Builder
	appendEscaped(&b, strings.ReplaceAll(s, "\r\n", "\n"), true)
	return strings.NewReplacer("\n", `\n`, "\t", `\t`).Replace(b.String())
}

// clean reports whether s holds nothing escaped escapes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return false
		}
	}
	return true
}

// escapeRune is how a control character r is shown.
func escapeRune(r rune) string {
	if r < 0x20 {
		q := strconv.QuoteRune(r)
		return q[1 : len(q)-1]
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// isControl reports whether r is escaped: C0 but newline and tab, DEL, C1.
func isControl(r rune) bool {
	return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f
}

// appendEscaped writes s to b escaped. With final false it stops before an
// ending that could be the start of a longer sequence (an incomplete UTF-8
// character, a carriage return that a newline may follow) and returns how
// many bytes it consumed.
func appendEscaped(b interface {
	io.StringWriter
	io.ByteWriter
}, s string, final bool) int {
	start := 0 // s[start:i] is clean and not written yet
	flush := func(i int) {
		if start < i {
			b.WriteString(s[start:i])
		}
	}
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\r':
			if i+1 == len(s) && !final {
				flush(i)
				return i
			}
			if i+1 < len(s) && s[i+1] == '\n' {
				i += 2
				continue
			}
			flush(i)
			b.WriteString(`\r`)
			i++
			start = i
		case c < 0x80:
			if isControl(rune(c)) {
				flush(i)
				b.WriteString(escapeRune(rune(c)))
				start = i + 1
			}
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size <= 1 && !final && !utf8.FullRuneInString(s[i:]):
				flush(i)
				return i
			case r == utf8.RuneError && size <= 1:
				flush(i)
				fmt.Fprintf(writerOf{b}, `\x%02x`, c)
				i++
				start = i
			case isControl(r):
				flush(i)
				b.WriteString(escapeRune(r))
				i += size
				start = i
			default:
				i += size
			}
		}
	}
	flush(i)
	return i
}

// writerOf makes a string writer an io.Writer for fmt.
type writerOf struct{ w io.StringWriter }

func (w writerOf) Write(p []byte) (int, error) { return w.w.WriteString(string(p)) }

// escapeWriter writes everything through escaped: bytes written in several calls
// are escaped as the one text they make (a UTF-8 character or a "\r\n"
// split between two writes is seen whole). It is safe for concurrent use.
type escapeWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the end of the last write, waiting for what follows
	buf     bytes.Buffer
}

// newEscapeWriter returns an escapeWriter writing to w; an escapeWriter is returned as it is.
func newEscapeWriter(w io.Writer) *escapeWriter {
	if pw, ok := w.(*escapeWriter); ok {
		return pw
	}
	return &escapeWriter{w: w}
}

// Write writes p escaped. It reports len(p) written unless the underlying
// writer fails.
func (w *escapeWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.write(p, false); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w *escapeWriter) write(p []byte, final bool) error {
	s := string(p)
	if len(w.pending) > 0 {
		s = string(w.pending) + s
		w.pending = w.pending[:0]
	}
	w.buf.Reset()
	n := appendEscaped(&w.buf, s, final)
	w.pending = append(w.pending, s[n:]...)
	if w.buf.Len() == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf.Bytes())
	return err
}

// Flush writes what a last write left waiting (an incomplete character, a
// carriage return), escaped.
func (w *escapeWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) == 0 {
		return nil
	}
	return w.write(nil, true)
}

// control writes seq as it is, after what is waiting.
func (w *escapeWriter) control(seq string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.pending) > 0 {
		if err := w.write(nil, true); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w.w, seq)
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

// writeStyled writes s to w with its colour sequences (SGR: ESC [ digits and
// semicolons m, as a kind paints a screen for a colour terminal) as they
// are, and everything else through w. The text s carries is the painter's
// to escape: writeStyled only lets colour through.
func writeStyled(w io.Writer, s string) error {
	for s != "" {
		i := strings.Index(s, "\x1b[")
		if i < 0 {
			break
		}
		end := sgrEnd(s[i:])
		if end == 0 {
			if _, err := io.WriteString(w, s[:i+1]); err != nil {
				return err
			}
			s = s[i+1:]
			continue
		}
		if _, err := io.WriteString(w, s[:i]); err != nil {
			return err
		}
		if err := writeControl(w, s[i:i+end]); err != nil {
			return err
		}
		s = s[i+end:]
	}
	_, err := io.WriteString(w, s)
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

// sgrEnd is the length of the SGR sequence s starts with, 0 if it starts
// with none (at most 16 parameter bytes).
func sgrEnd(s string) int {
	for i := 2; i < len(s) && i < 18; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c >= '0' && c <= '9' || c == ';':
		default:
			return 0
		}
	}
	return 0
}
