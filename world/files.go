package world

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// Files is how a kind reads what its simulation holds beyond
// simulation.yaml's own fields (Reads.Load): the files it names, read and
// checked as simulation.yaml is (one YAML document each, known fields,
// every problem at its line), and problems of its own. Load returns every
// problem found, in file and line order.
type Files struct {
	l *loader
	// Simulation is the fields of simulation.yaml; nil when it did not
	// read (missing, not YAML), a problem already reported.
	Simulation *Fields
}

// Dir is the simulation's folder.
func (f *Files) Dir() string { return f.l.dir }

// Problem reports a problem of file (a path under Dir) at line (0: the
// file as a whole), in field ("state.location"; "" for none).
func (f *Files) Problem(file string, line int, field, msg string) {
	f.l.add(&LoadError{File: file, Line: line, Field: field, Msg: msg})
}

// Folder lists the YAML files (.yaml, .yml) of the folder sub of Dir in
// name order, hidden files and subfolders left out. A missing folder holds
// none; ok is false when the folder could not be listed (reported).
func (f *Files) Folder(sub string) (paths []string, ok bool) { return f.l.entityFiles(sub) }

// ReadYAML reads the file at path, one what ("character"), and checks it
// against spec: an unknown, repeated or missing field, a value of the
// wrong shape, a second document are each reported at their line. It is
// nil when the file cannot be used at all (unreadable, not YAML, not a
// mapping); otherwise its fields, even when some were reported.
func (f *Files) ReadYAML(path, what string, spec []Field) *Fields {
	return f.l.readYAML(path, what, spec)
}

// CheckID reports an id of fl that is not [a-z0-9_-]+, or is already
// that of another what in seen, and reports whether the entity can be
// kept: one without an id, or whose id is taken, cannot. A kept id is
// added to seen.
func (f *Files) CheckID(fl *Fields, what string, seen map[string]*Fields) bool {
	return f.l.checkID(fl, what, seen)
}

// Item is one value of a list field, its aliases followed.
type Item struct {
	Text string // the value, trimmed
	Line int
	// Found is what the value is when it is not a text (a list, fields,
	// an empty value), as a problem names it: "" for a text.
	Found string
}

// List is the values of the list field key, nil when absent.
func (f *Fields) List(key string) []Item {
	seq := f.nodes[key]
	if seq == nil {
		return nil
	}
	out := make([]Item, len(seq.Content))
	for i, n := range seq.Content {
		n = resolve(n)
		out[i] = Item{Text: strings.TrimSpace(n.Value), Line: n.Line}
		if n.Kind != yaml.ScalarNode || isNull(n) || out[i].Text == "" {
			out[i].Found = describe(n)
		}
	}
	return out
}
