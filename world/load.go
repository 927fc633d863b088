package world

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Reads is what a kind of simulation reads beside simulation.yaml: its
// files, and its folders (prompts/ for every kind). A folder it does not
// read is warned about.
type Reads struct {
	Files, Folders []string
	// Load reads and checks what the kind's simulation holds beyond
	// simulation.yaml's own fields (the kind's files, a field of
	// simulation.yaml it requires), filling sim; every problem goes to
	// f. Nil: nothing more is read. It runs once simulation.yaml is
	// read, even when that file had problems or was missing (then
	// f.Simulation is nil), so that one pass lists every problem.
	Load func(f *Files, sim *Simulation)
	// Default says a simulation.yaml that names no kind is of this kind.
	Default bool
}

// Kinds are the kinds a loader accepts, each with what it reads. The
// session layer builds them from its registry of kinds: world knows none.
type Kinds map[string]Reads

// Names lists the kinds: the default kind first, then the others sorted.
func (ks Kinds) Names() []string {
	out := slices.Sorted(maps.Keys(ks))
	slices.SortStableFunc(out, func(a, b string) int {
		switch {
		case ks[a].Default == ks[b].Default:
			return 0
		case ks[a].Default:
			return -1
		}
		return 1
	})
	return out
}

// fallback is the kind of a simulation.yaml that names none ("" when no
// kind is the default).
func (ks Kinds) fallback() string {
	for name, r := range ks {
		if r.Default {
			return name
		}
	}
	return ""
}

// Named is the kind dir's simulation.yaml names, read leniently (the file
// need not load otherwise), as Load reads it: a file that names none is of
// the default kind. It is "" when there is no file to read.
func (ks Kinds) Named(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "simulation.yaml"))
	if err != nil {
		return ""
	}
	var head struct {
		Kind string `yaml:"kind"`
	}
	if yaml.Unmarshal(b, &head) != nil || head.Kind == "" {
		return ks.fallback()
	}
	return head.Kind
}

// idPattern is what every simulation, character and location id must match:
// ids end up in entity keys, file names and schema enums.
var idPattern = regexp.MustCompile(`^[a-z0-9_-]+$`)

// Load reads the simulation in dir, of one of the kinds ks:
// simulation.yaml and what its kind reads besides (Reads.Load). Each file
// holds one YAML document. When the files
// have any problem it returns a nil Simulation and a Problems error
// listing all of them, each a *LoadError naming file and line. Folders the
// simulation's kind does not read are not problems: they are listed in its
// Warnings.
func (ks Kinds) Load(dir string) (*Simulation, error) {
	sim, problems, _ := ks.load(dir)
	if len(problems) > 0 {
		return nil, Problems(problems)
	}
	return sim, nil
}

// Lint reports every problem with the simulation files in dir, of one of
// the kinds ks, in file and line order (nil means Load will succeed), and
// every warning: the folders of dir that its kind does not read, which
// Load also puts in the Simulation's Warnings. Prompt overrides are not
// checked here: which templates exist is the prompts package's knowledge.
func (ks Kinds) Lint(dir string) (problems, warnings []error) {
	_, problems, warnings = ks.load(dir)
	return problems, warnings
}

func (ks Kinds) load(dir string) (*Simulation, []error, []error) {
	l := &loader{dir: dir, order: make(map[string]int), kinds: ks}
	sim := l.load()
	var warnings []error
	if sim != nil {
		warnings = sim.Warnings
	}
	if len(l.problems) == 0 {
		return sim, nil, warnings
	}
	slices.SortStableFunc(l.problems, func(a, b *LoadError) int {
		return cmp.Or(cmp.Compare(l.rank(a.File), l.rank(b.File)), cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
	})
	errs := make([]error, len(l.problems))
	for i, p := range l.problems {
		errs[i] = p
	}
	return nil, errs, warnings
}

// loader collects every problem found while reading one simulation folder.
type loader struct {
	dir      string
	kinds    Kinds
	problems []*LoadError
	order    map[string]int // file -> order it was read in, to sort problems
}

func (l *loader) add(e *LoadError) { l.problems = append(l.problems, e) }

func (l *loader) rank(file string) int {
	if r, ok := l.order[file]; ok {
		return r
	}
	return len(l.order)
}

func (l *loader) load() *Simulation {
	info, err := os.Stat(l.dir)
	if err != nil {
		l.add(&LoadError{File: l.dir, Msg: "cannot open simulation folder: " + pathlessError(err), Err: err})
		return nil
	}
	if !info.IsDir() {
		l.add(&LoadError{File: l.dir, Msg: "not a folder: a simulation is a folder holding simulation.yaml"})
		return nil
	}
	sim := &Simulation{Dir: l.dir, Kind: l.kinds.fallback()}
	f := l.loadSimulation(sim)
	sim.Warnings = l.ignoredFolders(sim.Kind)
	if load := l.kinds[sim.Kind].Load; load != nil {
		load(&Files{l: l, Simulation: f}, sim)
	}
	l.loadSettings(f, sim)
	return sim
}

// ignoredFolders returns a warning for each folder of the simulation that
// a simulation of this kind does not read (a characters/ beside a game,
// a misspelt locaitons/), in name order. Hidden folders (.git) are left
// alone; a folder that cannot be listed is reported by the loader itself.
func (l *loader) ignoredFolders(kind string) []error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return nil
	}
	read := l.kinds[kind].Folders
	var warnings []error
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() || strings.HasPrefix(name, ".") || slices.Contains(read, name) {
			continue
		}
		warnings = append(warnings, &LoadError{File: filepath.Join(l.dir, name),
			Msg: fmt.Sprintf("folder ignored: a %s simulation reads only %s", kind, readList(l.kinds[kind].Files, read))})
	}
	return warnings
}

// readList names what a kind reads: "simulation.yaml, characters/,
// locations/ and prompts/".
func readList(files, folders []string) string {
	out := append([]string{"simulation.yaml"}, files...)
	for _, f := range folders {
		out = append(out, f+"/")
	}
	return strings.Join(out[:len(out)-1], ", ") + " and " + out[len(out)-1]
}

// loadSimulation reads simulation.yaml into sim, but for its settings
// (loadSettings), and returns its fields; nil when it did not read.
func (l *loader) loadSimulation(sim *Simulation) *Fields {
	path := filepath.Join(l.dir, "simulation.yaml")
	l.order[path] = len(l.order)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		l.add(&LoadError{File: path, Msg: "missing: every simulation folder needs a simulation.yaml", Err: err})
		return nil
	}
	f := l.readYAML(path, "simulation", simulationFields)
	if f == nil {
		return nil
	}
	sim.ID = f.Text("id")
	sim.Title = f.Text("title")
	sim.Premise = f.Text("premise")
	if sim.ID != "" && !idPattern.MatchString(sim.ID) {
		l.badID(f, sim.ID)
	}
	if k := f.Text("kind"); k != "" {
		if _, ok := l.kinds[k]; ok {
			sim.Kind = k
		} else {
			l.add(&LoadError{File: path, Line: f.Line("kind"), Field: "kind",
				Msg: fmt.Sprintf("kind %q must be one of %s", k, strings.Join(l.kinds.Names(), ", "))})
		}
	}
	return f
}

// loadSettings decodes the settings of simulation.yaml, whose fields f
// are (nil: it did not read), into sim.
func (l *loader) loadSettings(f *Fields, sim *Simulation) {
	if f == nil {
		return
	}
	if n := f.nodes["settings"]; n != nil {
		if err := n.Decode(&sim.Settings); err != nil {
			l.add(&LoadError{File: f.file, Line: n.Line, Field: "settings", Msg: "settings: " + err.Error(), Err: err})
		}
	}
}

// entityFiles lists the YAML files of one entity folder in name order. A
// missing folder holds no files; whether that is a problem is decided later.
// It is false when the folder could not be listed (reported here).
func (l *loader) entityFiles(sub string) ([]string, bool) {
	dir := filepath.Join(l.dir, sub)
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, true
	}
	if err != nil {
		l.add(&LoadError{File: dir, Msg: "cannot read folder: " + pathlessError(err), Err: err})
		return nil, false
	}
	var paths []string
	for _, e := range entries {
		name := e.Name()
		ext := filepath.Ext(name)
		if e.IsDir() || strings.HasPrefix(name, ".") || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		path := filepath.Join(dir, name)
		l.order[path] = len(l.order)
		paths = append(paths, path)
	}
	return paths, true
}

// checkID reports a bad or duplicate id and returns whether the entity can
// be kept: one without an id, or with an id already taken, cannot.
func (l *loader) checkID(f *Fields, what string, seen map[string]*Fields) bool {
	id := f.Text("id")
	if id == "" {
		return false // reported as a missing field
	}
	if !idPattern.MatchString(id) {
		l.badID(f, id)
	}
	if first, dup := seen[id]; dup {
		l.add(&LoadError{File: f.file, Line: f.Line("id"), Field: "id",
			Msg: fmt.Sprintf("duplicate %s id %q: already used by %s:%d", what, id, first.file, first.Line("id"))})
		return false
	}
	seen[id] = f
	return true
}

func (l *loader) badID(f *Fields, id string) {
	l.add(&LoadError{File: f.file, Line: f.Line("id"), Field: "id",
		Msg: fmt.Sprintf("id %q must match [a-z0-9_-]+ (lower-case letters, digits, _ and -)", id)})
}
