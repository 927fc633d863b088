package command

import (
	"fmt"
	"strings"
)

// Statement is one command as written in a message: the lines it spans and
// every complete reading of them, or the error that leaves it none.
type Statement struct {
	Spec    *Spec  // nil for an unknown command
	Line    int    // first line in the message, 1-based
	EndLine int    // last line, inclusive
	Text    string // its lines with markdown noise removed, joined by "\n"
	// Readings are the complete readings, the likeliest first; more than one
	// when unquoted names hold keyword words. Resolve picks one.
	Readings []Command
	// Err is the *Error that leaves the statement no reading; nil when
	// there are readings.
	Err error
}

// Parse finds the statements of a message, in order. A statement starts at a
// line that starts with a command phrase (after any markdown bullet or
// emphasis) and runs to the end of its paragraph or the next command; item
// lines of a command with Items follow it. Lines outside statements are
// conversation and are ignored. A line that starts with the first word of a
// phrase in capitals but matches no command ("CREATE ERA ...") is an unknown
// command. Parse never fails; each statement carries its own error.
func (g *Grammar) Parse(msg string) []Statement {
	lines := splitLines(msg)
	budget := maxMessageSteps
	var out []Statement
	for i := 0; i < len(lines); {
		l := lines[i]
		if l.blank {
			i++
			continue
		}
		toks := tokenize(l.text)
		spec, phraseLen := g.match(toks)
		switch {
		case spec == nil && (g.unknown(toks) || g.misspelt(toks)):
			out = append(out, g.unknownStatement(l, toks))
			i++
		case spec == nil:
			if st, ok := g.midLine(l, toks); ok {
				out = append(out, st)
			}
			i++
		case spec.Items != nil:
			var st Statement
			st, i = g.itemStatement(spec, lines, i, toks, phraseLen, &budget)
			out = append(out, st)
		default:
			j := i + 1
			for j < len(lines) && !lines[j].blank && !g.starts(lines[j]) && !question(lines[j]) {
				j++
			}
			out = append(out, g.fieldStatement(spec, lines[i:j], phraseLen, &budget))
			i = j
		}
	}
	return out
}

// match returns the spec whose phrase the tokens start with (the longest),
// and the phrase's length in tokens.
func (g *Grammar) match(toks []token) (*Spec, int) {
	var best *Spec
	for _, s := range g.specs {
		if len(s.phrase) > len(toks) || (best != nil && len(s.phrase) <= len(best.phrase)) {
			continue
		}
		ok := true
		for k, w := range s.phrase {
			if toks[k].quoted || toks[k].sep || toks[k].word != w {
				ok = false
				break
			}
		}
		if ok {
			best = s
		}
	}
	if best == nil {
		return nil, 0
	}
	return best, len(best.phrase)
}

// unknown reports whether a line that matches no phrase still looks like a
// command: its first word is the first word of a phrase, in capitals.
func (g *Grammar) unknown(toks []token) bool {
	return len(toks) > 0 && !toks[0].quoted && !toks[0].sep && toks[0].upper && g.starters[toks[0].word]
}

// starts reports whether a line starts a statement of its own.
func (g *Grammar) starts(l line) bool {
	if l.blank {
		return false
	}
	toks := tokenize(l.text)
	spec, _ := g.match(toks)
	return spec != nil || g.unknown(toks)
}

func (g *Grammar) unknownStatement(l line, toks []token) Statement {
	end := toks[0].end
	if len(toks) > 1 && !toks[1].sep {
		end = toks[1].end
	}
	var phrases, all []string
	for _, s := range g.specs {
		all = append(all, strings.Join(s.phrase, " "))
		if s.phrase[0] == toks[0].word {
			phrases = append(phrases, strings.Join(s.phrase, " "))
		}
	}
	if len(phrases) == 0 {
		phrases = all
	}
	return Statement{Line: l.n, EndLine: l.n, Text: l.text, Err: &Error{
		Kind: Malformed, Line: l.n,
		Reason: fmt.Sprintf("Unknown command %q (use %s)", l.text[:end], valuesList(phrases)),
	}}
}

// misspelt reports whether a line that matches no phrase is shaped like a
// command all the same (seed 001: a command-shaped line never vanishes): a
// first word in capitals, "CRATE PERIOD" or "MAKE EVENT", followed by at
// least two field keywords of the grammar in capitals (TONE, DESCRIPTION).
func (g *Grammar) misspelt(toks []token) bool {
	if len(toks) < 3 || toks[0].quoted || toks[0].sep || !toks[0].upper || len(toks[0].word) < 2 {
		return false
	}
	seen := map[string]bool{}
	for _, t := range toks[1:] {
		if t.upper && !t.quoted && !t.sep && g.fieldWords[t.word] {
			seen[t.word] = true
		}
	}
	return len(seen) >= 2
}

// midLine reports a command phrase in capitals that starts after other text
// on its line and is followed by a field keyword of its command in capitals
// ("Here it is: CREATE PERIOD X FIRST ..."): it is neither read, for a
// command starts its line, nor left for conversation.
func (g *Grammar) midLine(l line, toks []token) (Statement, bool) {
	for i := 1; i < len(toks); i++ {
		spec, n := g.match(toks[i:])
		if spec == nil {
			continue
		}
		upper := true
		for _, t := range toks[i : i+n] {
			upper = upper && t.upper
		}
		if !upper || !spec.hasKeywordIn(toks[i+n:]) {
			continue
		}
		phrase := strings.Join(spec.phrase, " ")
		return Statement{Spec: spec, Line: l.n, EndLine: l.n, Text: l.text, Err: &Error{
			Kind: Malformed, Line: l.n,
			Reason: fmt.Sprintf("%s comes after other text: a command must start its own line (put %s at the start of a line)", phrase, phrase),
		}}, true
	}
	return Statement{}, false
}

// hasKeywordIn reports whether one of the spec's field keywords, or item
// kinds, is among toks in capitals.
func (s *Spec) hasKeywordIn(toks []token) bool {
	for i, t := range toks {
		if !t.upper || t.quoted || t.sep {
			continue
		}
		for _, kw := range s.keywords {
			if len(kw) > 0 && i+len(kw) <= len(toks) && kw[0] == t.word {
				return true
			}
		}
		if s.Items != nil && s.Items.kind(t) != "" {
			return true
		}
	}
	return false
}

// question reports whether a line is a question, which ends the text of the
// command above it: it is addressed to the other player.
func question(l line) bool { return strings.HasSuffix(l.text, "?") }

// fieldStatement reads a command made of fields over its lines.
func (g *Grammar) fieldStatement(spec *Spec, lines []line, phraseLen int, budget *int) Statement {
	texts := make([]string, len(lines))
	for k, l := range lines {
		texts[k] = l.text
	}
	st := Statement{Spec: spec, Line: lines[0].n, EndLine: lines[len(lines)-1].n, Text: strings.Join(texts, "\n")}
	readings, err := read(spec, st.Text, tokenize(st.Text), phraseLen, st.Line, budget)
	if err != nil {
		st.Err = err
	}
	st.Readings = readings
	return st
}

// itemStatement reads a command followed by item lines: the lines of its
// paragraph that have a bullet or start with an item kind, and after a blank
// line more lines that start with an item kind. It returns the statement and
// the index of the first line after it.
func (g *Grammar) itemStatement(spec *Spec, lines []line, i int, toks []token, phraseLen int, budget *int) (Statement, int) {
	head := lines[i]
	st := Statement{Spec: spec, Line: head.n, EndLine: head.n}
	texts := []string{head.text}
	cmd, errs := headItems(spec, head, toks, phraseLen, budget)
	body, j := g.itemLines(spec.Items, lines, i+1)
	for _, l := range body {
		errs = append(errs, addItems(spec, &cmd, l.text, l.n)...)
		texts = append(texts, l.text)
		st.EndLine = l.n
	}
	st.Text = strings.Join(texts, "\n")
	if err := g.strayItem(spec, lines, j); err != nil {
		errs = append(errs, err)
	}

	switch {
	case len(errs) > 0:
		st.Err = errs[0]
	case spec.Items.Required && len(cmd.Items) == 0:
		st.Err = &Error{Kind: Missing, Line: head.n, Reason: fmt.Sprintf(
			"%s has no %ss (add lines such as %s)", strings.Join(spec.phrase, " "), spec.Items.noun(), spec.Items.example())}
	default:
		st.Readings = []Command{cmd}
	}
	return st, j
}

// headItems reads what the command's own line holds after its phrase: its
// fields, or a first item ("CREATE PALETTE YES: Magic exists").
func headItems(spec *Spec, head line, toks []token, phraseLen int, budget *int) (Command, []*Error) {
	cmd := Command{Spec: spec, Line: head.n, Fields: map[string]string{}}
	rest := phraseLen
	if rest < len(toks) && toks[rest].sep {
		rest++
	}
	switch {
	case len(spec.Fields) > 0:
		readings, err := read(spec, head.text, toks, phraseLen, head.n, budget)
		if err != nil {
			return cmd, []*Error{err}
		}
		return readings[0], nil
	case rest < len(toks):
		errs := addItems(spec, &cmd, head.text[toks[rest].start:], head.n)
		return cmd, errs
	}
	return cmd, nil
}

// itemLines returns the item lines below a command, from lines[from] on:
// those of its paragraph that have a bullet or look like an item, and after
// blank lines more lines that start with an item kind; and the index of the
// first line after them.
func (g *Grammar) itemLines(it *Items, lines []line, from int) ([]line, int) {
	var body []line
	j := from
	for j < len(lines) {
		l := lines[j]
		if l.blank {
			k := j
			for k < len(lines) && lines[k].blank {
				k++
			}
			if k < len(lines) && !g.starts(lines[k]) && startsWithKind(it, lines[k]) {
				j = k
				continue
			}
			break
		}
		if g.starts(l) || !(l.bullet || startsWithKind(it, l) || itemShaped(l)) {
			break
		}
		body = append(body, l)
		j++
	}
	return body, j
}

// addItems adds the items of one line's text to cmd and returns their
// problems.
func addItems(spec *Spec, cmd *Command, text string, n int) []*Error {
	var errs []*Error
	for _, t := range splitItems(spec.Items, text) {
		item, err := parseItem(spec, t, n)
		cmd.Items = append(cmd.Items, item)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

// strayItem reports the first item line from lines[from] on, after other
// text and before the next command, which would otherwise be dropped without
// a word: it says where the item is instead.
func (g *Grammar) strayItem(spec *Spec, lines []line, from int) *Error {
	for k := from; k < len(lines) && !g.starts(lines[k]); k++ {
		if lines[k].bullet && (startsWithKind(spec.Items, lines[k]) || itemShaped(lines[k])) || upperKind(spec.Items, lines[k]) {
			return &Error{Kind: Malformed, Line: lines[k].n, Reason: fmt.Sprintf(
				"The %s on line %d is not under %s: other text comes between (put every %s directly below it)",
				spec.Items.noun(), lines[k].n, strings.Join(spec.phrase, " "), spec.Items.noun())}
		}
	}
	return nil
}

// itemShaped reports whether a line is written as an item, whatever its
// kind: one to three words in capitals and a separator ("MAYBE: Time
// travel"), so that an item of a wrong kind is reported, not dropped.
func itemShaped(l line) bool {
	toks := tokenize(l.text)
	for k := 0; k < len(toks) && k < 4; k++ {
		t := toks[k]
		if t.sep {
			return k > 0
		}
		if t.quoted || !t.upper || len(t.word) < 2 {
			return false
		}
	}
	return false
}

// upperKind reports whether a line starts with an item kind in capitals
// and a separator ("NO: Space travel").
func upperKind(it *Items, l line) bool {
	toks := tokenize(l.text)
	return len(toks) > 1 && toks[0].upper && it.kind(toks[0]) != "" && toks[1].sep
}

// splitItems cuts the text of an item line where another item starts on
// the same line. A line holds several items only when another item kind in
// capitals with a separator follows the first ("YES: Magic NO: Space
// travel"); it is then cut at every word in capitals followed by a
// separator, so that a wrong kind among them ("MAYBE:") is reported. A
// single item keeps its text whole, capitals and colons included ("YES:
// The USA: a superpower").
func splitItems(it *Items, text string) []string {
	toks := tokenize(text)
	starts := func(i int) bool {
		t := toks[i]
		return !t.quoted && !t.sep && t.upper && len(t.word) >= 2 && toks[i+1].sep && !toks[i-1].sep
	}
	several := false
	for i := 1; i+1 < len(toks) && !several; i++ {
		several = starts(i) && it.kind(toks[i]) != ""
	}
	if !several {
		return []string{strings.TrimSpace(text)}
	}
	var out []string
	from := 0
	for i := 1; i+1 < len(toks); i++ {
		if starts(i) {
			out = append(out, strings.TrimSpace(text[from:toks[i].start]))
			from = toks[i].start
		}
	}
	return append(out, strings.TrimSpace(text[from:]))
}

// startsWithKind reports whether a line starts with one of the item kinds.
func startsWithKind(it *Items, l line) bool {
	toks := tokenize(l.text)
	return len(toks) > 0 && it.kind(toks[0]) != ""
}

// kind returns the item kind a token names, or "".
func (it *Items) kind(t token) string {
	if t.quoted || t.sep {
		return ""
	}
	for _, k := range it.Kinds {
		if strings.ToUpper(k) == t.word {
			return k
		}
	}
	return ""
}

func (it *Items) noun() string {
	if it.Noun != "" {
		return it.Noun
	}
	return "item"
}

// example renders `"- YES: <item>" or "- NO: <item>"`.
func (it *Items) example() string {
	ex := make([]string, len(it.Kinds))
	for i, k := range it.Kinds {
		ex[i] = fmt.Sprintf("%q", "- "+k+": <"+it.noun()+">")
	}
	return valuesList(ex)
}

// parseItem reads one item line: a kind, an optional separator, the text.
func parseItem(spec *Spec, text string, n int) (Item, *Error) {
	it := spec.Items
	toks := tokenize(text)
	if len(toks) == 0 {
		return Item{Line: n}, &Error{Kind: Missing, Line: n, Reason: fmt.Sprintf("Empty %s", it.noun())}
	}
	if kind := it.kind(toks[0]); kind != "" {
		rest := toks[1:]
		if len(rest) > 0 && rest[0].sep {
			rest = rest[1:]
		}
		if len(rest) == 0 {
			return Item{Kind: kind, Line: n}, &Error{Kind: Missing, Line: n,
				Reason: fmt.Sprintf("%s %s has no text", capitalize(it.noun()), kind)}
		}
		return Item{Kind: kind, Text: value(text, rest), Line: n}, nil
	}
	for j := 1; j < len(toks) && j <= 3 && !toks[j-1].quoted; j++ {
		if toks[j].sep {
			given := strings.Trim(text[toks[0].start:toks[j-1].end], "*_ ")
			return Item{Line: n}, &Error{Kind: Invalid, Line: n, Reason: fmt.Sprintf(
				"Invalid %s type %q (must be %s)", it.noun(), given, valuesList(it.Kinds))}
		}
	}
	return Item{Line: n}, &Error{Kind: Missing, Line: n, Reason: fmt.Sprintf(
		"%s %q has no type (start it with %s)", capitalize(it.noun()), value(text, toks), kindStarts(it.Kinds))}
}

// kindStarts renders "YES: or NO:".
func kindStarts(kinds []string) string {
	s := make([]string, len(kinds))
	for i, k := range kinds {
		s[i] = k + ":"
	}
	return valuesList(s)
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// value is the text of a run of tokens as written: one quoted token
// unquoted, otherwise the span with spaces collapsed.
func value(text string, toks []token) string {
	if len(toks) == 0 {
		return ""
	}
	if len(toks) == 1 && toks[0].quoted {
		return strings.Join(strings.Fields(unquote(text[toks[0].start:toks[0].end])), " ")
	}
	return strings.Join(strings.Fields(text[toks[0].start:toks[len(toks)-1].end]), " ")
}
