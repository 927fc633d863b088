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
	// Cast says the simulation is a cast of characters in connected
	// places: it needs a premise, and at least one characters/*.yaml and
	// one locations/*.yaml, which are read and checked.
	Cast bool
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
// simulation.yaml and, for a kind whose simulation is a cast (Reads.Cast),
// characters/*.yaml and locations/*.yaml (.yml is accepted too; other
// files are ignored). Each file holds one YAML document. When the files
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

	// locationsUnread is set when a location file could not be read or had
	// no id: references to unknown locations are then not reported, since
	// the missing id may be the one they name.
	locationsUnread bool
	// charactersUnread is set when the characters folder or a character
	// file could not be read or had no id: an empty cast is then not
	// reported, since that file is the cast, only broken.
	charactersUnread bool
}

func (l *loader) add(e *LoadError) { l.problems = append(l.problems, e) }

func (l *loader) rank(file string) int {
	if r, ok := l.order[file]; ok {
		return r
	}
	return len(l.order)
}

// authored pairs a loaded entity with the fields it came from, for the line
// numbers of problems found after every file is read.
type authored[T any] struct {
	value T
	f     *fields
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
	l.loadSimulation(sim)
	sim.Warnings = l.ignoredFolders(sim.Kind)
	if !l.kinds[sim.Kind].Cast {
		return sim // nothing but simulation.yaml (and its own files and prompts/)
	}
	chars := l.loadCharacters()
	locs := l.loadLocations()

	for _, c := range chars {
		sim.Characters = append(sim.Characters, c.value)
	}
	for _, loc := range locs {
		sim.Locations = append(sim.Locations, loc.value)
	}
	if len(chars) == 0 && !l.charactersUnread {
		l.add(&LoadError{File: filepath.Join(l.dir, "characters"),
			Msg: "no characters: a " + sim.Kind + " simulation needs at least one characters/*.yaml"})
	}
	if len(locs) == 0 && !l.locationsUnread {
		l.add(&LoadError{File: filepath.Join(l.dir, "locations"),
			Msg: "no locations: a " + sim.Kind + " simulation needs at least one locations/*.yaml"})
		return sim
	}
	l.checkReferences(chars, locs)
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

func (l *loader) loadSimulation(sim *Simulation) {
	path := filepath.Join(l.dir, "simulation.yaml")
	l.order[path] = len(l.order)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		l.add(&LoadError{File: path, Msg: "missing: every simulation folder needs a simulation.yaml", Err: err})
		return
	}
	f := l.readYAML(path, "simulation", simulationFields)
	if f == nil {
		return
	}
	sim.ID = f.text("id")
	sim.Title = f.text("title")
	sim.Premise = f.text("premise")
	if sim.ID != "" && !idPattern.MatchString(sim.ID) {
		l.badID(f, sim.ID)
	}
	if k := f.text("kind"); k != "" {
		if _, ok := l.kinds[k]; ok {
			sim.Kind = k
		} else {
			l.add(&LoadError{File: path, Line: f.lineOf("kind"), Field: "kind",
				Msg: fmt.Sprintf("kind %q must be one of %s", k, strings.Join(l.kinds.Names(), ", "))})
		}
	}
	if l.kinds[sim.Kind].Cast && sim.Premise == "" {
		l.add(&LoadError{File: path, Line: f.lineOf("premise"), Field: "premise",
			Msg: fmt.Sprintf(`missing required field "premise": a %s simulation needs a world premise`, sim.Kind)})
	}
	if n := f.nodes["settings"]; n != nil {
		if err := n.Decode(&sim.Settings); err != nil {
			l.add(&LoadError{File: path, Line: n.Line, Field: "settings", Msg: "settings: " + err.Error(), Err: err})
		}
	}
}

func (l *loader) loadCharacters() []authored[*Character] {
	var out []authored[*Character]
	ids := make(map[string]*fields)
	paths, ok := l.entityFiles("characters")
	l.charactersUnread = !ok
	for _, path := range paths {
		f := l.readYAML(path, "character", characterFields)
		if f == nil || f.text("id") == "" {
			l.charactersUnread = true
			continue
		}
		if !l.checkID(f, "character", ids) {
			continue
		}
		c := &Character{
			ID:          f.text("id"),
			Name:        f.text("name"),
			Description: f.text("description"),
			Start: CharacterState{
				Location:       f.text("state.location"),
				InternalState:  f.text("state.internal_state"),
				ExternalIntent: f.text("state.external_intent"),
			},
		}
		out = append(out, authored[*Character]{c, f})
	}
	slices.SortFunc(out, func(a, b authored[*Character]) int { return cmp.Compare(a.value.ID, b.value.ID) })
	return out
}

func (l *loader) loadLocations() []authored[*Location] {
	var out []authored[*Location]
	ids := make(map[string]*fields)
	paths, ok := l.entityFiles("locations")
	l.locationsUnread = !ok
	for _, path := range paths {
		f := l.readYAML(path, "location", locationFields)
		if f == nil || f.text("id") == "" {
			l.locationsUnread = true
			continue
		}
		if !l.checkID(f, "location", ids) {
			continue
		}
		loc := &Location{
			ID:          f.text("id"),
			Name:        f.text("name"),
			Description: f.text("description"),
			Start: LocationState{
				Moment:      f.text("state.moment"),
				Description: f.text("state.description"),
			},
		}
		if seq := f.nodes["connections"]; seq != nil {
			for _, item := range seq.Content {
				if item = resolve(item); item.Kind == yaml.ScalarNode {
					loc.Connections = append(loc.Connections, strings.TrimSpace(item.Value))
				}
			}
		}
		out = append(out, authored[*Location]{loc, f})
	}
	slices.SortFunc(out, func(a, b authored[*Location]) int { return cmp.Compare(a.value.ID, b.value.ID) })
	return out
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
func (l *loader) checkID(f *fields, what string, seen map[string]*fields) bool {
	id := f.text("id")
	if id == "" {
		return false // reported as a missing field
	}
	if !idPattern.MatchString(id) {
		l.badID(f, id)
	}
	if first, dup := seen[id]; dup {
		l.add(&LoadError{File: f.file, Line: f.lineOf("id"), Field: "id",
			Msg: fmt.Sprintf("duplicate %s id %q: already used by %s:%d", what, id, first.file, first.lineOf("id"))})
		return false
	}
	seen[id] = f
	return true
}

func (l *loader) badID(f *fields, id string) {
	l.add(&LoadError{File: f.file, Line: f.lineOf("id"), Field: "id",
		Msg: fmt.Sprintf("id %q must match [a-z0-9_-]+ (lower-case letters, digits, _ and -)", id)})
}

// checkReferences reports starting locations and connections that name no
// location, connections of a location to itself, and repeated connections.
func (l *loader) checkReferences(chars []authored[*Character], locs []authored[*Location]) {
	known := make(map[string]bool, len(locs))
	ids := make([]string, len(locs))
	for i, loc := range locs {
		known[loc.value.ID] = true
		ids[i] = loc.value.ID
	}
	list := strings.Join(ids, ", ")

	for _, c := range chars {
		if at := c.value.Start.Location; at != "" && !known[at] && !l.locationsUnread {
			l.add(&LoadError{File: c.f.file, Line: c.f.lineOf("state.location"), Field: "state.location",
				Msg: fmt.Sprintf("state.location %q is not a location (locations: %s)", at, list)})
		}
	}
	for _, loc := range locs {
		seq := loc.f.nodes["connections"]
		if seq == nil {
			continue
		}
		listed := make(map[string]int)
		for i, item := range seq.Content {
			item = resolve(item)
			if item.Kind != yaml.ScalarNode || isNull(item) || strings.TrimSpace(item.Value) == "" {
				l.add(&LoadError{File: loc.f.file, Line: item.Line, Field: "connections",
					Msg: fmt.Sprintf("connections[%d] must be a location id, found %s", i, describe(item))})
				continue
			}
			to := strings.TrimSpace(item.Value)
			switch first, dup := listed[to]; {
			case to == loc.value.ID:
				l.add(&LoadError{File: loc.f.file, Line: item.Line, Field: "connections",
					Msg: fmt.Sprintf("connections: %q is this location itself (staying put is always allowed)", to)})
			case !known[to] && !l.locationsUnread:
				l.add(&LoadError{File: loc.f.file, Line: item.Line, Field: "connections",
					Msg: fmt.Sprintf("connections: %q is not a location (locations: %s)", to, list)})
			case dup:
				l.add(&LoadError{File: loc.f.file, Line: item.Line, Field: "connections",
					Msg: fmt.Sprintf("connections: %q is listed twice (first at line %d)", to, first)})
			}
			if _, dup := listed[to]; !dup {
				listed[to] = item.Line
			}
		}
	}
}
