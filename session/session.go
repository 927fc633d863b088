// Package session opens a simulation folder for the commands: it loads and
// checks the authored files and prompts, builds the simulation's kind from
// the registry of kinds, takes the per-simulation lock, opens state.db,
// builds the model client, and hands back what the commands need: run
// ticks, play a turn, the state at a tick, status, export, story, reset.
//
// It holds every kind through one interface, Kind, and knows none: each
// kind's package registers itself (Register) from its init, as database/sql
// drivers do, and a command imports the kinds it plays for that effect.
// Calls go cmd/arbiter -> session -> the kind -> runner -> llm, prompts,
// store, world.
package session

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/arbiter-sim/arbiter/internal/filelock"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// Settings are what the commands' configuration decides for a session.
type Settings struct {
	// LLM gives the model client's configuration; nil for commands that
	// make no calls. Open calls it after the simulation's files check out.
	// With no endpoint configured it returns the configuration without
	// BaseURL and the
	// error saying how to configure one, which a replaying Cassette does
	// without.
	LLM func() (ClientConfig, error)
	// Cassette records the session's model calls or answers them from a
	// recording (OpenCassette); nil: calls go to the endpoint.
	Cassette *llm.Cassette
	// Command is the command the session is opened for (run, play, chat,
	// arena): Open refuses a kind that it does not play, saying how the
	// kind is played. Empty: any kind.
	Command string
	// Plays lists the kinds a caller plays; Open refuses another kind in
	// the same way. Empty: any kind.
	Plays []string
	// Depth is how many past exchanges of an entity a call sends back
	// (llm.depth), for commands that show requests without a client.
	Depth int
	// Sections are the kinds' own sections of the configuration, read, by
	// key (Section.Key): a kind reads its own with SectionOf.
	Sections map[string]SectionConfig
	// Model is the model of a phase without its own (llm.model).
	Model string
	// Override replaces the model settings of every phase (Params).
	Override PhaseOverride
	// Context is the model's context window in tokens (0: unknown): the
	// calls of a first tick must fit it.
	Context int
	// MaxOutputTokens is the most tokens a call may ask the model to write
	// (llm.max_output_tokens; 0: the kind's default).
	MaxOutputTokens int
	// Lockstep plays the parts of a tick together rather than each as
	// soon as what it depends on allows (a kind that plays them out of
	// order), for comparison: the ticks are the same either way.
	Lockstep bool
	// Batch sends every phase's calls as one Batch API job per tick (run
	// --batch); a kind that cannot (Batcher) refuses it.
	Batch bool
	// BatchPhases are the phases whose calls go as one Batch API job
	// (<phase>.mode: batch in the kind's section), the others live.
	BatchPhases []string
	// Templates are folders of prompt templates laid over the
	// simulation's own (prompts/), in order: an eval variant's, or `prompts
	// try --templates`. Each file replaces the template of its name.
	Templates []string
	// SimSettings, when set, is a JSON merge patch laid over the
	// simulation's settings (simulation.yaml's settings:) before its kind
	// reads them: an eval variant's answer lengths, say.
	SimSettings map[string]any
	// Inspect says the session is opened only to read what runs stored
	// (export, status, story, report, usage, diff-runs): the kind may skip
	// the checks that only a command rendering or sending its calls needs
	// (building every request of the first tick), work that grows with the
	// world. Validate and the other commands check everything.
	Inspect bool
	// People are the seats people take at the terminal (arbiter play) over
	// their configured seats; a model client is built for a game only when
	// another seat is a model.
	People  []string
	Run     Limits
	Logger  *slog.Logger
	OnEvent func(Event)
	OnPhase func(PhaseProgress)
	OnTick  func(TickReport)
}

// InputError is a problem with what a person wrote: a simulation file, a
// prompt template, a flag value. The CLI exits with its usage code.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

func inputErrorf(format string, args ...any) error {
	return &InputError{Err: fmt.Errorf(format, args...)}
}

// ErrInUse is returned by Open when another arbiter process holds the
// simulation.
var ErrInUse = errors.New("in use by another arbiter process (a run or a chat); wait for it to end")

// Session is one open simulation.
type Session struct {
	Dir  string
	Sim  *world.Simulation
	Kind Kind

	settings Settings
	prompts  *prompts.Renderer
	store    *store.Store // nil when opened read-only before any run
	client   *llm.Client
	runner   *runner.Runner
	unlock   func()
	created  bool   // state.db was created by this session
	saved    *Saved // a game saved by an earlier version, not imported yet (read-only)
	// called is the state the last call made outside a run was made
	// from (try.go).
	called struct {
		sync.Mutex
		tick  int
		state any
	}
}

// Load reads and checks the simulation in dir: its files, its prompt
// templates and what its kind adds. Nothing is opened or written. Every
// problem is an *InputError naming the file.
func Load(dir string, set Settings) (*Session, error) {
	sim, err := readers().Load(dir)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	if set.Logger != nil {
		// Once per command, on stderr at the default verbosity: an author
		// who wrote a folder the kind does not read should hear it is unused.
		for _, w := range sim.Warnings {
			set.Logger.Warn(w.Error())
		}
	}
	if set.SimSettings != nil {
		merged, _ := mergePatch(map[string]any(sim.Settings), map[string]any(set.SimSettings)).(map[string]any)
		sim.Settings = merged
	}
	pr, err := prompts.New(dir, set.Templates...)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return load(dir, set, sim, pr)
}

// load builds the kind of sim, loaded from dir, with the prompt templates
// of pr.
func load(dir string, set Settings, sim *world.Simulation, pr *prompts.Renderer) (*Session, error) {
	o, ok := opener(sim.Kind)
	if !ok {
		return nil, unknownKind(dir, sim.Kind)
	}
	if set.Batch && !isBatcher(o.Kind) {
		return nil, &InputError{Err: fmt.Errorf("%s: a %s simulation makes no calls through the Batch API (batch mode is for the calls of %s)", dir, sim.Kind, batching())}
	}
	k, err := o.Open(sim, pr, set)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return &Session{Dir: dir, Sim: sim, Kind: k, settings: set, prompts: pr}, nil
}

// Validation is what Validate finds in a simulation.
type Validation struct {
	Sim *world.Simulation // nil when it does not load
	// Problems stop the simulation from running; Warnings do not.
	Problems, Warnings []error
	// Overrides are the files of its prompts/ folder that replace a
	// default template, whether or not they parse.
	Overrides []Override
}

// Override is a file of a simulation's prompts/ folder that replaces a
// default template.
type Override = prompts.Override

// Validate lists every problem of the simulation in dir in one pass: its
// files, its prompt templates (a stray file in prompts/ hides none of the
// rest: the kind renders its first calls with every template that parses),
// and what its kind adds (its settings, what its first calls render, a
// saved game not imported yet); every warning: the folders its
// kind does not read, the overrides of templates it does not use, the
// kind's own (Warner), which stop nothing; and the templates its prompts/
// folder overrides. Nothing is written.
func Validate(dir string, set Settings) Validation {
	set.Logger = nil // the warnings are returned, not logged
	files, warnings := readers().Lint(dir)
	pr, templates := prompts.Check(dir)
	v := Validation{Problems: append(files, templates...), Warnings: warnings}
	if pr == nil || len(files) > 0 {
		return v // the kind is built from its files and templates
	}
	v.Overrides = pr.Overrides()
	sim, err := readers().Load(dir)
	if err != nil {
		v.Problems = append(v.Problems, inputProblems(err)...)
		return v
	}
	v.Warnings = append(v.Warnings, unusedOverrides(sim.Kind, v.Overrides)...)
	s, err := load(dir, set, sim, pr)
	if err != nil {
		v.Problems = append(v.Problems, inputProblems(err)...)
		return v
	}
	v.Sim = s.Sim
	if len(v.Problems) > 0 {
		return v
	}
	if _, err := s.savedGame(); err != nil {
		v.Problems = append(v.Problems, err)
		return v
	}
	if w, ok := s.Kind.(Warner); ok {
		v.Warnings = append(v.Warnings, w.Warnings()...)
	}
	return v
}

// inputProblems are the problems err lists: those of a world.Problems or
// of a joined error, one each; else err.
func inputProblems(err error) []error {
	var ie *InputError
	if errors.As(err, &ie) {
		err = ie.Err
	}
	if ps, ok := errors.AsType[world.Problems](err); ok {
		return ps
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// Warner is a Kind with warnings of its own about a simulation that
// validates (a location that may need several calls of a phase):
// validate lists them after the files' own.
type Warner interface {
	Warnings() []error
}

// Access says what Open may do.
type Access int

const (
	// ReadOnly opens state.db when it exists and creates nothing.
	ReadOnly Access = iota
	// ReadWrite takes the simulation's lock, opens or creates state.db,
	// builds the model client when Settings.LLM is set, and imports a
	// game an earlier version saved in a file of its own (Importer).
	ReadWrite
)

// Open loads the simulation in dir and opens its run state. Close it.
func Open(ctx context.Context, dir string, set Settings, access Access) (_ *Session, err error) {
	s, err := Load(dir, set)
	if err != nil {
		return nil, err
	}
	if err := s.plays(set.Command); err != nil {
		return nil, err
	}
	if len(set.Plays) > 0 && !slices.Contains(set.Plays, s.Sim.Kind) {
		return nil, inputErrorf("%s is a %s simulation: %s", dir, s.Sim.Kind, how(dir, s.Kind))
	}
	// Opening is quick local I/O; it finishes even when ctx is already done,
	// so an interrupted command still says where the simulation stands.
	ctx = context.WithoutCancel(ctx)
	defer func() {
		if err != nil {
			s.Close()
		}
	}()
	if access == ReadOnly {
		// A read never writes: no schema into an empty state.db.
		st, err := store.OpenReadOnly(ctx, StatePath(dir))
		switch {
		case errors.Is(err, store.ErrNoRunState):
		case err != nil:
			return nil, err
		default:
			s.store = st
		}
		if s.lastTick(ctx) == 0 {
			if s.saved, err = s.savedGame(); err != nil {
				return nil, &InputError{Err: err}
			}
		}
		return s, s.openRunner(ctx)
	}

	unlock, err := filelock.TryLock(dir)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("%s is %w", dir, ErrInUse)
	}
	if err != nil {
		return nil, err
	}
	s.unlock = unlock
	_, statErr := os.Stat(StatePath(dir))
	s.created = errors.Is(statErr, fs.ErrNotExist)
	if s.store, err = store.Open(ctx, StatePath(dir)); err != nil {
		return nil, err
	}
	if set.LLM != nil && s.needsModel() {
		e, err := set.LLM()
		if err != nil && !(e.BaseURL == "" && set.Cassette.ReplayOnly()) {
			return nil, err
		}
		e.Logger, e.Cassette = set.Logger, set.Cassette
		if s.client, err = llm.New(e); err != nil {
			return nil, &InputError{Err: err}
		}
		s.store.SetScrub(s.client.Secrets().Scrub) // no credential reaches state.db
		s.Kind.(ModelUser).UseClient(s.client)
	}
	if err := s.openRunner(ctx); err != nil {
		return nil, err
	}
	if err := s.importSaved(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// needsModel reports whether the session's kind makes model calls: a game
// only when a seat other than the person's is a model.
func (s *Session) needsModel() bool {
	m, ok := s.Kind.(ModelUser)
	return ok && m.NeedsModel(s.settings.People...)
}

func (s *Session) openRunner(ctx context.Context) error {
	if s.store == nil {
		return nil
	}
	set := s.settings
	s.runner = &runner.Runner{Stepper: s.Kind, Store: s.store, Client: s.client, Config: set.Run.runner(s.phaseModel), Logger: set.Logger,
		OnEvent: set.OnEvent, OnPhase: set.OnPhase, OnTick: set.OnTick}
	err := s.runner.Open(ctx)
	if errors.Is(err, runner.ErrStateMismatch) {
		return &InputError{Err: err}
	}
	return err
}

// Close releases what Open took. A state.db this session created and in
// which no tick committed is removed: nothing half-written stays. One that
// holds a Batch API job (submitted, or about to be) is kept, whatever
// stopped the run: it is what keeps the next run from paying for the job
// again.
func (s *Session) Close() error {
	var err error
	if s.store != nil {
		ctx := context.Background()
		last, lerr := s.store.LastTick(ctx)
		jobs, jerr := s.store.HasBatchJobs(ctx)
		err = s.store.Close()
		if s.created && lerr == nil && last == 0 && jerr == nil && !jobs {
			err = errors.Join(err, store.Reset(StatePath(s.Dir)))
		}
		s.store = nil
	}
	if s.unlock != nil {
		s.unlock()
		s.unlock = nil
	}
	return err
}

// StatePath is the run-state database of the simulation in dir.
func StatePath(dir string) string { return store.Path(dir) }

func (s *Session) lastTick(ctx context.Context) int {
	if s.store == nil {
		return 0
	}
	last, err := s.store.LastTick(ctx)
	if err != nil {
		return 0
	}
	return last
}

// LastTick is the last committed tick, 0 before the first.
func (s *Session) LastTick() int {
	if s.runner == nil {
		return 0
	}
	return s.runner.LastTick()
}

// State is the kind's state after the last committed tick (a saved game
// not imported yet, when opened read-only).
func (s *Session) State() any {
	switch {
	case s.runner != nil && (s.runner.LastTick() > 0 || s.saved == nil):
		return s.runner.State()
	case s.saved != nil:
		return s.saved.State
	}
	st, _ := s.Kind.Load(context.Background(), nil, 0)
	return st
}

// Run runs n ticks from the last committed one (ReadWrite).
func (s *Session) Run(ctx context.Context, n int) (*RunReport, error) {
	if s.runner == nil || s.unlock == nil {
		return nil, errors.New("session: Run needs a session opened ReadWrite")
	}
	return s.runner.Run(ctx, n)
}

// Turn plays one move of an interactive seat (ReadWrite).
func (s *Session) Turn(ctx context.Context, move any) (*TickReport, error) {
	if s.runner == nil || s.unlock == nil {
		return nil, errors.New("session: Turn needs a session opened ReadWrite")
	}
	return s.runner.Turn(ctx, move)
}

// StateAt returns the state after tick (0: the authored state), or after the
// last committed tick when latest is set. A tick not committed is an
// *InputError naming the committed range.
func (s *Session) StateAt(ctx context.Context, tick int, latest bool) (any, error) {
	last := s.LastTick()
	if latest {
		return s.State(), nil
	}
	if tick < 0 || tick > last {
		return nil, inputErrorf("--tick %d: no such tick (committed ticks: 0..%d; 0 is the authored state)", tick, last)
	}
	if tick == last {
		return s.State(), nil
	}
	st, err := s.Kind.Load(ctx, s.store, tick)
	return st, mismatchInput(err)
}

// mismatchInput makes a stored state that no longer fits the simulation's
// files an *InputError: the person edited them.
func mismatchInput(err error) error {
	if errors.Is(err, runner.ErrStateMismatch) {
		return &InputError{Err: err}
	}
	return err
}

// Export is the state after tick (or the latest) as `arbiter export`
// prints it.
func (s *Session) Export(ctx context.Context, tick int, latest bool) (any, error) {
	if e, ok := s.Kind.(TickExporter); ok && !latest && tick > 0 && tick < s.LastTick() {
		v, err := e.ExportAt(ctx, s.store, tick)
		return v, mismatchInput(err)
	}
	st, err := s.StateAt(ctx, tick, latest)
	if err != nil {
		return nil, err
	}
	return s.Kind.Export(ctx, s.store, st)
}

// Status is what `arbiter status` shows.
type Status struct {
	Simulation string            `json:"simulation"`
	Title      string            `json:"title"`
	Kind       string            `json:"kind"`
	Fields     []runner.Field    `json:"-"`
	KindStatus map[string]string `json:"status"`
	store.Summary
	// LastRun is the latest run that committed ticks, with its manifest;
	// nil before the first (or in a state.db written before runs were
	// stored).
	LastRun *store.Run `json:"last_run"`
	// Manifest is LastRun's manifest, read.
	Manifest *manifest.Manifest `json:"-"`
}

// Status sums up the run: the kind's part, then calls, tokens and why the
// last run stopped.
func (s *Session) Status(ctx context.Context) (*Status, error) {
	out := &Status{Simulation: s.Sim.ID, Title: s.Sim.Title, Kind: s.Sim.Kind, KindStatus: map[string]string{}}
	if s.store != nil {
		sum, err := s.store.Summary(ctx)
		if err != nil {
			return nil, err
		}
		out.Summary = sum
		if out.LastRun, out.Manifest, err = s.lastRun(ctx); err != nil {
			return nil, err
		}
		if out.Manifest != nil {
			out.ByEndpoint = configuredEndpoints(out.ByEndpoint, out.Manifest.Endpoints)
		}
	}
	fields, err := s.Kind.Status(ctx, s.store, s.State())
	if err != nil {
		return nil, err
	}
	out.Fields = fields
	for _, f := range fields {
		out.KindStatus[f.Key] = f.Value
	}
	return out, nil
}

// lastRun is the latest run that committed ticks and its manifest, read;
// nil before the first.
func (s *Session) lastRun(ctx context.Context) (*store.Run, *manifest.Manifest, error) {
	runs, err := s.store.Runs(ctx)
	if err != nil || len(runs) == 0 {
		return nil, nil, err
	}
	last := runs[len(runs)-1]
	var m manifest.Manifest
	if err := json.Unmarshal(last.Manifest, &m); err != nil {
		return nil, nil, fmt.Errorf("run %d: manifest: %w", last.N, err)
	}
	return &last, &m, nil
}

// configuredEndpoints is rows, the usage per endpoint stored, with a row
// of its own for every endpoint of names (the latest run's) that has none
// (it was sent nothing), sorted by name: every endpoint configured is
// shown, the one that answered nothing included.
func configuredEndpoints(rows []store.GroupUsage, names []string) []store.GroupUsage {
	out := slices.Clone(rows)
	for _, name := range names {
		if !slices.ContainsFunc(out, func(g store.GroupUsage) bool { return g.Key == name }) {
			out = append(out, store.GroupUsage{Key: name})
		}
	}
	slices.SortFunc(out, func(a, b store.GroupUsage) int { return cmp.Compare(a.Key, b.Key) })
	return out
}

// Reset deletes the run state of the simulation in dir (state.db, and a
// kind's game saved in a file not imported yet); the authored files are kept. It takes
// the simulation's lock and returns the paths it deleted. It needs only
// the folder: files that no longer load (an edit gone wrong, a newer
// version's keys) do not keep a person from starting over.
func Reset(dir string) ([]string, error) {
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, &InputError{Err: fmt.Errorf("%s: no such simulation folder", dir)}
	case !fi.IsDir():
		return nil, &InputError{Err: fmt.Errorf("%s: not a folder (reset takes a simulation's folder)", dir)}
	}
	kind := readers().Named(dir)
	unlock, err := filelock.TryLock(dir)
	if errors.Is(err, filelock.ErrLocked) {
		return nil, fmt.Errorf("%s is %w", dir, ErrInUse)
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	var deleted []string
	// Lstat: a state.db that is a link, even one pointing nowhere, is
	// deleted (the link, not its target), as the error refusing it says.
	if _, err := os.Lstat(StatePath(dir)); err == nil {
		if err := store.Reset(StatePath(dir)); err != nil {
			return deleted, err
		}
		deleted = append(deleted, StatePath(dir))
	}
	for _, name := range runFiles(kind) {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err == nil {
			if err := os.Remove(path); err != nil {
				return deleted, err
			}
			deleted = append(deleted, path)
		}
	}
	return deleted, nil
}
