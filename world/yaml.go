package world

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The authored files are read as yaml.Node trees and checked against these
// field lists rather than decoded into structs with KnownFields: the node keeps
// the line of every key and value, so each problem (unknown field, missing
// field, wrong shape, bad id) is reported at its own line with a message in our
// words, and all of them are found in one pass for Lint.

// Field is one known key of a file's YAML mapping, as a kind's files
// declare them (Files.ReadYAML).
type Field struct {
	Key      string
	Shape    Shape
	Required bool
	Fields   []Field // known keys of a nested mapping; nil accepts any keys
}

// Shape is what a field's value must be.
type Shape int

const (
	Text Shape = iota // a scalar
	List              // a sequence
	Map               // a mapping (key: value)
)

func (s Shape) node() yaml.Kind {
	switch s {
	case List:
		return yaml.SequenceNode
	case Map:
		return yaml.MappingNode
	}
	return yaml.ScalarNode
}

var simulationFields = []Field{
	{Key: "id", Shape: Text, Required: true},
	{Key: "kind", Shape: Text},
	{Key: "title", Shape: Text, Required: true},
	{Key: "premise", Shape: Text}, // required by a kind that needs one, in its Reads.Load
	{Key: "settings", Shape: Map},
}

// Fields holds the values found in one file by dotted key ("state.location").
// Absent and null values are left out.
type Fields struct {
	file  string
	line  int // line of the top-level mapping, for problems about the whole file
	nodes map[string]*yaml.Node
}

// File is the path of the file the fields were read from.
func (f *Fields) File() string { return f.file }

// Text returns the trimmed value of a scalar field, "" when absent.
func (f *Fields) Text(key string) string {
	if n := f.nodes[key]; n != nil {
		return strings.TrimSpace(n.Value)
	}
	return ""
}

// Line returns the line of a field's value, or the file's first line when
// the field is absent.
func (f *Fields) Line(key string) int {
	if n := f.nodes[key]; n != nil {
		return n.Line
	}
	return f.line
}

// readYAML reads one file, the simulation, a character or a location as
// what says, and checks its shape against spec. It returns nil when the
// file cannot be used at all (unreadable, not YAML, not a mapping);
// otherwise the fields of its document, even if some were reported as
// problems (a second document among them).
func (l *loader) readYAML(path, what string, spec []Field) *Fields {
	data, err := ReadFile(l.dir, path)
	if errors.Is(err, ErrFile) {
		l.add(&LoadError{File: path, Msg: "not read: " + err.Error(), Err: err})
		return nil
	}
	if err != nil {
		l.add(&LoadError{File: path, Msg: "cannot read: " + pathlessError(err), Err: err})
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	err = dec.Decode(&doc)
	if errors.Is(err, io.EOF) || (err == nil && len(doc.Content) == 0) {
		l.add(&LoadError{File: path, Msg: "file is empty"})
		return nil
	}
	if err != nil {
		l.malformed(path, err)
		return nil
	}
	// yaml.Unmarshal would read the first document and drop the rest
	// without a word; a second one is most likely a second entity pasted
	// below the first (or the file's tail after a stray ---).
	var next yaml.Node
	switch err := dec.Decode(&next); {
	case errors.Is(err, io.EOF):
	case err != nil:
		l.malformed(path, err)
	default:
		l.add(&LoadError{File: path, Line: next.Line, Msg: secondDocument(what)})
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		l.add(&LoadError{File: path, Line: root.Line, Msg: "expected fields (key: value), found " + describe(root)})
		return nil
	}
	f := &Fields{file: path, line: root.Line, nodes: make(map[string]*yaml.Node)}
	l.walk(f, root, root.Line, "", spec)
	return f
}

func (l *loader) malformed(path string, err error) {
	line, msg := syntaxError(err)
	l.add(&LoadError{File: path, Line: line, Msg: "malformed YAML: " + msg, Err: err})
}

// secondDocument says why a second YAML document in a file of what
// (simulation, character, location) is refused.
func secondDocument(what string) string {
	const msg = "a second YAML document starts here: "
	if what == "simulation" {
		return msg + "simulation.yaml holds one document, and a folder one simulation"
	}
	return fmt.Sprintf("%sa %s file holds one document; put each %s in a file of its own in %ss/", msg, what, what, what)
}

// walk checks the mapping m, whose key is at line, against spec and records
// its values in f.
func (l *loader) walk(f *Fields, m *yaml.Node, line int, prefix string, spec []Field) {
	seen := make(map[string]int, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], resolve(m.Content[i+1])
		name := prefix + k.Value
		if first, dup := seen[k.Value]; dup {
			l.add(&LoadError{File: f.file, Line: k.Line, Field: name,
				Msg: fmt.Sprintf("field %q is given twice (first at line %d)", name, first)})
			continue
		}
		seen[k.Value] = k.Line
		fs, ok := findField(spec, k.Value)
		if !ok {
			l.add(&LoadError{File: f.file, Line: k.Line, Field: name,
				Msg: fmt.Sprintf("unknown field %q (known fields: %s)", name, fieldNames(spec))})
			continue
		}
		if isNull(v) {
			continue // an empty value is the same as no value
		}
		if v.Kind != fs.Shape.node() {
			l.add(&LoadError{File: f.file, Line: v.Line, Field: name,
				Msg: fmt.Sprintf("field %q must be %s, found %s", name, kindName(fs.Shape.node()), describe(v))})
			continue
		}
		if fs.Shape == Map && fs.Fields != nil {
			l.walk(f, v, k.Line, name+".", fs.Fields)
			f.nodes[name] = v
			continue
		}
		if fs.Shape == Text && strings.TrimSpace(v.Value) == "" {
			continue
		}
		f.nodes[name] = v
	}
	for _, fs := range spec {
		name := prefix + fs.Key
		if !fs.Required || f.nodes[name] != nil {
			continue
		}
		at := line
		if kl, ok := seen[fs.Key]; ok {
			at = kl // the key is there with an empty value
		}
		l.add(&LoadError{File: f.file, Line: at, Field: name, Msg: fmt.Sprintf("missing required field %q", name)})
	}
}

func findField(spec []Field, key string) (Field, bool) {
	for _, fs := range spec {
		if fs.Key == key {
			return fs, true
		}
	}
	return Field{}, false
}

func fieldNames(spec []Field) string {
	names := make([]string, len(spec))
	for i, fs := range spec {
		names[i] = fs.Key
	}
	return strings.Join(names, ", ")
}

// resolve follows YAML aliases (*anchor) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

func kindName(k yaml.Kind) string {
	switch k {
	case yaml.ScalarNode:
		return "text"
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "fields (key: value)"
	}
	return "a value"
}

func describe(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return fmt.Sprintf("text %q", n.Value)
	}
	return kindName(n.Kind)
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parserProblems are the messages of go-yaml's parser, as opposed to its
// scanner. go-yaml v3 prints a parser error's line 0-based, one too low, and
// leaves it out on the first line; syntaxError corrects that.
var parserProblems = []string{
	"did not find expected <stream-start>",
	"did not find expected <document start>",
	"did not find expected key",
	"did not find expected node content",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
	"did not find expected '-' indicator",
	"found duplicate %YAML directive",
	"found duplicate %TAG directive",
	"found incompatible YAML document",
	"found undefined tag handle",
}

// syntaxError splits a YAML parser error into its 1-based line (0 when it is
// not known) and its message without the "yaml: " prefix.
func syntaxError(err error) (int, string) {
	line, msg := 0, strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = m[2]
	}
	if slices.Contains(parserProblems, msg) {
		line++
	}
	return line, msg
}

// pathlessError drops the path from an *fs.PathError, since LoadError already
// names the file.
func pathlessError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
