package chronicle

import (
	"strings"
)

// Display is a message as the chat shows it. A model's or person's message
// whose commands were applied shows each command as it was understood,
// written back in full (`▸ CREATE PERIOD "The Golden Age" FIRST ...`), among
// its prose; any other message shows as written. Raw gives the text as
// written.
func Display(m Message) string {
	text := strings.TrimRight(m.Text, " \t\r\n")
	if len(m.Applied) == 0 || m.Role == System {
		return text
	}
	stmts := grammar.Parse(text)
	if len(stmts) != len(m.Applied) {
		return text // read by an older parser: show it as written
	}
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	var out []string
	next := 0
	for i := 0; i < len(lines); i++ {
		if next < len(stmts) && i+1 == stmts[next].Line {
			out = append(out, "▸ "+strings.ReplaceAll(m.Applied[next].String(), "\n", "\n  "))
			i = stmts[next].EndLine - 1
			next++
			continue
		}
		out = append(out, lines[i])
	}
	return strings.Join(out, "\n")
}
