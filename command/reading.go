package command

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Bounds of the search for readings. Real commands need a few dozen steps
// and have one or two readings; a statement that needs more steps than its
// share of the message's budget, or has more readings than maxReadings, is
// reported as too ambiguous instead of being searched for long.
const (
	maxSteps        = 20000  // per statement
	maxMessageSteps = 200000 // per message, over all its statements
	maxReadings     = 64
)

// reader finds the readings of one statement made of fields: which keyword
// words are keywords and which belong to names. It walks the tokens depth
// first, trying a keyword word as a keyword before trying it as part of the
// value being read, and drops a branch at its first error.
type reader struct {
	spec  *Spec
	text  string
	toks  []token
	line  int
	upper bool    // the phrase is written in capitals
	kwAt  [][]int // per token, the fields whose keyword starts there
	last  []int   // per field, the last token where its keyword starts; -1 when none

	steps    int
	limit    int // steps allowed
	overflow bool
	seq      int
	done     []reading
	best     *failure
}

type reading struct {
	cmd Command
	seq int
}

// failure is the error of a branch, ranked so that the most helpful one is
// reported when no reading is complete.
type failure struct {
	err     *Error
	missing int // missing fields
	penalty int
	seq     int
}

// state is where a branch stands.
type state struct {
	i       int // next token
	cur     int // field whose value is being read; -1 none (only keywords may come)
	from    int // first token of its value
	given   []slot
	penalty int // keywords read in another case than the phrase's capitals
}

// slot is a field given with the tokens of its value.
type slot struct {
	field    int
	from, to int
	value    string
}

// read returns the complete readings of a statement whose tokens start with
// a phrase of n tokens, or the error of the best incomplete one.
// budget is the steps left to the message; read takes what it uses.
func read(spec *Spec, text string, toks []token, n, line int, budget *int) ([]Command, *Error) {
	r := &reader{spec: spec, text: text, toks: toks, line: line, upper: true, limit: min(maxSteps, *budget)}
	defer func() { *budget -= r.steps }()
	for _, t := range toks[:n] {
		r.upper = r.upper && t.upper
	}
	r.index()

	st := state{i: n, cur: -1}
	if st.i < len(toks) && toks[st.i].sep {
		st.i++
	}
	if spec.subject() == 0 {
		st.cur, st.from = 0, st.i
	}
	r.walk(st)

	switch {
	case r.overflow:
		return nil, &Error{Kind: Ambiguous, Line: line,
			Reason: "Too many ways to read this command: put its names in quotes"}
	case len(r.done) == 0 && r.best != nil:
		return nil, r.best.err
	case len(r.done) == 0:
		return nil, &Error{Kind: Malformed, Line: line, Reason: "Cannot read this command"}
	}
	slices.SortStableFunc(r.done, func(a, b reading) int {
		return cmp.Or(cmp.Compare(a.cmd.penalty, b.cmd.penalty), cmp.Compare(a.seq, b.seq))
	})
	out := make([]Command, 0, len(r.done))
	for _, d := range r.done {
		if !slices.ContainsFunc(out, func(c Command) bool { return maps.Equal(c.Fields, d.cmd.Fields) }) {
			out = append(out, d.cmd)
		}
	}
	return out, nil
}

// index finds where each field's keyword occurs.
func (r *reader) index() {
	r.kwAt = make([][]int, len(r.toks))
	r.last = make([]int, len(r.spec.Fields))
	for f := range r.spec.Fields {
		r.last[f] = -1
	}
	for i := range r.toks {
		for f, kw := range r.spec.keywords {
			if len(kw) > 0 && r.keywordAt(i, kw) {
				r.kwAt[i] = append(r.kwAt[i], f)
				r.last[f] = i
			}
		}
		// The longest keyword first: "SHIPS FROM" before "SHIPS".
		slices.SortStableFunc(r.kwAt[i], func(a, b int) int {
			return cmp.Compare(len(r.spec.keywords[b]), len(r.spec.keywords[a]))
		})
	}
}

func (r *reader) keywordAt(i int, kw []string) bool {
	if i+len(kw) > len(r.toks) {
		return false
	}
	for k, w := range kw {
		t := r.toks[i+k]
		if t.quoted || t.sep || t.word != w {
			return false
		}
	}
	return true
}

// kwUpper reports whether the keyword of field f starting at token i is
// written in capitals.
func (r *reader) kwUpper(i, f int) bool {
	for k := range r.spec.keywords[f] {
		if !r.toks[i+k].upper {
			return false
		}
	}
	return true
}

func (r *reader) walk(st state) {
	if r.overflow {
		return
	}
	if r.steps++; r.steps > r.limit {
		r.overflow = true
		return
	}
	n := len(r.toks)
	if st.cur >= 0 && r.spec.Fields[st.cur].Type == Text {
		r.walkText(st)
		return
	}
	if st.i >= n {
		r.finish(st)
		return
	}
	kws := r.kwAt[st.i]
	forced := false
	for _, f := range kws {
		forced = forced || (r.upper && r.kwUpper(st.i, f))
		next, err := r.open(st, f, st.i)
		if err != nil {
			r.fail(err, st, 0)
			continue
		}
		r.walk(next)
	}
	if forced {
		return // a keyword in capitals in a command in capitals is a keyword
	}
	if st.cur >= 0 {
		if len(kws) > 0 && r.hopeless(st, kws) {
			return
		}
		st.i++
		r.walk(st)
		return
	}
	if len(kws) == 0 {
		r.fail(r.stray(st), st, 0)
	}
}

// walkText reads free text to the end, or to a line that starts with the
// keyword of a field not given yet followed by a separator or written in
// capitals ("TONE: dark" under a description).
func (r *reader) walkText(st state) {
	for j := st.i; j < len(r.toks); j++ {
		if !r.toks[j].lineStart {
			continue
		}
		for _, f := range r.kwAt[j] {
			end := j + len(r.spec.keywords[f])
			if !r.kwUpper(j, f) && !(end < len(r.toks) && r.toks[end].sep) {
				continue
			}
			if f == st.cur || r.given(st, f) || r.groupTaken(st, f) >= 0 {
				continue
			}
			next, err := r.open(st, f, j)
			if err != nil {
				r.fail(err, st, 0)
				return
			}
			r.walk(next)
			return
		}
	}
	st.i = len(r.toks)
	r.finish(st)
}

// hopeless reports whether reading the keyword words at st.i as part of a
// value leaves the branch no way to complete: each is the keyword of a
// required field not given yet that does not occur again.
func (r *reader) hopeless(st state, kws []int) bool {
	for _, f := range kws {
		fd := r.spec.Fields[f]
		if !fd.Required || f == st.cur || r.given(st, f) || r.last[f] > st.i {
			return false
		}
	}
	return true
}

// open closes the value being read and starts field f at token at.
func (r *reader) open(st state, f, at int) (state, *Error) {
	st.given = slices.Clip(st.given)
	if err := r.close(&st, at); err != nil {
		return st, err
	}
	fd := &r.spec.Fields[f]
	if r.given(st, f) {
		return st, &Error{Kind: Malformed, Line: r.line, Field: fd.Key,
			Reason: fmt.Sprintf("%s is given twice (if one is part of a name, put that name in quotes)", fd.name())}
	}
	if g := r.groupTaken(st, f); g >= 0 {
		other := &r.spec.Fields[g]
		return st, &Error{Kind: Malformed, Line: r.line, Field: fd.Group,
			Reason: fmt.Sprintf("%s and %s cannot be used together (give one %s; a name that holds %s goes in quotes)", other.name(), fd.name(), fd.Group, fd.name())}
	}
	if r.upper && !r.kwUpper(at, f) {
		st.penalty++
	}
	st.cur = f
	st.i = at + len(r.spec.keywords[f])
	if st.i < len(r.toks) && r.toks[st.i].sep {
		st.i++
	}
	st.from = st.i
	if fd.Type == Flag {
		st.given = append(st.given, slot{field: f, from: st.from, to: st.from, value: strings.Join(r.spec.keywords[f], " ")})
		st.cur = -1 // a flag takes no value: words after it are stray
	}
	return st, nil
}

// close ends the value of the current field at token to and checks it.
func (r *reader) close(st *state, to int) *Error {
	if st.cur < 0 {
		return nil
	}
	f := st.cur
	fd := &r.spec.Fields[f]
	toks := r.toks[st.from:to]
	st.cur = -1
	if len(toks) == 0 {
		return r.missingValue(fd)
	}
	v := value(r.text, toks)
	switch fd.Type {
	case Name:
		v = cleanName(v)
		if v == "" {
			return r.missingValue(fd)
		}
	case Enum:
		given := strings.Trim(v, `"'“”‘’*_ .,;!`)
		i := slices.IndexFunc(fd.Values, func(ok string) bool { return strings.EqualFold(ok, given) })
		if i < 0 {
			return &Error{Kind: Invalid, Line: r.line, Field: fd.Key,
				Reason: fmt.Sprintf("Invalid %s %q (must be %s)", fd.name(), given, valuesList(fd.Values))}
		}
		v = fd.Values[i]
	case Number:
		given := strings.Trim(v, `"'*_ .,;`)
		n, err := strconv.ParseUint(given, 10, 31)
		if err != nil {
			return &Error{Kind: Invalid, Line: r.line, Field: fd.Key,
				Reason: fmt.Sprintf("Invalid %s %q (must be a whole number)", fd.name(), given)}
		}
		v = strconv.FormatUint(n, 10)
	}
	st.given = append(st.given, slot{field: f, from: st.from, to: to, value: v})
	return nil
}

func (r *reader) missingValue(fd *Field) *Error {
	e := &Error{Kind: Missing, Line: r.line, Field: fd.Key}
	switch {
	case fd.Keyword == "":
		e.Reason = fmt.Sprintf("Missing %s after %s", fd.label(), strings.Join(r.spec.phrase, " "))
	case fd.Type == Enum:
		e.Reason = fmt.Sprintf("Missing value after %s (must be %s)", fd.name(), valuesList(fd.Values))
	case fd.Type == Text:
		e.Reason = fmt.Sprintf("Missing text after %s", fd.name())
	default:
		e.Reason = fmt.Sprintf("Missing %s after %s", fd.label(), fd.name())
	}
	return e
}

// stray is the error of a word that fits nowhere.
func (r *reader) stray(st state) *Error {
	start := r.toks[st.i]
	end := start
	for k := st.i; k < len(r.toks) && k < st.i+6; k++ {
		if k > st.i && (r.toks[k].lineStart || len(r.kwAt[k]) > 0) {
			break
		}
		end = r.toks[k]
	}
	what := strings.Join(r.spec.phrase, " ")
	hint := ""
	if len(st.given) > 0 {
		last := &r.spec.Fields[st.given[len(st.given)-1].field]
		what = last.name()
		if last.Type == Flag {
			hint = " (put a name that holds keyword words in quotes)"
		}
	}
	return &Error{Kind: Malformed, Line: r.line,
		Reason: fmt.Sprintf("Unexpected %q after %s%s", strings.Join(strings.Fields(r.text[start.start:end.end]), " "), what, hint)}
}

// finish closes the last value and records a complete reading, or what is
// missing.
func (r *reader) finish(st state) {
	st.given = slices.Clip(st.given)
	if err := r.close(&st, len(r.toks)); err != nil {
		r.fail(err, st, 0)
		return
	}
	var missing []string
	var field string
	groups := map[string]bool{}
	for f, fd := range r.spec.Fields {
		switch {
		case fd.Required && !r.given(st, f):
			missing = append(missing, fd.name())
			field = fd.Key
		case fd.Group != "" && !groups[fd.Group]:
			groups[fd.Group] = true
			if g := r.spec.group(fd.Group); g != nil && g.Required && r.groupTaken(st, f) < 0 && !r.given(st, f) {
				missing = append(missing, g.label())
				field = g.Name
			}
		}
	}
	if len(missing) > 0 {
		e := &Error{Kind: Missing, Line: r.line, Field: field}
		switch {
		case len(missing) > 1:
			e.Field = ""
			e.Reason = "Missing required fields " + list(missing, "and")
		case r.spec.group(field) != nil:
			e.Reason = "Missing required " + missing[0]
		default:
			e.Reason = "Missing required field " + missing[0]
		}
		r.fail(e, st, len(missing))
		return
	}
	cmd := Command{Spec: r.spec, Line: r.line, Fields: make(map[string]string, len(st.given)), penalty: st.penalty}
	for _, s := range st.given {
		cmd.Fields[r.spec.Fields[s.field].Key] = s.value
	}
	r.seq++
	r.done = append(r.done, reading{cmd: cmd, seq: r.seq})
	if len(r.done) > maxReadings {
		r.overflow = true
	}
}

// fail records the error of a branch if it is the most helpful so far: an
// invalid value before a missing field before stray text, fewer missing
// fields first, then the reading that keeps to the command's letter case,
// then the one found first (the one that takes keywords as keywords).
func (r *reader) fail(err *Error, st state, missing int) {
	r.seq++
	f := &failure{err: err, missing: missing, penalty: st.penalty, seq: r.seq}
	if r.best == nil || rank(f, r.best) < 0 {
		r.best = f
	}
}

func rank(a, b *failure) int {
	order := func(k ErrorKind) int {
		switch k {
		case Invalid:
			return 0
		case Missing:
			return 1
		}
		return 2
	}
	return cmp.Or(
		cmp.Compare(order(a.err.Kind), order(b.err.Kind)),
		cmp.Compare(a.missing, b.missing),
		cmp.Compare(a.penalty, b.penalty),
		cmp.Compare(a.seq, b.seq))
}

func (r *reader) given(st state, f int) bool {
	return slices.ContainsFunc(st.given, func(s slot) bool { return s.field == f })
}

// groupTaken returns the field of f's group already given, or -1.
func (r *reader) groupTaken(st state, f int) int {
	g := r.spec.Fields[f].Group
	if g == "" {
		return -1
	}
	for _, s := range st.given {
		if s.field != f && r.spec.Fields[s.field].Group == g {
			return s.field
		}
	}
	return -1
}

// cleanName trims what often clings to a name written inline: emphasis
// marks and trailing punctuation.
func cleanName(s string) string {
	s = strings.Trim(s, "*_ ")
	s = strings.TrimRight(s, ",;:.")
	s = strings.Trim(s, "*_ ")
	if len(s) >= 2 && strings.ContainsAny(s[:1], `"'`) && s[len(s)-1] == s[0] {
		s = strings.TrimSpace(s[1 : len(s)-1])
	}
	return s
}
