package command

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// ValueType is how the value of a field is read.
type ValueType int

const (
	// Name is a name or a reference to one: the words up to the next
	// keyword, or one quoted string, which may hold keyword words.
	Name ValueType = iota + 1
	// Enum is one of the field's Values, in any case.
	Enum
	// Text is free text running to the end of the paragraph.
	Text
	// Flag is a keyword standing alone, such as FIRST.
	Flag
	// Number is a whole number, such as the ships of an order.
	Number
)

// Field is one part of a command.
type Field struct {
	// Key names the value in Command.Fields, e.g. "tone".
	Key string
	// Keyword introduces the field, e.g. "TONE" or "SHIPS FROM". The one
	// field without a keyword is the subject: it must come first and is read
	// right after the command phrase.
	Keyword string
	Type    ValueType
	// Values are the allowed values of an Enum, as they are reported.
	Values []string
	// Required fields must be given. A field of a Group is never required
	// on its own; the group is.
	Required bool
	// Group makes fields alternatives of each other: at most one of a group
	// may be given, e.g. FIRST, LAST, AFTER and BEFORE of "position".
	Group string
	// Label names the value in messages, e.g. "period name" for the subject
	// or "period" for AFTER; it defaults to the key.
	Label string
}

// Group is a set of alternative fields.
type Group struct {
	Name     string
	Required bool
	// Label names the group in messages, e.g.
	// "position (FIRST, LAST, AFTER <period> or BEFORE <period>)".
	Label string
}

// Items describes the lines that follow a command and list its items, such
// as the "- YES: Magic exists" lines of a palette.
type Items struct {
	// Noun names one item in messages, e.g. "palette item".
	Noun string
	// Kinds are the words that start an item, e.g. YES and NO.
	Kinds []string
	// Required commands need at least one item.
	Required bool
}

// Spec is one command of a grammar.
type Spec struct {
	// Name identifies the command to the game, e.g. "period".
	Name string
	// Phrase starts the command, e.g. "CREATE PERIOD".
	Phrase string
	Fields []Field
	Groups []Group
	// Items, when set, makes the lines after the command its items.
	Items *Items

	phrase   []string   // upper-case words of Phrase
	keywords [][]string // upper-case words of each field's Keyword
}

// Grammar is a set of commands. It is immutable and safe for concurrent use.
type Grammar struct {
	specs    []*Spec
	starters map[string]bool // first words of the phrases, upper case
	// fieldWords are the first words of every field keyword, upper case.
	fieldWords map[string]bool
}

// NewGrammar checks the specs and returns their grammar.
func NewGrammar(specs ...Spec) (*Grammar, error) {
	g := &Grammar{starters: map[string]bool{}, fieldWords: map[string]bool{}}
	var errs []error
	for i := range specs {
		s := specs[i]
		if err := s.prepare(); err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range g.specs {
			if slices.Equal(o.phrase, s.phrase) {
				errs = append(errs, fmt.Errorf("command: phrase %q used by %s and %s", s.Phrase, o.Name, s.Name))
			}
		}
		g.starters[s.phrase[0]] = true
		for _, kw := range s.keywords {
			if len(kw) > 0 {
				g.fieldWords[kw[0]] = true
			}
		}
		g.specs = append(g.specs, &s)
	}
	if len(g.specs) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("command: a grammar needs at least one spec"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return g, nil
}

// MustGrammar is NewGrammar for grammars written in code; it panics on a
// mistake in the specs.
func MustGrammar(specs ...Spec) *Grammar {
	g, err := NewGrammar(specs...)
	if err != nil {
		panic(err)
	}
	return g
}

// Specs returns the commands of the grammar.
func (g *Grammar) Specs() []*Spec { return slices.Clone(g.specs) }

// Spec returns the command named name, or nil.
func (g *Grammar) Spec(name string) *Spec {
	for _, s := range g.specs {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// prepare checks the spec and caches its upper-case words.
func (s *Spec) prepare() error {
	s.Fields = slices.Clone(s.Fields)
	s.Groups = slices.Clone(s.Groups)
	s.phrase = strings.Fields(strings.ToUpper(s.Phrase))
	if s.Name == "" || len(s.phrase) == 0 {
		return fmt.Errorf("command: spec %q needs a name and a phrase", s.Name)
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("command: spec %s: "+format, append([]any{s.Name}, args...)...))
	}
	s.keywords = make([][]string, len(s.Fields))
	keys := map[string]bool{}
	groups := map[string]bool{}
	for _, gr := range s.Groups {
		groups[gr.Name] = true
	}
	for i, f := range s.Fields {
		if f.Key == "" || keys[f.Key] {
			bad("field %d: empty or repeated key %q", i, f.Key)
		}
		keys[f.Key] = true
		s.keywords[i] = strings.Fields(strings.ToUpper(f.Keyword))
		switch {
		case f.Type < Name || f.Type > Number:
			bad("field %s: unknown kind %d", f.Key, f.Type)
		case f.Keyword == "" && i != 0:
			bad("field %s: only the first field may be the subject (no keyword)", f.Key)
		case f.Keyword == "" && (f.Type == Flag || f.Type == Text):
			bad("field %s: the subject cannot be a flag or free text", f.Key)
		case f.Type == Enum && len(f.Values) == 0:
			bad("field %s: an enum needs values", f.Key)
		case f.Group != "" && f.Required:
			bad("field %s: a field of a group cannot be required on its own", f.Key)
		case f.Group != "" && !groups[f.Group]:
			bad("field %s: group %q is not declared", f.Key, f.Group)
		}
		for j := range i {
			if len(s.keywords[i]) > 0 && slices.Equal(s.keywords[i], s.keywords[j]) {
				bad("keyword %q used twice", f.Keyword)
			}
		}
	}
	if s.Items != nil && len(s.Items.Kinds) == 0 {
		bad("items need kinds")
	}
	return errors.Join(errs...)
}

// subject returns the index of the subject field, or -1.
func (s *Spec) subject() int {
	if len(s.Fields) > 0 && s.Fields[0].Keyword == "" {
		return 0
	}
	return -1
}

func (f *Field) label() string {
	if f.Label != "" {
		return f.Label
	}
	return f.Key
}

// name is how messages call the field: its keyword, or its label.
func (f *Field) name() string {
	if f.Keyword != "" {
		return strings.ToUpper(f.Keyword)
	}
	return f.label()
}

func (s *Spec) group(name string) *Group {
	for i := range s.Groups {
		if s.Groups[i].Name == name {
			return &s.Groups[i]
		}
	}
	return nil
}

func (g *Group) label() string {
	if g.Label != "" {
		return g.Label
	}
	return g.Name
}

// valuesList renders alternatives: "light or dark", "a, b or c".
func valuesList(vs []string) string { return list(vs, "or") }

// list joins words with commas and a conjunction before the last.
func list(vs []string, conj string) string {
	switch len(vs) {
	case 0:
		return ""
	case 1:
		return vs[0]
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " " + conj + " " + vs[len(vs)-1]
}
