package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
	"github.com/arbiter-sim/arbiter/prompts"
)

// Phases lists the phases of kind whose calls render prompt templates, in
// the kind's order (Opener.Templates).
func Phases(kind string) []string {
	o, _ := opener(kind)
	var out []string
	for _, p := range o.Templates {
		out = append(out, p.Phase)
	}
	return out
}

// templatesOf are the templates kind renders, of phase only when it is not
// "", each once, in the kind's order. An unknown phase is an *InputError
// naming the kind's phases.
func templatesOf(kind, phase string) ([]string, error) {
	o, _ := opener(kind)
	var out []string
	for _, p := range o.Templates {
		if phase != "" && p.Phase != phase {
			continue
		}
		for _, t := range p.Templates {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	if phase != "" && out == nil {
		return nil, inputErrorf("--phase %q: a %s simulation's phases with prompt templates are %s", phase, kind, orNone(Phases(kind)))
	}
	return out, nil
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// unusedOverrides warn of the overrides of templates that kind does not
// render: they change nothing (another kind's template in its prompts/).
// Nothing is said of a kind that does not list its templates.
func unusedOverrides(kind string, overrides []Override) []error {
	used, _ := templatesOf(kind, "")
	if used == nil {
		return nil
	}
	var out []error
	for _, o := range overrides {
		if !slices.Contains(used, o.Template) {
			out = append(out, fmt.Errorf("%s: a %s simulation does not use %s, so this override changes nothing (its templates: %s)",
				o.Path, kind, o.Template, strings.Join(used, ", ")))
		}
	}
	return out
}

// InitPrompts writes the default prompt templates of the kind of the
// simulation in dir (of its phase only, when phase is not "") into
// dir/prompts/, for an author to start from, and returns the files
// written, in the kind's order. Each file is written whole or not at all.
// A file there already is overwritten only with force: without it, nothing
// is written and the *InputError names every such file. A simulation that
// does not load or an unknown phase is an *InputError too.
func InitPrompts(dir, phase string, force bool) ([]string, error) {
	sim, err := readers().Load(dir)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	names, err := templatesOf(sim.Kind, phase)
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return nil, inputErrorf("%s: a %s simulation has no prompt templates", dir, sim.Kind)
	}
	folder := filepath.Join(dir, prompts.OverrideDir)
	paths := make([]string, len(names))
	texts := make([][]byte, len(names))
	var exist []string
	for i, name := range names {
		paths[i] = filepath.Join(folder, name)
		if texts[i], err = prompts.DefaultText(name); err != nil {
			return nil, err
		}
		if _, err := os.Lstat(paths[i]); err == nil {
			exist = append(exist, paths[i])
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if len(exist) > 0 && !force {
		return nil, inputErrorf("already in %s, left as is, nothing written: %s (--force replaces each with its default)", folder, strings.Join(exist, ", "))
	}
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, err
	}
	for i, p := range paths {
		if err := atomicfile.Write(p, texts[i]); err != nil {
			return paths[:i], err
		}
	}
	return paths, nil
}

// TemplateHelp lists the prompt templates of every registered kind, by
// phase (Opener.Templates), for `arbiter prompts --help`: one line a
// phase, "  <kind> <phase>: <files>", in kind order.
func TemplateHelp() string {
	var b strings.Builder
	for _, name := range Kinds() {
		o, _ := opener(name)
		for _, p := range o.Templates {
			fmt.Fprintf(&b, "  %s %s: %s\n", name, p.Phase, strings.Join(p.Templates, ", "))
		}
	}
	return b.String()
}
