package phases

import (
	"context"
	"fmt"
	"slices"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// IntentionKey is the history entity key of a character's intention calls.
func IntentionKey(characterID string) string { return "intention:" + characterID }

// IntentionRequest builds the phase-1 request of character id at the tick
// after the snapshot's state: the very request a run sends (history aside,
// which the client adds). Its templates' .Answer and its schema are made
// from the same settings (the env's).
func IntentionRequest(env Env, w *prompts.Snapshot, id string) (llm.Request, error) {
	st := w.State()
	data, err := w.IntentionData(id)
	if err != nil {
		return llm.Request{}, fmt.Errorf("intention prompt for %s: %w", id, err)
	}
	answer := env.schemas()
	data.Answer = answer.answer.Intention
	log := env.debugLogger("phase", PhaseIntention, "tick", st.Tick+1, "entity", IntentionKey(id))
	if log != nil {
		log.Debug("Phase 1: context for "+id, "location", st.Characters[id].Location, "memories", len(st.Characters[id].Memory))
	}
	system, user, err := renderPair(env.Prompts, IntentionSystemTemplate, IntentionUserTemplate, data)
	if err != nil {
		return llm.Request{}, err
	}
	if log != nil {
		log.Debug("Phase 1: prompts rendered for "+id, "system_chars", len(system), "user_chars", len(user))
	}
	return llm.Request{
		EntityKey:  IntentionKey(id),
		Phase:      PhaseIntention,
		Tick:       st.Tick + 1,
		Params:     env.Params,
		System:     system,
		User:       user,
		SchemaName: "IntentionResponse",
		Schema:     slices.Clone(answer.intention), // the client's to keep
		Record:     intentionRecord(data),
	}, nil
}

// intentionOutcome reads character id's intention from its call, or falls
// back to its external_intent (logged as a warning).
func intentionOutcome(ctx context.Context, env Env, st *world.State, id string, res llm.Result) Outcome[string] {
	o := Outcome[string]{ID: id, Call: res}
	if o.Call.Err == nil {
		resp, err := checkedIntentionOf(o.Call.Output, o.Call.Decoded) // Complete checked it against the intention schema
		o.Call.Decoded = nil
		if err == nil {
			o.Value = resp.Intention
			return o
		}
		o.Call.Err = &llm.Error{Kind: llm.KindSchema, Attempts: o.Call.Attempts, Message: err.Error(), Err: err}
		o.Call.Output = nil
	}
	o.Value, o.Fallback = st.Characters[id].ExternalIntent, true
	if warnsFallback(ctx, o.Call.Err) {
		env.logger().Warn(fmt.Sprintf("Phase 1: %s fallback (%s: %v)", id, llm.ErrorKindOf(o.Call.Err), o.Call.Err),
			"phase", PhaseIntention, "tick", st.Tick+1, "entity", IntentionKey(id))
	}
	return o
}
