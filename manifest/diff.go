package manifest

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// None stands for a side of a change that has no value: a template one run
// did not use, a seed of a kind that has none.
const None = "(none)"

// Change is one difference between two manifests: What differs (kind,
// arbiter, base_url, model, template, schema, seed, config), which one (Key:
// the phase, the file's name, the configuration key, the build field) and
// its Old and New values as text.
type Change struct {
	What string `json:"what"`
	Key  string `json:"key,omitempty"`
	Old  string `json:"old"`
	New  string `json:"new"`
}

// String says the change in one line: "model intention: a → b".
func (c Change) String() string {
	name := c.What
	if c.Key != "" {
		name += " " + c.Key
	}
	return fmt.Sprintf("%s: %s → %s", name, c.Old, c.New)
}

// Diff lists what changed from a to b, in a fixed order: kind, arbiter
// build, base URL, models, templates, schemas, seed, configuration; within
// each, by phase order or by name.
func Diff(a, b *Manifest) []Change {
	var out []Change
	add := func(what, key, old, new string) {
		if old != new {
			out = append(out, Change{What: what, Key: key, Old: old, New: new})
		}
	}
	add("kind", "", a.Kind, b.Kind)
	add("arbiter", "version", a.Arbiter.Version, b.Arbiter.Version)
	add("arbiter", "revision", orNone(a.Arbiter.Revision), orNone(b.Arbiter.Revision))
	add("arbiter", "modified", strconv.FormatBool(a.Arbiter.Modified), strconv.FormatBool(b.Arbiter.Modified))
	add("arbiter", "go", a.Arbiter.Go, b.Arbiter.Go)
	add("base_url", "", orNone(a.BaseURL), orNone(b.BaseURL))

	models := func(m *Manifest) map[string]string {
		out := map[string]string{}
		for _, p := range m.Models {
			out[p.Phase] = p.Model
		}
		return out
	}
	am, bm := models(a), models(b)
	for _, phase := range union(phases(a.Models), phases(b.Models)) {
		add("model", phase, lookup(am, phase), lookup(bm, phase))
	}
	files := func(what string, af, bf []File) {
		index := func(fs []File) map[string]File {
			m := map[string]File{}
			for _, f := range fs {
				m[f.Name] = f
			}
			return m
		}
		ai, bi := index(af), index(bf)
		for _, name := range union(slices.Sorted(maps.Keys(ai)), slices.Sorted(maps.Keys(bi))) {
			fa, inA := ai[name]
			fb, inB := bi[name]
			if inA && inB && fa.SHA256 == fb.SHA256 && fa.Source == fb.Source {
				continue
			}
			old, new := None, None
			if inA {
				old = fa.label()
			}
			if inB {
				new = fb.label()
			}
			if old == new { // same short hash and source, yet different: show it whole
				old, new = fa.Source+" sha256:"+fa.SHA256, fb.Source+" sha256:"+fb.SHA256
			}
			out = append(out, Change{What: what, Key: name, Old: old, New: new})
		}
	}
	files("template", a.Templates, b.Templates)
	files("schema", a.Schemas, b.Schemas)
	add("seed", "", seed(a.Seed), seed(b.Seed))
	for _, key := range union(slices.Sorted(maps.Keys(a.Config)), slices.Sorted(maps.Keys(b.Config))) {
		add("config", key, lookup(a.Config, key), lookup(b.Config, key))
	}
	return out
}

// label is a file as a change shows it: its source and short hash.
func (f File) label() string {
	h := f.SHA256
	if len(h) > 12 {
		h = h[:12]
	}
	return f.Source + " sha256:" + h
}

func phases(ms []PhaseModel) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Phase
	}
	return out
}

// union is a followed by the elements of b not in a, each once.
func union(a, b []string) []string {
	out := slices.Clone(a)
	for _, s := range b {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// lookup is m's value of key as a change shows it: None when absent, ""
// when empty.
func lookup(m map[string]string, key string) string {
	v, ok := m[key]
	switch {
	case !ok:
		return None
	case v == "":
		return `""`
	}
	return v
}

func orNone(s string) string {
	if s == "" {
		return None
	}
	return s
}

func seed(s *uint64) string {
	if s == nil {
		return None
	}
	return strconv.FormatUint(*s, 10)
}
