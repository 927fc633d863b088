package phases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// StrategyFallback names seed 004's recovery of a failed call in events:
// the entity keeps its state.
const StrategyFallback = "fallback"

// Narrative is the narrative kind of simulation as the runner plays it: a
// tick is INTENTION (one call per character), RESOLUTION (one game master call
// per location), APPLY, then the runner's COMMIT. Its state is a
// *world.State.
type Narrative struct {
	Sim        *world.Simulation
	Prompts    *prompts.Renderer
	Model      Client // nil for commands that make no calls (status, export)
	Intention  llm.Params
	Resolution llm.Params
	Logger     *slog.Logger
	// Context is the model's context window in tokens (0: unknown); Lint
	// refuses a first-tick call whose prompt and max_tokens would not fit.
	Context int
	// MaxCharacters and MaxOutputTokens bound each resolution call (Env).
	MaxCharacters, MaxOutputTokens int
	// Lockstep plays every location's tick together: each location waits
	// for the whole world to resolve the tick before (round.go); for
	// comparison.
	Lockstep bool
	// Batch sends each phase's calls as one Batch API job (batch.go); its
	// ticks run in lockstep.
	Batch bool
	// BatchOnly, when set with Batch, are the phases sent as jobs; the
	// other phase's calls are made live (phases.<name>.mode).
	BatchOnly []string

	// answer holds the schemas of the simulation's answers (SetAnswer);
	// nil: the defaults.
	answer *answerSchemas

	ahead     ahead
	batchOnce sync.Once

	stateSize atomic.Int64 // bytes of the last state encoded, to size the next

	tried tried // what calls made outside a run read of each tick (try.go)
}

// KindName is the narrative's kind, as simulation.yaml names it (a file
// that names none is a narrative).
const KindName = "narrative"

// Kind is KindName.
func (n *Narrative) Kind() string { return KindName }

func (n *Narrative) env(p llm.Params) Env {
	return Env{Sim: n.Sim, Prompts: n.Prompts, Model: n.Model, Params: p, Logger: n.Logger,
		MaxCharacters: n.MaxCharacters, MaxOutputTokens: n.MaxOutputTokens, answer: n.answer}
}

// SetAnswer makes a the bounds and descriptions of the answers' text
// fields, in the templates' data and the schemas of every call; set it
// before the first. An Answer whose schemas cannot be built (ReadSettings
// returns none such) is an error.
func (n *Narrative) SetAnswer(a Answer) error {
	s, err := schemasOf(a)
	if err != nil {
		return fmt.Errorf("%s: settings.answer: %w", filepath.Join(n.Sim.Dir, "simulation.yaml"), err)
	}
	n.answer = s
	return nil
}

// Answer is the bounds and descriptions of the answers' text fields.
func (n *Narrative) Answer() Answer { return n.env(n.Intention).schemas().answer }

// Load returns the authored state for tick 0, else the state committed at
// tick with each character's latest memory entries, those the prompts show
// (prompts.MemoryDepth; the rest stay in the database). A state that no longer fits the
// simulation's files wraps runner.ErrStateMismatch.
func (n *Narrative) Load(ctx context.Context, st *store.Store, tick int) (any, error) {
	if tick == 0 {
		return n.Sim.InitialState(), nil
	}
	return n.load(ctx, st, tick, prompts.MemoryDepth)
}

// load reads the state committed at tick with each character's latest last
// memory entries (0: all), checked against the simulation's files.
func (n *Narrative) load(ctx context.Context, st *store.Store, tick, last int) (*world.State, error) {
	s, err := n.worldAt(ctx, st, tick)
	if err != nil {
		return nil, err
	}
	if last == 0 {
		for id, cs := range s.Characters {
			cs.Memory = cs.Memory[:0]
			s.Characters[id] = cs
		}
	}
	// Cloned before the memories are read, which the clone would copy
	// again: an export's are every entry of the run.
	out := s.Clone() // non-nil maps and memories even if the JSON had nulls
	if err := withMemories(ctx, st, out, last); err != nil {
		return nil, err
	}
	if err := out.Validate(n.Sim); err != nil {
		return nil, fmt.Errorf("%w: state of tick %d (edited since the run? `arbiter reset` starts over): %w", runner.ErrStateMismatch, tick, err)
	}
	return out, nil
}

// Step plays one narrative tick from s; a narrative takes no moves.
func (n *Narrative) Step(ctx context.Context, t *runner.Tick, s, in any) (any, error) {
	if in != nil {
		return nil, fmt.Errorf("a narrative simulation ticks on its own and takes no moves: %w", runner.ErrRefused)
	}
	st := s.(*world.State)
	rec := t.Record
	// Location by location (round.go) or as Batch API jobs (batch.go); the
	// runner sees the same.
	plan := n.plan(ctx, t, st)
	var next *world.State
	defer func() { plan.end(next) }()

	var outs []*Outcome[string]
	_, err := t.Phase(ctx, runner.Phase{Name: PhaseIntention, Calls: len(n.Sim.Characters), Strategy: StrategyFallback},
		func(ctx context.Context) ([]runner.Call, error) {
			o, err := plan.intentions(ctx)
			outs = o
			return plan.calls(callsOf(o)), err
		})
	if err != nil {
		return nil, err
	}
	for _, o := range outs {
		rec.Intentions = append(rec.Intentions, store.IntentionRecord{CharacterID: o.ID, Intention: o.Value, Fallback: o.Fallback})
	}

	// The game masters are asked once the tick before is stored: a tick
	// played while a slow commit writes then holds its intentions, not its
	// game masters' long answers besides (round.go, invariant 3).
	<-t.Before()
	var outputs []Outcome[MasterOutput]
	_, err = t.Phase(ctx, runner.Phase{Name: PhaseResolution, Calls: plan.resolutions(), Strategy: StrategyFallback, Final: true},
		func(ctx context.Context) ([]runner.Call, error) {
			o, err := plan.resolve(ctx)
			outputs = o
			return plan.calls(calls(o)), err
		})
	if err != nil {
		return nil, err
	}
	for _, o := range outputs {
		b, err := json.Marshal(o.Value)
		if err != nil {
			return nil, err
		}
		output := o.Call.Raw // most often what the model wrote: one copy of it held, not two
		if string(b) != output {
			output = string(b)
		}
		rec.Outputs = append(rec.Outputs, store.OutputRecord{LocationID: o.ID, Output: output, Fallback: o.Fallback})
	}

	t.Enter(runner.StateApply)
	var applyErrs, worldErrs []ApplyError
	for _, o := range outputs {
		applyErrs = append(applyErrs, o.Skipped...)
	}
	values := Values(outputs)
	outputs = nil // their calls are in the record: what is applied is their values
	next, worldErrs = Apply(n.Sim, st, values)
	applyErrs = append(applyErrs, worldErrs...)
	for _, ae := range applyErrs {
		// The reason says whether the update was skipped or fell back;
		// no prefix of its own, so it is not said twice.
		t.Log().Warn(ae.Error(), "phase", "apply",
			"tick", ae.Tick, "location", ae.LocationID, "character", ae.CharacterID, "reason", ae.Reason)
		rec.ApplyErrors = append(rec.ApplyErrors, store.ApplyError{LocationID: ae.LocationID, CharacterID: ae.CharacterID, Reason: ae.Reason})
	}
	return next, nil
}

// calls are the runner's view of a phase's outcomes: one per call, each
// part of an entity resolved in several.
func calls[T any](outs []Outcome[T]) []runner.Call {
	cs := make([]runner.Call, 0, len(outs))
	for i := range outs {
		cs = outs[i].appendCalls(cs)
	}
	return cs
}

// callsOf is calls of outcomes held by pointer.
func callsOf[T any](outs []*Outcome[T]) []runner.Call {
	cs := make([]runner.Call, 0, len(outs))
	for _, o := range outs {
		cs = o.appendCalls(cs)
	}
	return cs
}

// appendCalls appends the runner's view of o's calls to cs.
func (o *Outcome[T]) appendCalls(cs []runner.Call) []runner.Call {
	if o.Parts == nil {
		return append(cs, runner.Call{Result: &o.Call, Fallback: o.Fallback})
	}
	for i := range o.Parts {
		cs = o.Parts[i].appendCalls(cs)
	}
	return cs
}

// Encode stores the state without memories (so a tick's row stays the size
// of the world rather than growing with everything ever remembered) and the
// memory entries written at this tick as rows of their own.
func (n *Narrative) Encode(rec *store.TickRecord, _, s any) error {
	st, ok := s.(*world.State)
	if !ok || st == nil {
		return errors.New("narrative: no state to encode")
	}
	if st.Tick != rec.Tick {
		return fmt.Errorf("narrative: the state is of tick %d, not %d", st.Tick, rec.Tick)
	}
	ids := slices.Sorted(maps.Keys(st.Characters))
	for _, id := range ids {
		for _, m := range st.Characters[id].Memory {
			if m.Tick == rec.Tick {
				rec.Memories = append(rec.Memories, store.MemoryRecord{CharacterID: id, Entry: m.Entry})
			}
		}
	}
	b, err := encodeState(st, ids, int(n.stateSize.Load()))
	if err != nil {
		return fmt.Errorf("encode state: %w", err)
	}
	n.stateSize.Store(int64(len(b)))
	rec.State = b
	return nil
}

// encodeState is json.Marshal of st without its characters' memories (the
// store keeps those in their own table), ids its characters' ids sorted,
// written character by character into one buffer of about size bytes (the
// last tick's): one Marshal of the whole state grew its buffer by
// doubling and then copied it out, at the end of a tick, when the heap is
// at its fullest.
func encodeState(st *world.State, ids []string, size int) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, size+size/8+512))
	fmt.Fprintf(buf, `{"tick":%d,"characters":{`, st.Tick)
	for i, id := range ids {
		cs := st.Characters[id]
		cs.Memory = nil
		key, err := json.Marshal(id)
		if err != nil {
			return nil, err
		}
		val, err := json.Marshal(cs)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.Write(key)
		buf.WriteByte(':')
		buf.Write(val)
	}
	locs, err := json.Marshal(st.Locations)
	if err != nil {
		return nil, err
	}
	buf.WriteString(`},"locations":`)
	buf.Write(locs)
	buf.WriteByte('}')
	b := buf.Bytes()
	if cap(b)-len(b) > len(b)/4 {
		// Grown by doubling (the first tick's, with no size to go by):
		// up to half of it would be held empty until the commit ends.
		b = bytes.Clone(b)
	}
	return b, nil
}

// Call builds the request that phase (intention or resolution) sends for
// entity (a character or a location) at the tick after st. For resolution,
// the characters' current external_intent stands in for that tick's
// intentions. An unknown phase or entity is an error naming what exists.
func (n *Narrative) Call(st *world.State, phase, entity string) (llm.Request, error) {
	return n.request(prompts.NewSnapshot(n.Sim, st), phase, entity)
}

// request is Call on a snapshot placed once, for callers that build many.
func (n *Narrative) request(w *prompts.Snapshot, phase, entity string) (llm.Request, error) {
	switch phase {
	case PhaseIntention:
		if n.Sim.Character(entity) == nil {
			return llm.Request{}, fmt.Errorf("entity %q: no such character in %s (characters: %s)", entity, n.Sim.ID, ids(n.Sim.Characters, func(c *world.Character) string { return c.ID }))
		}
		return IntentionRequest(n.env(n.Intention), w, entity)
	case PhaseResolution:
		loc := n.Sim.Location(entity)
		if loc == nil {
			return llm.Request{}, fmt.Errorf("entity %q: no such location in %s (locations: %s)", entity, n.Sim.ID, ids(n.Sim.Locations, func(l *world.Location) string { return l.ID }))
		}
		// No intentions: each character's external_intent stands in.
		return ResolutionRequest(n.env(n.Resolution), w, loc, nil)
	default:
		return llm.Request{}, fmt.Errorf("phase %q: must be %s or %s", phase, PhaseIntention, PhaseResolution)
	}
}

// Lint builds every request of the first tick, so a template with a missing
// key, a broken override or a schema that cannot be built shows before a
// run spends tokens. It stops at the first problem of each phase.
func (n *Narrative) Lint() []error {
	w := prompts.NewSnapshot(n.Sim, n.Sim.InitialState())
	var errs []error
	var tooLong []error
	for _, c := range n.Sim.Characters {
		req, err := n.request(w, PhaseIntention, c.ID)
		if err != nil {
			errs = append(errs, err)
			break
		}
		tooLong = append(tooLong, n.fits(req)...)
	}
	for _, l := range n.Sim.Locations {
		req, err := n.request(w, PhaseResolution, l.ID)
		if err != nil {
			errs = append(errs, err)
			break
		}
		tooLong = append(tooLong, n.fits(req)...)
	}
	errs = append(errs, tooLong...)
	if _, err := perCall(n.Answer(), n.MaxCharacters, n.MaxOutputTokens); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// Warnings are what validate says of a world that runs: an overridden
// template stating a length its answer's schema does not allow, and a
// location where more characters can gather than one resolution call
// resolves, which is then resolved in several.
func (n *Narrative) Warnings() []error {
	warnings := n.lengthWarnings()
	if err := n.crowdWarning(n.env(n.Resolution).perCall()); err != nil {
		warnings = append(warnings, err)
	}
	return warnings
}

func ids[T any](items []T, id func(T) string) string {
	out := ""
	for i, it := range items {
		if i > 0 {
			out += ", "
		}
		out += id(it)
	}
	return out
}

// Export is the state as `arbiter export` prints it: with every memory
// entry written up to its tick, read from st (a loaded or ticked state keeps
// only the latest).
func (n *Narrative) Export(ctx context.Context, st *store.Store, state any) (any, error) {
	s := state.(*world.State)
	out := s.Clone()
	if st == nil || s.Tick == 0 {
		return out, nil
	}
	for id, cs := range out.Characters {
		cs.Memory = cs.Memory[:0]
		out.Characters[id] = cs
	}
	if err := withMemories(ctx, st, out, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// ExportAt is Export of the state committed at tick (tick > 0), read with
// every memory entry once: loading it first would read each character's
// latest entries, a query a character, only to drop them.
func (n *Narrative) ExportAt(ctx context.Context, st *store.Store, tick int) (any, error) {
	return n.load(ctx, st, tick, 0)
}

// withMemories appends to s the memory entries stored up to its tick, each
// character's latest last (0: all). An export's are hundreds of thousands:
// each character's memory is made a part, of the size it will have, of
// one array, and each entry looks its character up once.
func withMemories(ctx context.Context, st *store.Store, s *world.State, last int) error {
	var mems []store.MemoryRecord
	var err error
	if last > 0 {
		mems, err = st.LatestMemories(ctx, s.Tick, last, slices.Sorted(maps.Keys(s.Characters)))
	} else {
		mems, err = st.Memories(ctx, s.Tick)
	}
	if err != nil {
		return err
	}
	// The characters with entries, in order of their first; each entry's.
	slot := make(map[string]int, len(s.Characters))
	var ids []string
	var count []int
	of := make([]int, len(mems))
	for i, m := range mems {
		k, ok := slot[m.CharacterID]
		if !ok {
			k = len(ids)
			slot[m.CharacterID] = k
			ids, count = append(ids, m.CharacterID), append(count, 0)
		}
		of[i] = k
		count[k]++
	}
	parts := make([][]world.MemoryEntry, len(ids))
	total := len(mems)
	for _, id := range ids {
		total += len(s.Characters[id].Memory)
	}
	all := make([]world.MemoryEntry, total)
	for k, id := range ids {
		held := s.Characters[id].Memory
		size := len(held) + count[k]
		parts[k] = append(all[:0:size], held...)
		all = all[size:]
	}
	for i, m := range mems {
		parts[of[i]] = append(parts[of[i]], world.MemoryEntry{Tick: m.Tick, Entry: m.Entry})
	}
	for k, id := range ids {
		if cs, ok := s.Characters[id]; ok {
			cs.Memory = parts[k]
			s.Characters[id] = cs
		}
	}
	return nil
}

// Status is the narrative's part of `arbiter status`: the size of the world
// and the updates the apply step skipped so far.
func (n *Narrative) Status(ctx context.Context, st *store.Store, _ any) ([]runner.Field, error) {
	fields := []runner.Field{{Key: "world", Value: fmt.Sprintf("%d characters, %d locations", len(n.Sim.Characters), len(n.Sim.Locations))}}
	if st == nil {
		return fields, nil
	}
	sum, err := st.Summary(ctx)
	if err != nil {
		return nil, err
	}
	return append(fields, runner.Field{Key: "apply errors", Value: fmt.Sprint(sum.ApplyErrors)}), nil
}

// bytesPerToken is a cautious estimate for English prompts and JSON
// schemas (tokenizers average about 4).
const bytesPerToken = 3

// fits checks that req's prompt, as estimated, and its max_tokens fit the
// configured context window; it returns the problem, or nil.
func (n *Narrative) fits(req llm.Request) []error {
	if n.Context <= 0 {
		return nil
	}
	if err := fitsWindow(req, llm.Window{Tokens: n.Context, Source: "llm.context_tokens"}); err != nil {
		return []error{err}
	}
	return nil
}

// fitsWindow checks that req's prompt, as estimated, and its max_tokens fit
// w; it returns the problem, or nil.
func fitsWindow(req llm.Request, w llm.Window) error {
	prompt := (len(req.System) + len(req.User) + len(req.Schema) + bytesPerToken - 1) / bytesPerToken
	if w.Tokens <= 0 || prompt+req.Params.MaxTokens <= w.Tokens {
		return nil
	}
	limit := fmt.Sprintf("the model's context of %d (%s)", w.Tokens, w.Source)
	if w.Source == "llm.context_tokens" {
		limit = fmt.Sprintf("llm.context_tokens %d", w.Tokens)
	}
	return fmt.Errorf("%s call of %s at tick 1: its prompt is about %d tokens (estimated at %d bytes a token, the server offering no tokenizer: a model with a small vocabulary spends more) and it may answer %d (max_tokens), more than %s; shorten the prompt templates or the world's texts, lower max_tokens, or use a model with a larger context (later ticks add llm.depth past exchanges)",
		req.Phase, req.EntityKey, prompt, bytesPerToken, req.Params.MaxTokens, limit)
}

// FitContext checks every call of the first tick against the context of
// its phase's model as window gives it (its server's, when the
// configuration sets none: Lint checks llm.context_tokens); a call that
// would not fit is a warning, the estimate being an estimate. A window of
// 0 tokens is unknown, and checks nothing.
func (n *Narrative) FitContext(window func(phase, model string) llm.Window) []error {
	if n.Context > 0 {
		return nil
	}
	w := prompts.NewSnapshot(n.Sim, n.Sim.InitialState())
	var out []error
	check := func(phase, entity string) {
		req, err := n.request(w, phase, entity)
		if err != nil {
			return // Lint reports it
		}
		if err := fitsWindow(req, window(phase, req.Params.Model)); err != nil {
			out = append(out, err)
		}
	}
	for _, c := range n.Sim.Characters {
		check(PhaseIntention, c.ID)
	}
	for _, l := range n.Sim.Locations {
		check(PhaseResolution, l.ID)
	}
	return out
}
