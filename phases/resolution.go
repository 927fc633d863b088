package phases

import (
	"context"
	"fmt"
	"maps"
	"strings"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/world"
)

// FallbackMemory is the memory entry a character gets when the arbiter of its
// location could not be reached (seed 004).
const FallbackMemory = "[No resolution — simulation continues]"

// ResolutionKey is the history entity key of a location's arbiter calls.
func ResolutionKey(locationID string) string { return "resolution:" + locationID }

// ResolutionRequest builds the phase-2a request of location loc at the tick
// after st, given the intentions of the characters there: the very request
// a run sends (history aside, which the client adds). Its schema is
// specialised to the location: exactly the characters present, destinations
// limited to the location and its connections.
func ResolutionRequest(env Env, w *prompts.Snapshot, loc *world.Location, intentions map[string]string) (llm.Request, error) {
	tick := w.State().Tick + 1
	present := w.Present(loc.ID)
	here := IntentionsAt(intentions, present)
	data, err := w.ResolutionData(loc.ID, here)
	if err != nil {
		return llm.Request{}, fmt.Errorf("resolution prompt for %s: %w", loc.ID, err)
	}
	log := env.debugLogger("phase", PhaseResolution, "tick", tick, "entity", ResolutionKey(loc.ID))
	if log != nil {
		log.Debug("Phase 2a: context for "+loc.ID, "characters", present, "intentions", len(here),
			"connections", loc.Connections)
	}
	system, user, err := renderPair(env.Prompts, ResolutionSystemTemplate, ResolutionUserTemplate, data)
	if err != nil {
		return llm.Request{}, err
	}
	if log != nil {
		log.Debug("Phase 2a: prompts rendered for "+loc.ID, "system_chars", len(system), "user_chars", len(user))
	}
	schema, err := ResolutionSchema(tick, loc.ID, present, reachableFrom(loc))
	if err != nil {
		return llm.Request{}, fmt.Errorf("%w: resolution schema for %s: %w", runner.ErrSchemaInvalid, loc.ID, err)
	}
	accept, err := ResolutionEnvelope()
	if err != nil {
		return llm.Request{}, fmt.Errorf("%w: %w", runner.ErrSchemaInvalid, err)
	}
	return llm.Request{
		EntityKey:    ResolutionKey(loc.ID),
		Phase:        PhaseResolution,
		Tick:         tick,
		Params:       resolutionParams(env.Params, len(present)),
		System:       system,
		User:         user,
		SchemaName:   "MasterOutput",
		Schema:       schema,
		Accept:       accept,
		Check:        ResolutionCheck(tick, loc.ID),
		Record:       resolutionRecord(data),
		RecordAnswer: resolutionAnswerRecord,
	}, nil
}

// Resolution runs phase 2a (seed 004): one arbiter call per location, empty
// locations included, all in parallel, each prompt and schema built by the
// worker that sends it. It returns one outcome per location, in the
// simulation's order. A failed call yields a fallback that keeps every
// character where and as it is, with a logged warning. Only a prompt or
// schema that cannot be built is an error.
func Resolution(ctx context.Context, env Env, st *world.State, intentions map[string]string) ([]Outcome[MasterOutput], error) {
	// The tick's own path, with every intention already in: nothing starts
	// before the phase.
	o := newOverlap(ctx, env, st, prompts.NewSnapshot(env.Sim, st), false, env.Model.Workers())
	defer o.stop()
	maps.Copy(o.intents, intentions)
	return o.resolve(ctx)
}

// resolutionOutcome reads location loc's arbiter answer from its call, or
// falls back to keeping everyone there as they are (logged as a warning).
func resolutionOutcome(ctx context.Context, env Env, st *world.State, w *prompts.Snapshot, loc *world.Location, res llm.Result) Outcome[MasterOutput] {
	o := Outcome[MasterOutput]{ID: loc.ID, Call: res}
	if o.Call.Err == nil {
		mo, skipped, err := checkedMasterOutput(o.Call.Output, o.Call.Decoded) // Complete checked it against ResolutionEnvelope
		o.Call.Decoded = nil
		if err == nil {
			o.Value = mo
			o.Skipped = readUpdates(env, st, loc.ID, w.Present(loc.ID), &o.Value, skipped)
			return o
		}
		o.Call.Err = &llm.Error{Kind: llm.KindSchema, Attempts: o.Call.Attempts, Message: err.Error(), Err: err}
		o.Call.Output = nil
	}
	o.Value, o.Fallback = Fallback(st, loc.ID, w.Present(loc.ID)), true
	if warnsFallback(ctx, o.Call.Err) {
		env.logger().Warn(fmt.Sprintf("Phase 2a: %s fallback (%s: %v)", loc.ID, llm.KindOf(o.Call.Err), o.Call.Err),
			"phase", PhaseResolution, "tick", st.Tick+1, "entity", ResolutionKey(loc.ID))
	}
	return o
}

// readUpdates reports the updates of an arbiter answer that were skipped for
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
			Reason: "no update from the arbiter; kept as is (fallback)"})
		env.logger().Warn(fmt.Sprintf("Phase 2a: %s: no update for %s, fallback", locationID, id),
			"phase", PhaseResolution, "tick", mo.Tick, "entity", ResolutionKey(locationID))
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

// Fallback is the seed-004 output for a location whose arbiter call failed:
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

// resolutionParams raises max_tokens for a crowded location so the answer
// fits: about 300 tokens of frame plus 250 per character present (the string
// bounds of MasterOutput, see output.go). A configured value above that stays.
func resolutionParams(p llm.Params, present int) llm.Params {
	p.MaxTokens = max(p.MaxTokens, ResolutionTokens(present))
	return p
}

// ResolutionTokens is the most tokens an arbiter answer for a location with
// n characters present can take within the schema's string bounds.
func ResolutionTokens(n int) int { return 300 + 250*n }

func reachableFrom(loc *world.Location) []string {
	return append([]string{loc.ID}, loc.Connections...)
}
