package prompts

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/arbiter-sim/arbiter/world"
)

// defaults are the default templates, every <kind or phase>_<name>.md of
// this folder (README.md, with no underscore, is not one), so that a
// kind's template added here needs no line of code; their file names are
// the template names.
//
//go:embed *_*.md
var defaults embed.FS

var (
	addedMu sync.RWMutex
	// added are the default templates kinds added (AddDefault), by name.
	added = map[string][]byte{}
)

// AddDefault makes text the default template name, for a kind whose
// templates cannot sit in this folder (one outside this module); it calls
// it from an init function, as it registers itself. Adding a name twice,
// or one of this folder's, panics.
func AddDefault(name string, text []byte) {
	addedMu.Lock()
	defer addedMu.Unlock()
	_, mine := fs.Stat(defaults, name)
	if _, dup := added[name]; dup || mine == nil {
		panic("prompts: AddDefault called twice for " + name)
	}
	added[name] = text
}

// OverrideDir is the folder of a simulation whose files override the defaults.
const OverrideDir = "prompts"

// defaultSource is the Source of a template that was not overridden.
const defaultSource = "default"

// funcs are the functions templates may call besides text/template's own.
var funcs = template.FuncMap{
	"join":   strings.Join, // {{join .Reachable ", "}}
	"latest": latest,       // {{range latest 3 .Memory}}
}

// latest is the last n entries of list (all of them when it has fewer, none
// when n <= 0), for a template that shows fewer memories than the data holds.
func latest(n int, list []world.MemoryEntry) []world.MemoryEntry {
	return list[max(0, len(list)-max(n, 0)):]
}

// Renderer renders the prompt templates of one simulation. It is safe for
// concurrent use.
type Renderer struct {
	templates map[string]*template.Template
	sources   map[string]string
	digests   map[string]string // hex SHA-256 of each template's text
	// sizes holds the length of each template's last rendering, the room
	// the next one starts with (a tick renders the same template thousands
	// of times at about the same length).
	sizes map[string]*atomic.Int64
	// halted holds, for a template whose rendering was stopped at
	// MaxSteps or MaxRenderTime, the error every later rendering returns.
	halted map[string]*atomic.Pointer[TemplateError]
	// overrides are the simulation's files that name a template.
	overrides []Override
}

// TemplateError is a template that failed to parse or to render.
type TemplateError struct {
	Name   string // template name, e.g. "phase1_intention_user.md"
	Source string // the override file it came from, or "default"
	Err    error  // text/template's error: line, and the missing key or field
}

func (e *TemplateError) Error() string {
	return fmt.Sprintf("prompt %s (%s): %v", e.Name, e.Source, e.Err)
}

func (e *TemplateError) Unwrap() error { return e.Err }

// Override is a file of a simulation's prompts/ folder that stands in for
// a default template.
type Override struct {
	Template string // the template's name, e.g. "phase1_intention_system.md"
	Path     string // the file
}

// New parses the default templates and, when simDir is not "", the overrides
// in simDir/prompts/: each file there replaces the default of the same name.
// Each folder of layers then overrides in turn (an eval variant's templates
// over the simulation's). A file there that names no template, or a
// template that does not parse, is an error naming the file; every such
// problem is in the error (Check).
func New(simDir string, layers ...string) (*Renderer, error) {
	r, problems := Check(simDir, layers...)
	if len(problems) > 0 {
		return nil, errors.Join(problems...)
	}
	return r, nil
}

// Check is New going on past the problems of simDir's overrides: it
// returns each of them, naming its file, and a renderer serving every
// override that parsed and the default of a template whose override did
// not, so that a caller can go on to check what renders with it (validate
// lists a simulation's problems in one pass: a stray file does not hide a
// typo in a template). The renderer is nil only when the defaults
// themselves do not load.
func Check(simDir string, layers ...string) (*Renderer, []error) {
	r := &Renderer{templates: map[string]*template.Template{}, sources: map[string]string{},
		digests: map[string]string{}, sizes: map[string]*atomic.Int64{}, halted: map[string]*atomic.Pointer[TemplateError]{}}
	names, err := fs.Glob(defaults, "*.md")
	if err != nil {
		return nil, []error{err}
	}
	for _, name := range names {
		text, err := defaults.ReadFile(name)
		if err != nil {
			return nil, []error{err}
		}
		if err := r.parse(name, defaultSource, string(text)); err != nil {
			return nil, []error{err}
		}
	}
	addedMu.RLock()
	for name, text := range added {
		if err := r.parse(name, defaultSource, string(text)); err != nil {
			addedMu.RUnlock()
			return nil, []error{err}
		}
	}
	addedMu.RUnlock()
	var problems []error
	if simDir != "" {
		problems = r.overrideFolder(simDir, filepath.Join(simDir, OverrideDir), false, true)
	}
	for _, dir := range layers {
		problems = append(problems, r.overrideFolder(dir, dir, true, false)...)
	}
	return r, problems
}

// overrideFolder parses each file of dir (read inside root) over the
// template of its name, recording it among the overrides when record is
// set (the simulation's own). A missing dir overrides nothing, unless must
// is set (a folder of templates asked for by name).
func (r *Renderer) overrideFolder(root, dir string, must, record bool) []error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) && !must {
		return nil
	}
	if err != nil {
		return []error{fmt.Errorf("prompt overrides: %w", err)}
	}
	var problems []error
	for _, e := range entries {
		name, path := e.Name(), filepath.Join(dir, e.Name())
		if strings.HasPrefix(name, ".") {
			continue
		}
		if _, known := r.templates[name]; !known || e.IsDir() {
			problems = append(problems, fmt.Errorf("%s: not a prompt template; an override must have the name of one of: %s",
				path, strings.Join(r.Names(), ", ")))
			continue
		}
		if record {
			r.overrides = append(r.overrides, Override{Template: name, Path: path})
		}
		if err := r.override(root, name, path); err != nil {
			problems = append(problems, err)
		}
	}
	return problems
}

// override reads the file at path (inside root) and parses it as template
// name; on a problem, the template stays as it was.
func (r *Renderer) override(root, name, path string) error {
	text, err := world.ReadFile(root, path)
	if errors.Is(err, world.ErrFile) {
		return fmt.Errorf("prompt override %s: not read: %w", path, err)
	}
	if err != nil {
		return fmt.Errorf("prompt override: %w", err)
	}
	return r.parse(name, path, string(text))
}

// Overrides lists the files of the simulation's prompts/ folder that name a
// template, in name order, whether or not they parsed.
func (r *Renderer) Overrides() []Override { return slices.Clone(r.overrides) }

// DefaultText is the text of the default template name, as compiled into
// game master, for an author to start an override from.
func DefaultText(name string) ([]byte, error) {
	text, err := defaults.ReadFile(name)
	if err != nil {
		addedMu.RLock()
		defer addedMu.RUnlock()
		if text, ok := added[name]; ok {
			return text, nil
		}
		return nil, fmt.Errorf("no default prompt template %q", name)
	}
	return text, nil
}

func (r *Renderer) parse(name, source, text string) error {
	t, err := template.New(name).Option("missingkey=error").Funcs(funcs).Parse(text)
	if err != nil {
		err = unclosedError(name, text, err)
	} else {
		err = bounded(t, source, text)
	}
	if err != nil {
		return &TemplateError{Name: name, Source: source, Err: err}
	}
	guard(t)
	r.templates[name] = t
	r.sources[name] = source
	if r.sizes[name] == nil {
		r.sizes[name] = new(atomic.Int64)
		r.halted[name] = new(atomic.Pointer[TemplateError])
	}
	sum := sha256.Sum256([]byte(text))
	r.digests[name] = hex.EncodeToString(sum[:])
	return nil
}

// Render executes template name on data and returns the text, trimmed of
// leading and trailing white space. A key missing from a map, a field missing
// from a struct, or any other execution error is a *TemplateError naming the
// template, its source and the key. A rendering is bounded by
// MaxRenderedSize, MaxSteps and MaxRenderTime (guard.go); a template stopped
// by the last two fails every later rendering at once.
func (r *Renderer) Render(name string, data any) (string, error) {
	t, ok := r.templates[name]
	if !ok {
		return "", fmt.Errorf("unknown prompt template %q; known: %s", name, strings.Join(r.Names(), ", "))
	}
	if te := r.halted[name].Load(); te != nil {
		return "", te
	}
	b := limitedBuffer{limit: MaxRenderedSize, start: time.Now()}
	size := r.sizes[name]
	b.text.Grow(int(size.Load()) + 256)
	if err := t.Execute(&b, data); err != nil {
		te := &TemplateError{Name: name, Source: r.sources[name], Err: err}
		if errors.Is(err, ErrTooManySteps) || errors.Is(err, ErrTooSlow) {
			r.halted[name].Store(te)
		}
		return "", te
	}
	size.Store(int64(b.text.Len()))
	return strings.TrimSpace(b.text.String()), nil
}

// Names lists the template names, sorted.
func (r *Renderer) Names() []string { return slices.Sorted(maps.Keys(r.templates)) }

// Digest is the hex SHA-256 of the text of template name as it is served
// (the override's when overridden), "" for no such template: a run's
// manifest records it so two runs can tell which templates changed.
func (r *Renderer) Digest(name string) string { return r.digests[name] }

// Source tells where template name came from: the path of the simulation's
// override file, "default" for the embedded default, or "" for no such
// template.
func (r *Renderer) Source(name string) string { return r.sources[name] }
