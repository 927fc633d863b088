package session

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// Kind is one kind of simulation, as the session and the commands see it:
// what every kind must do. A kind is one package that implements it and
// registers an Opener for it (Register); the session, the report and the
// CLI know nothing else of it. What only some kinds do is an optional
// interface the session finds by type assertion, as database/sql finds a
// driver's (driver.Pinger): ModelUser, Requester, Teller, Reporter,
// Tabler, Chatter, Importer, Batcher, TickExporter, Caller, Warner, Helper
// and arena.Game. Which commands play a kind follows from them (Plays).
type Kind interface {
	// runner.Stepper is the kind's state and its tick: Kind, Load, Step,
	// Encode.
	runner.Stepper
	// Export is state as `arbiter export` prints it (JSON); st holds what
	// the state in memory leaves out (older memories, say).
	Export(ctx context.Context, st *store.Store, state any) (any, error)
	// Status is the kind's part of `arbiter status`; st is nil before the
	// first commit.
	Status(ctx context.Context, st *store.Store, state any) ([]runner.Field, error)
	// Manifest is what the kind runs with: the model of each phase, its
	// prompt templates and schemas, its seed.
	Manifest() ManifestPart
}

// ModelUser is a kind that makes model calls. A kind without it makes
// none, and the session builds no model client for it.
type ModelUser interface {
	// NeedsModel reports whether the kind makes model calls when people
	// play these seats at the terminal (a game of bots and people makes
	// none).
	NeedsModel(people ...string) bool
	// UseClient hands the kind the model client its calls go through; it
	// is called once, when the session has one.
	UseClient(c *llm.Client)
}

// Requester is a kind whose calls `arbiter prompts render` shows.
type Requester interface {
	// Request is the call that q asks for, as a run builds it. What the
	// kind cannot render ahead is an *InputError saying why.
	Request(ctx context.Context, q RequestQuery) (*Request, error)
}

// Teller is a kind that tells its run tick by tick (`arbiter story`).
type Teller interface {
	// CheckStory refuses a story query the kind cannot tell (a filter it
	// does not have) with an *InputError; Story then tells ticks from..to
	// of a committed run into out (its Ticks or its Turns).
	CheckStory(dir string, q StoryQuery) error
	Story(ctx context.Context, st *store.Store, from, to int, q StoryQuery, out *Story) error
}

// Reporter is a kind with a part of its own on `arbiter report`'s page:
// a timeline, turns and their boards, an outline. A kind without it has
// the page every run has (figures, calls, phases).
type Reporter interface {
	// Report is read from the committed run of s (at least one tick).
	Report(ctx context.Context, s *Session) (*ReportPart, error)
}

// Tabler is a kind people play at the terminal (`arbiter play`).
type Tabler interface {
	// Table is its seats and turns; color: the terminal shows colour.
	Table(color bool) *Table
}

// Helper is a kind with lines of its own in the commands' --help: what
// a command does with a simulation of the kind, with an example where
// one helps (how a person plays a turn, for "play"), so that the help
// of the shared commands names no kind. It is asked of the value
// Opener.Kind holds (a nil pointer, often): it reads nothing of the kind.
type Helper interface {
	// Help is the kind's lines for command ("arbiter" for the root
	// command, "play", "report", ...), each indented by two spaces and
	// ending in a newline; "" when it has none.
	Help(command string) string
}

// Chatter is a kind a person plays in conversation with the model
// (`arbiter chat`); `arbiter run` cannot play it, since every turn is a
// person's message.
type Chatter interface {
	Chat() Chat
}

// Importer is a kind whose games an earlier version of arbiter saved in
// a file of their own beside the authored files.
type Importer interface {
	// Saved is the game saved in dir, not in state.db yet; nil when
	// there is none.
	Saved(dir string) (*Saved, error)
	// RunFiles are the files beside simulation.yaml that hold such a
	// game: Reset deletes them. It is asked of the value Opener.Kind
	// holds, as Reset needs no more of a simulation than its folder.
	RunFiles() []string
}

// Batcher is a kind that can send its calls as Batch API jobs
// (Settings.Batch); a session of another kind refuses that setting. It is
// asked of the value Opener.Kind holds.
type Batcher interface {
	// BatchPhases are the phases whose calls can go as jobs.
	BatchPhases() []string
}

// TickExporter is a kind that exports a committed tick straight from
// state.db, faster than Load followed by Export (what Export adds from
// state.db is read once, not what Load adds first and Export drops).
type TickExporter interface {
	// ExportAt is Export(Load(tick)): the same value, the same errors.
	ExportAt(ctx context.Context, st *store.Store, tick int) (any, error)
}

// Saved is a kind's game saved in a file by an earlier version of arbiter.
type Saved struct {
	Path  string // the file, removed by Reset, renamed once imported
	State any    // the state it holds, shown until it is imported
	Move  any    // the move that imports it as the first turn
}

// ManifestPart is what a kind adds to a run's manifest.
type ManifestPart struct {
	Models    []manifest.PhaseModel // the model of each phase that calls one
	Templates []string              // the prompt templates it renders
	Schemas   []schemas.Named       // the schemas it sends
	Seed      *uint64               // a game's seed
}

// RequestQuery asks a kind for the request of one model call, as `arbiter
// prompts render` shows it.
type RequestQuery struct {
	Phase, Entity string
	// Tick is the committed tick the state is of; the call belongs to the
	// next one.
	Tick  int
	State any
	// Store holds the entities' past exchanges (nil before the first
	// commit); Depth is how many a call sends back.
	Store *store.Store
	Depth int
}

// Opener builds a kind for a simulation whose simulation.yaml names it.
type Opener struct {
	// Kind is a value of the kind's type (a nil pointer will do), which
	// Open returns: the optional interfaces it implements say how the kind
	// is played before a simulation is opened (`arbiter play --help`, the
	// kinds an arena plays).
	Kind Kind
	// Reads lists the files and folders beside simulation.yaml that the
	// kind reads; the others are warned about.
	Reads world.Reads
	// Open builds the kind of sim with the session's settings, checking
	// what the kind adds to the authored files (every request of a first
	// tick, the settings of simulation.yaml). A problem is an error naming
	// the file; the session makes it an *InputError.
	Open func(sim *world.Simulation, pr *prompts.Renderer, set Settings) (Kind, error)
	// Schemas are the JSON Schemas of the kind's model outputs, for
	// `arbiter schemas generate|check` (nil: none).
	Schemas func() []schemas.Named
	// Tools are the kind's own commands, `arbiter <kind> <tool>`.
	Tools Tools
	// Section is the kind's own section of the configuration (nil: none).
	// Kinds may share one.
	Section *Section
	// Summary is what `arbiter validate` says a simulation that checks
	// out holds ("6 characters, 5 locations"); nil: the kind's name.
	Summary func(sim *world.Simulation) []string
	// Templates are the prompt templates the kind renders, by phase, as
	// its Manifest lists them: `arbiter prompts init` writes them out for
	// an author to start from, and validate warns of an override the kind
	// does not use. Nil: the kind has no templates.
	Templates []PhaseTemplates
}

// PhaseTemplates are the prompt templates of one phase of a kind's calls.
type PhaseTemplates struct {
	Phase     string
	Templates []string // file names, e.g. "phase1_intention_system.md"
	// Entity is whom a call of the phase is for, as `prompts render
	// --entity` names it ("a character"); "" when the phase has none.
	Entity string
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Opener{}
)

// Register makes the kind name known: a simulation.yaml naming it is opened
// by o. A kind calls it from an init function of its package, as
// database/sql drivers do; a command imports the package for that effect.
// Registering a name twice, or without Open, panics.
func Register(name string, o Opener) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if o.Open == nil || o.Kind == nil {
		panic("session: Register of kind " + name + " without Open or Kind")
	}
	if _, dup := registry[name]; dup {
		panic("session: Register called twice for kind " + name)
	}
	for other, r := range registry {
		if o.Section != nil && r.Section != nil && r.Section != o.Section && r.Section.Key == o.Section.Key {
			panic("session: kinds " + name + " and " + other + " register two sections " + o.Section.Key)
		}
	}
	registry[name] = o
}

// Kinds lists the registered kinds: the default one (a simulation.yaml
// that names no kind is of it) first, then the others sorted.
func Kinds() []string { return readers().Names() }

func opener(name string) (Opener, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	o, ok := registry[name]
	return o, ok
}

// readers is what world.Load needs to know of the registered kinds.
func readers() world.Kinds {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := world.Kinds{}
	for name, o := range registry {
		out[name] = o.Reads
	}
	return out
}

// Schemas are the JSON Schemas of every registered kind's model outputs,
// for `arbiter schemas generate|check`, in kind order.
func Schemas() []schemas.Named {
	var out []schemas.Named
	for _, name := range Kinds() {
		if o, _ := opener(name); o.Schemas != nil {
			out = append(out, o.Schemas()...)
		}
	}
	return out
}

// Help is what every registered kind adds to command's --help
// (Helper), in kind order, each kind's lines headed by its name; "" when
// none adds any.
func Help(command string) string {
	var b strings.Builder
	for _, name := range Kinds() {
		o, _ := opener(name)
		if h, ok := o.Kind.(Helper); ok {
			if lines := h.Help(command); lines != "" {
				fmt.Fprintf(&b, "\n%s:\n%s", name, lines)
			}
		}
	}
	return b.String()
}

// AllPhases are the phases of the registered kinds' calls
// (Opener.Templates), in kind order, each once: what `prompts render
// --phase` takes.
func AllPhases() []string {
	var out []string
	for _, name := range Kinds() {
		o, _ := opener(name)
		for _, p := range o.Templates {
			if !slices.Contains(out, p.Phase) {
				out = append(out, p.Phase)
			}
		}
	}
	return out
}

// PhaseHelp is each registered kind's phases and whom a call of each is
// for, for `prompts render --help`: one line a kind, "  <kind>:
// <phase> (--entity <whom>), ...", in kind order.
func PhaseHelp() string {
	var b strings.Builder
	for _, name := range Kinds() {
		o, _ := opener(name)
		var phases []string
		for _, p := range o.Templates {
			if p.Entity == "" {
				phases = append(phases, p.Phase+" (no --entity)")
			} else {
				phases = append(phases, fmt.Sprintf("%s (--entity: %s)", p.Phase, p.Entity))
			}
		}
		if len(phases) > 0 {
			fmt.Fprintf(&b, "  %s: %s\n", name, strings.Join(phases, ", "))
		}
	}
	return b.String()
}

// Summary is what sim, a simulation that checks out, holds as its kind
// says it (Opener.Summary), or else the name of its kind.
func Summary(sim *world.Simulation) []string {
	if o, _ := opener(sim.Kind); o.Summary != nil {
		return o.Summary(sim)
	}
	return []string{sim.Kind}
}

// Plays lists the commands that play k, as its optional interfaces say:
// `arbiter chat` a Chatter, and nothing else (its every turn is a
// person's message); else `arbiter run`, `arbiter play` a Tabler's people,
// and `arbiter arena` an arena.Game.
func Plays(k Kind) []string {
	if _, ok := k.(Chatter); ok {
		return []string{"chat"}
	}
	out := []string{"run"}
	if _, ok := k.(Tabler); ok {
		out = append(out, "play")
	}
	if isArena(k) {
		out = append(out, "arena")
	}
	return out
}

// how tells how a person plays k, whose simulation is in dir, for a
// command that does not: "`arbiter run <dir>` runs its ticks".
func how(dir string, k Kind) string {
	commands := Plays(k)
	switch {
	case slices.Contains(commands, "chat"):
		return fmt.Sprintf("it is played in turns with a person: `arbiter chat %s`", dir)
	case slices.Contains(commands, "play"):
		return fmt.Sprintf("`arbiter run %s` plays its model and bot seats; `arbiter play %s` seats a person", dir, dir)
	}
	return fmt.Sprintf("`arbiter run %s` runs its ticks", dir)
}

// plays checks that command plays the session's kind ("" plays any).
func (s *Session) plays(command string) error {
	if command == "" || slices.Contains(Plays(s.Kind), command) {
		return nil
	}
	return inputErrorf("%s is a %s simulation: %s", s.Dir, s.Sim.Kind, how(s.Dir, s.Kind))
}

// Plays reports whether command plays the session's kind.
func (s *Session) Plays(command string) bool { return s.plays(command) == nil }

// batching are the registered kinds that send calls as Batch API jobs
// (Batcher), in kind order, or "none".
func batching() string {
	var out []string
	for _, name := range Kinds() {
		if o, _ := opener(name); isBatcher(o.Kind) {
			out = append(out, fmt.Sprintf("%s (%s)", name, strings.Join(o.Kind.(Batcher).BatchPhases(), ", ")))
		}
	}
	return orNone(out)
}

func isBatcher(k Kind) bool {
	_, ok := k.(Batcher)
	return ok
}

// runFiles are the files of kind's games saved beside simulation.yaml by
// an earlier version (Importer), none for a kind that saves none.
func runFiles(kind string) []string {
	o, _ := opener(kind)
	if i, ok := o.Kind.(Importer); ok {
		return i.RunFiles()
	}
	return nil
}

func unknownKind(dir, kind string) error {
	return inputErrorf("%s: kind %q cannot be played by this version of arbiter", filepath.Join(dir, "simulation.yaml"), kind)
}

// Table is how people play the session's kind at the terminal (Tabler);
// nil when they do not. color: the terminal shows colour.
func (s *Session) Table(color bool) *Table {
	if t, ok := s.Kind.(Tabler); ok {
		return t.Table(color)
	}
	return nil
}

// Chat is how a person plays the session's kind in conversation with the
// model (Chatter); nil when they do not.
func (s *Session) Chat() Chat {
	if c, ok := s.Kind.(Chatter); ok {
		return c.Chat()
	}
	return nil
}

// ReportPart is the kind's part of `arbiter report`'s page (Reporter): a
// kind without one has none, its run counted in ticks.
func (s *Session) ReportPart(ctx context.Context) (*ReportPart, error) {
	if r, ok := s.Kind.(Reporter); ok {
		return r.Report(ctx, s)
	}
	return &ReportPart{Unit: "tick"}, nil
}
