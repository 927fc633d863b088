package phases

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// FallbackMemory is the memory entry a character gets when the game master of its
// location could not be reached (seed 004).
const FallbackMemory = "[No resolution — simulation continues]"

// ResolutionKey is the history entity key of a location's game master calls.
func ResolutionKey(locationID string) string { return "resolution:" + locationID }

// ResolutionRequest builds the phase-2a request of location loc at the tick
// after st, given the intentions of the characters there: the very request
// a run sends (history aside, which the client adds), or, for a crowd
// resolved in several calls, its first (see Groups and partRequest). Its
// schema is specialised to the location: exactly the characters the call
// resolves, destinations limited to the location and its connections.
func ResolutionRequest(env Env, w *prompts.Snapshot, loc *world.Location, intentions map[string]string) (llm.Request, error) {
	return partRequest(env, w, loc, intentions, Groups(w.Present(loc.ID), env.perCall())[0])
}

// partRequest builds the request of call g of location loc: it sees the
// whole scene and answers for g's characters; call 1 writes the location's
// update, the others leave it null. One group is ResolutionRequest's
// request as it was before crowds were split.
func partRequest(env Env, w *prompts.Snapshot, loc *world.Location, intentions map[string]string, g Group) (llm.Request, error) {
	tick := w.State().Tick + 1
	present := w.Present(loc.ID)
	here := IntentionsAt(intentions, present)
	key := GroupKey(loc.ID, g.Call)
	name := loc.ID
	if g.Calls > 1 {
		name = fmt.Sprintf("%s (call %d of %d)", loc.ID, g.Call, g.Calls)
	}
	data, err := w.ResolutionPart(loc.ID, here, g.IDs, g.Call, g.Calls)
	if err != nil {
		return llm.Request{}, fmt.Errorf("resolution prompt for %s: %w", name, err)
	}
	answer := env.schemas() // the templates' .Answer and the schema agree
	data.Answer = answer.answer.Resolution
	log := env.debugLogger("phase", PhaseResolution, "tick", tick, "entity", key)
	if log != nil {
		args := []any{"characters", g.IDs, "intentions", len(here), "connections", loc.Connections}
		if g.Calls > 1 {
			args = append(args, "present", len(present))
		}
		log.Debug("Phase 2a: context for "+name, args...)
	}
	system, user, err := renderPair(env.Prompts, ResolutionSystemTemplate, ResolutionUserTemplate, data)
	if err != nil {
		return llm.Request{}, err
	}
	if log != nil {
		log.Debug("Phase 2a: prompts rendered for "+name, "system_chars", len(system), "user_chars", len(user))
	}
	schema, err := answer.resolutionSchema(tick, loc.ID, g.IDs, reachableFrom(loc), g.Call == 1)
	if err != nil {
		return llm.Request{}, fmt.Errorf("%w: resolution schema for %s: %w", runner.ErrSchemaInvalid, name, err)
	}
	return llm.Request{
		EntityKey:    key,
		Phase:        PhaseResolution,
		Tick:         tick,
		Params:       resolutionParams(env, len(g.IDs)),
		System:       system,
		User:         user,
		SchemaName:   "MasterOutput",
		Schema:       schema,
		Accept:       slices.Clone(answer.envelope), // the client's to keep
		Check:        ResolutionCheck(tick, loc.ID),
		Record:       resolutionRecord(data),
		RecordAnswer: resolutionAnswerRecord,
	}, nil
}

// resolutionOutcome reads the game master answer of call g of location loc, or
// falls back to keeping everyone of g as they are (logged as a warning).
// An update for someone outside g is read as any other and left to Apply,
// which refuses one for a character elsewhere; mergeParts keeps the
// group's own.
func resolutionOutcome(ctx context.Context, env Env, st *world.State, loc *world.Location, g Group, res llm.Result) Outcome[MasterOutput] {
	o := Outcome[MasterOutput]{ID: loc.ID, Call: res}
	if o.Call.Err == nil {
		mo, skipped, err := env.schemas().checkedMasterOutput(o.Call.Output, o.Call.Decoded) // Complete checked it against the envelope
		o.Call.Decoded = nil
		if err == nil {
			o.Value = mo
			var others []ApplyError
			if g.Calls > 1 {
				others = outsideGroup(g, &o.Value, skipped)
				if g.Call > 1 {
					o.Value.Location = LocationUpdate{} // call 1's to write
				}
			}
			o.Skipped = append(others, readUpdates(env, st, loc.ID, g.IDs, &o.Value, skipped)...)
			return o
		}
		o.Call.Err = &llm.Error{Kind: llm.KindSchema, Attempts: o.Call.Attempts, Message: err.Error(), Err: err}
		o.Call.Output = nil
	}
	o.Value, o.Fallback = Fallback(st, loc.ID, g.IDs), true
	if warnsFallback(ctx, o.Call.Err) {
		name := loc.ID
		if g.Calls > 1 {
			name = fmt.Sprintf("%s (call %d of %d)", loc.ID, g.Call, g.Calls)
		}
		env.logger().Warn(fmt.Sprintf("Phase 2a: %s fallback (%s: %v)", name, llm.ErrorKindOf(o.Call.Err), o.Call.Err),
			"phase", PhaseResolution, "tick", st.Tick+1, "entity", GroupKey(loc.ID, g.Call))
	}
	return o
}

// readUpdates reports the updates of a game master's answer that were skipped for
// not matching their schema, and gives each character present that the
// answer left out the fallback update (it stays as it is, with
// FallbackMemory), reporting that too: only what is missing falls back.
func readUpdates(env Env, st *world.State, locationID string, present []string, mo *MasterOutput, skipped map[string]error) []ApplyError {
	var errs []ApplyError
	for _, id := range sortedKeys(skipped) {
		errs = append(errs, ApplyError{Tick: mo.Tick, LocationID: locationID, CharacterID: id,
			Reason: "update skipped: " + strings.Join(strings.Fields(skipped[id].Error()), " ")})
	}
	fb := Fallback(st, locationID, present)
	for _, id := range present {
		if _, ok := mo.Characters[id]; ok {
			continue
		}
		if _, bad := skipped[id]; bad {
			continue
		}
		mo.Characters[id] = fb.Characters[id]
		errs = append(errs, ApplyError{Tick: mo.Tick, LocationID: locationID, CharacterID: id,
			Reason: "no update from the game master; kept as is (fallback)"})
		env.logger().Warn(fmt.Sprintf("Phase 2a: %s: no update for %s, fallback", locationID, id),
			"phase", PhaseResolution, "tick", mo.Tick, "entity", ResolutionKey(locationID))
	}
	return errs
}

// outsideGroup drops from an answer of call g of a location the updates,
// valid or skipped, of characters outside g (the other calls resolve
// them; a server that does not enforce the schema may answer for them),
// and reports each.
func outsideGroup(g Group, mo *MasterOutput, skipped map[string]error) []ApplyError {
	var errs []ApplyError
	for _, id := range sortedKeys(mo.Characters) {
		if _, in := slices.BinarySearch(g.IDs, id); !in {
			delete(mo.Characters, id)
			errs = append(errs, ApplyError{Tick: mo.Tick, LocationID: mo.LocationID, CharacterID: id,
				Reason: fmt.Sprintf("update skipped: call %d of %d of this location does not resolve this character", g.Call, g.Calls)})
		}
	}
	for _, id := range sortedKeys(skipped) {
		if _, in := slices.BinarySearch(g.IDs, id); !in {
			delete(skipped, id)
		}
	}
	return errs
}

// IntentionsAt keeps the intentions of the given characters only.
func IntentionsAt(intentions map[string]string, present []string) map[string]string {
	out := make(map[string]string, len(present))
	for _, id := range present {
		if in, ok := intentions[id]; ok {
			out[id] = in
		}
	}
	return out
}

// Fallback is the seed-004 output for a location whose game master call failed:
// every character present (the ids in it at st) stays where it is with its
// state unchanged, gets FallbackMemory, and the location is left as it is.
func Fallback(st *world.State, locationID string, present []string) MasterOutput {
	chars := make(map[string]CharacterUpdate, len(present))
	for _, id := range present {
		cs := st.Characters[id]
		chars[id] = CharacterUpdate{
			Location:       cs.Location,
			InternalState:  cs.InternalState,
			ExternalIntent: cs.ExternalIntent,
			MemoryEntry:    FallbackMemory,
		}
	}
	return MasterOutput{
		Tick:       st.Tick + 1,
		LocationID: locationID,
		Characters: chars,
		Location:   LocationUpdate{},
	}
}

// resolutionParams raises max_tokens for a crowded call so the answer
// fits: by default about 300 tokens of frame plus 250 per character it
// resolves (the string bounds of MasterOutput, see output.go). A configured
// value above that stays; no call asks for more than the env's
// MaxOutputTokens (groups are cut so that their answers fit it, see
// perCall).
func resolutionParams(env Env, n int) llm.Params {
	p := env.Params
	p.MaxTokens = min(max(p.MaxTokens, env.schemas().answer.resolutionTokens(n)), cmp.Or(env.MaxOutputTokens, DefaultMaxOutputTokens))
	return p
}

func reachableFrom(loc *world.Location) []string {
	return append([]string{loc.ID}, loc.Connections...)
}
