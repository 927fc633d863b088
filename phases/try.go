package phases

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
	"github.com/arbiter-sim/arbiter/world"
)

// A narrative's calls can be made one at a time outside a run (`prompts
// try`, `eval`): session.Caller.
var _ session.Caller = (*Narrative)(nil)

// tickInputs are what calls of one committed tick read from state.db, read
// once for the many calls an eval makes at that tick.
type tickInputs struct {
	once       sync.Once
	past       map[string][]store.HistoryRecord // each entity's past exchanges as of the tick before
	intentions map[string]string                // the tick's own intentions; nil when it is not committed
	err        error
}

// tried holds the tickInputs of each tick called so far, by tick, and
// the snapshot of each state calls were made from.
type tried struct {
	mu    sync.Mutex
	ticks map[int]*tickInputs
	snaps map[*world.State]*prompts.Snapshot
}

// snapshot is the snapshot of st, placed once for the many calls and
// answers of an eval made from it (st is read, never changed).
func (t *tried) snapshot(sim *world.Simulation, st *world.State) *prompts.Snapshot {
	t.mu.Lock()
	defer t.mu.Unlock()
	if w, ok := t.snaps[st]; ok {
		return w
	}
	if t.snaps == nil || len(t.snaps) > 64 {
		t.snaps = map[*world.State]*prompts.Snapshot{}
	}
	w := prompts.NewSnapshot(sim, st)
	t.snaps[st] = w
	return w
}

func (t *tried) at(tick int) *tickInputs {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ticks == nil {
		t.ticks = map[int]*tickInputs{}
	}
	in := t.ticks[tick]
	if in == nil {
		in = &tickInputs{}
		t.ticks[tick] = in
	}
	return in
}

// CallPhases: intention (a character) and resolution (a location).
func (n *Narrative) CallPhases() []string { return []string{PhaseIntention, PhaseResolution} }

// Entities are the characters (intention) or the locations (resolution),
// in the simulation's order: every location is resolved, empty ones too.
func (n *Narrative) Entities(phase string, _ any) ([]string, error) {
	switch phase {
	case PhaseIntention:
		return mapIDs(n.Sim.Characters, func(c *world.Character) string { return c.ID }), nil
	case PhaseResolution:
		return mapIDs(n.Sim.Locations, func(l *world.Location) string { return l.ID }), nil
	}
	return nil, &session.InputError{Err: fmt.Errorf("phase %q: must be %s or %s", phase, PhaseIntention, PhaseResolution)}
}

func mapIDs[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

// CallAt is the call of q's phase and entity at tick q.Tick+1, as the run
// made it: a resolution of a committed tick sees that tick's stored
// intentions (a character whose intention call failed, its external
// intent, as the run fell back), one of the next tick the characters'
// external intents, as `prompts render` shows it.
func (n *Narrative) CallAt(ctx context.Context, q session.RequestQuery) (*session.Call, error) {
	st := q.State.(*world.State)
	in := n.tried.at(st.Tick + 1)
	in.once.Do(func() { in.past, in.intentions, in.err = readTickInputs(ctx, q.Store, q.Depth, st) })
	if in.err != nil {
		return nil, in.err
	}
	w := n.tried.snapshot(n.Sim, st)
	var req llm.Request
	var err error
	if q.Phase == PhaseResolution && in.intentions != nil {
		loc := n.Sim.Location(q.Entity)
		if loc == nil {
			_, err = n.request(w, q.Phase, q.Entity) // names the locations
			return nil, &session.InputError{Err: err}
		}
		req, err = ResolutionRequest(n.env(n.Resolution), w, loc, in.intentions)
	} else {
		req, err = n.request(w, q.Phase, q.Entity)
	}
	if err != nil {
		return nil, &session.InputError{Err: err}
	}
	req.Past = []llm.Exchange{}
	for _, h := range in.past[req.EntityKey] {
		req.Past = append(req.Past, llm.Exchange{User: h.User, Assistant: h.Assistant})
	}
	return session.StructuredCall(req), nil
}

// readTickInputs reads what the calls of the tick after st need of
// state.db: the past exchanges, and the tick's intentions when it is
// committed. st nil (no run yet) reads nothing.
func readTickInputs(ctx context.Context, s *store.Store, depth int, st *world.State) (map[string][]store.HistoryRecord, map[string]string, error) {
	if s == nil {
		return nil, nil, nil
	}
	past, err := s.History(ctx, depth, st.Tick)
	if err != nil {
		return nil, nil, err
	}
	last, err := s.LastTick(ctx)
	if err != nil || last < st.Tick+1 {
		return past, nil, err
	}
	calls, err := s.Calls(ctx, st.Tick+1)
	if err != nil {
		return nil, nil, err
	}
	intentions := map[string]string{}
	for id, cs := range st.Characters {
		intentions[id] = cs.ExternalIntent
	}
	for _, c := range calls {
		id, ok := strings.CutPrefix(c.EntityKey, "intention:")
		if c.Phase != PhaseIntention || !ok || c.Output == "" {
			continue
		}
		if resp, err := ParseIntention([]byte(c.Output)); err == nil {
			intentions[id] = resp.Intention
		}
	}
	return past, intentions, nil
}

// facts is what a narrative's eval assertions read of an answer.
type facts struct {
	Speaker string            // the character of an intention call
	Present []string          // the characters in the location, sorted
	Names   map[string]string // id -> name of the characters present
	Moves   map[string]string // character -> where the answer puts them
	Text    string            // every string of the answer, joined
}

// Judge reads an answer as the run would: an intention is used as it is; a
// resolution's updates are read one by one and applied to the state in
// memory with Apply's checks, and the changes are what Apply made.
func (n *Narrative) Judge(q session.RequestQuery, res llm.Result) session.Verdict {
	st := q.State.(*world.State)
	w := n.tried.snapshot(n.Sim, st)
	f := facts{Names: map[string]string{}, Moves: map[string]string{}, Text: answerText(res.Output)}
	v := session.Verdict{Problems: []string{}, Changes: []string{}}
	switch q.Phase {
	case PhaseIntention:
		f.Speaker = q.Entity
		if cs, ok := st.Characters[q.Entity]; ok {
			f.Present = w.Present(cs.Location)
		}
	case PhaseResolution:
		f.Present = w.Present(q.Entity)
	}
	for _, id := range f.Present {
		if c := n.Sim.Character(id); c != nil {
			f.Names[id] = c.Name
		}
	}
	v.Facts = f
	if res.Err != nil || res.Output == nil {
		v.Fallback = true
		v.Problems = append(v.Problems, fmt.Sprintf("the call failed (%s): a run falls back", llm.ErrorKindOf(res.Err)))
		return v
	}
	if q.Phase == PhaseIntention {
		if resp, err := ParseIntention(res.Output); err != nil {
			v.Fallback = true
			v.Problems = append(v.Problems, err.Error())
		} else {
			v.Changes = append(v.Changes, fmt.Sprintf("%s intends: %s", q.Entity, resp.Intention))
		}
		return v
	}
	n.judgeResolution(st, q.Entity, f, res.Output, &v)
	return v
}

// judgeResolution applies a game master's answer for location loc to st in
// memory, filling v with what Apply skipped and what it changed.
func (n *Narrative) judgeResolution(st *world.State, loc string, f facts, out json.RawMessage, v *session.Verdict) {
	mo, skipped, err := ParseMasterOutput(out)
	if err != nil {
		v.Fallback = true
		v.Problems = append(v.Problems, err.Error())
		return
	}
	for _, id := range sortedKeys(skipped) {
		v.Problems = append(v.Problems, fmt.Sprintf("update of %s skipped: %s", id, strings.Join(strings.Fields(skipped[id].Error()), " ")))
	}
	for _, id := range f.Present {
		if _, ok := mo.Characters[id]; !ok {
			if _, bad := skipped[id]; !bad {
				v.Problems = append(v.Problems, fmt.Sprintf("no update for %s: kept as is (fallback)", id))
			}
		}
	}
	next, errs := Apply(n.Sim, around(st, loc, f.Present, mo), map[string]MasterOutput{loc: mo})
	for _, e := range errs {
		v.Problems = append(v.Problems, e.Error())
	}
	for _, id := range f.Present {
		before, after := st.Characters[id], next.Characters[id]
		f.Moves[id] = after.Location
		if after.Location != before.Location {
			v.Changes = append(v.Changes, fmt.Sprintf("%s moves from %s to %s", id, before.Location, after.Location))
		}
		if len(after.Memory) > 0 && after.Memory[len(after.Memory)-1].Tick == next.Tick {
			v.Changes = append(v.Changes, fmt.Sprintf("%s remembers: %s", id, after.Memory[len(after.Memory)-1].Entry))
		}
		if after.ExternalIntent != before.ExternalIntent {
			v.Changes = append(v.Changes, fmt.Sprintf("%s is seen: %s", id, after.ExternalIntent))
		}
	}
	if before, after := st.Locations[loc], next.Locations[loc]; after.Moment != before.Moment {
		v.Changes = append(v.Changes, fmt.Sprintf("%s now: %s", loc, after.Moment))
	}
	if before, after := st.Locations[loc], next.Locations[loc]; after.Description != before.Description {
		v.Changes = append(v.Changes, fmt.Sprintf("%s becomes: %s", loc, after.Description))
	}
	v.Facts = f
}

// around is the part of st an answer for location loc reads and changes:
// the location, the characters present and any other the answer names (so
// that Apply says where that one is), as applyAt needs it. Apply then
// clones that much of the world, not all of it, for each answer an eval
// judges.
func around(st *world.State, loc string, present []string, mo MasterOutput) *world.State {
	sub := &world.State{Tick: st.Tick, Characters: make(map[string]world.CharacterState, len(present)+len(mo.Characters)),
		Locations: map[string]world.LocationState{loc: st.Locations[loc]}}
	for _, id := range present {
		sub.Characters[id] = st.Characters[id]
	}
	for id := range mo.Characters {
		if cs, ok := st.Characters[id]; ok {
			sub.Characters[id] = cs
		}
	}
	return sub
}

// answerText is every string value of a JSON answer, joined by newlines,
// for assertions that look for a name in what the model wrote.
func answerText(out json.RawMessage) string {
	var v any
	if json.Unmarshal(out, &v) != nil {
		return string(out)
	}
	var parts []string
	var walk func(any)
	walk = func(v any) {
		switch t := v.(type) {
		case string:
			parts = append(parts, t)
		case []any:
			for _, e := range t {
				walk(e)
			}
		case map[string]any:
			for _, k := range sortedKeys(t) {
				walk(t[k])
			}
		}
	}
	walk(v)
	return strings.Join(parts, "\n")
}

// Assertions a narrative's eval suite may name beside the common ones.
func (n *Narrative) Assertions() map[string]session.KindAssertion {
	return map[string]session.KindAssertion{
		"moves_to": {
			Help:  "{character: ID, one_of: [LOCATION, ...]}: the answer puts the character in one of these locations (resolution)",
			Parse: n.parseMovesTo,
		},
		"mentions_present": {
			Help:  "true: the answer names (by id or name) a character present other than the one answering",
			Parse: parseMentionsPresent,
		},
	}
}

func (n *Narrative) parseMovesTo(arg any) (func(session.Answer) (bool, string), error) {
	m, ok := arg.(map[string]any)
	char, _ := m["character"].(string)
	list, _ := m["one_of"].([]any)
	if !ok || char == "" || len(list) == 0 || len(m) != 2 {
		return nil, fmt.Errorf("moves_to: want {character: ID, one_of: [LOCATION, ...]}")
	}
	if n.Sim.Character(char) == nil {
		return nil, fmt.Errorf("moves_to: no character %q in %s", char, n.Sim.ID)
	}
	var places []string
	for _, e := range list {
		id, _ := e.(string)
		if n.Sim.Location(id) == nil {
			return nil, fmt.Errorf("moves_to: no location %v in %s", e, n.Sim.ID)
		}
		places = append(places, id)
	}
	return func(a session.Answer) (bool, string) {
		f, _ := a.Verdict.Facts.(facts)
		to, ok := f.Moves[char]
		switch {
		case !ok:
			return false, fmt.Sprintf("the answer does not place %s", char)
		case slices.Contains(places, to):
			return true, fmt.Sprintf("%s ends in %s", char, to)
		}
		return false, fmt.Sprintf("%s ends in %s, not in %s", char, to, strings.Join(places, " or "))
	}, nil
}

func parseMentionsPresent(arg any) (func(session.Answer) (bool, string), error) {
	if b, ok := arg.(bool); !ok || !b {
		return nil, fmt.Errorf("mentions_present: want true")
	}
	return func(a session.Answer) (bool, string) {
		f, _ := a.Verdict.Facts.(facts)
		text := strings.ToLower(f.Text)
		var others []string
		for _, id := range f.Present {
			if id == f.Speaker {
				continue
			}
			others = append(others, id)
			for _, word := range []string{id, f.Names[id]} {
				if word != "" && strings.Contains(text, strings.ToLower(word)) {
					return true, "names " + word
				}
			}
		}
		if len(others) == 0 {
			return false, "no one else is present"
		}
		return false, "names none of " + strings.Join(others, ", ")
	}, nil
}
