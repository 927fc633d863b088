package prompts

import (
	"fmt"
	"strings"
)

// blockOpeners are the actions text/template closes with {{end}}.
var blockOpeners = map[string]bool{"if": true, "range": true, "with": true, "define": true, "block": true}

// unclosed explains text/template's "unexpected EOF" for a block that is
// never closed: the error names the last line of the file, while the
// author's mistake is where the block was opened. It returns that line and
// the opening action, or ok false when every block is closed (the EOF is
// of another kind: an action left open).
func unclosed(text string) (line int, action string, ok bool) {
	type open struct {
		line   int
		action string
	}
	var stack []open
	for pos := 0; ; {
		start := strings.Index(text[pos:], "{{")
		if start < 0 {
			break
		}
		start += pos
		end := actionEnd(text, start+2)
		if end < 0 {
			return 0, "", false // an action left open: text/template says where
		}
		body := strings.TrimSpace(strings.Trim(text[start+2:end], "-"))
		switch word, _, _ := strings.Cut(body, " "); {
		case blockOpeners[word]:
			stack = append(stack, open{1 + strings.Count(text[:start], "\n"), text[start : end+2]})
		case word == "end" && len(stack) > 0:
			stack = stack[:len(stack)-1]
		}
		pos = end + 2
	}
	if len(stack) == 0 {
		return 0, "", false
	}
	o := stack[len(stack)-1]
	return o.line, o.action, true
}

// actionEnd is the index of the "}}" closing the action whose body starts at
// i, skipping quoted strings and comments; -1 when there is none.
func actionEnd(text string, i int) int {
	for i < len(text) {
		switch {
		case strings.HasPrefix(text[i:], "}}"):
			return i
		case strings.HasPrefix(text[i:], "/*"):
			j := strings.Index(text[i+2:], "*/")
			if j < 0 {
				return -1
			}
			i += j + 4
		case text[i] == '"' || text[i] == '`' || text[i] == '\'':
			q := text[i]
			i++
			for i < len(text) && text[i] != q {
				if text[i] == '\\' && q != '`' {
					i++
				}
				i++
			}
			i++
		default:
			i++
		}
	}
	return -1
}

// unclosedError is the parse error of a block never closed, at the line
// that opened it.
func unclosedError(name, text string, err error) error {
	line, action, ok := unclosed(text)
	if !ok || !strings.Contains(err.Error(), "unexpected EOF") {
		return err
	}
	return fmt.Errorf("template: %s:%d: %s is never closed: add {{end}} where it should stop (%w)", name, line, action, err)
}
