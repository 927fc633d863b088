package phases

import (
	"context"
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// IntentionResult is the outcome of phase 1: one intention per character.
type IntentionResult struct {
	// Intentions maps character id to what the character means to do this tick.
	Intentions map[string]string
	// Fallback marks characters whose call failed; their intention is their
	// current external_intent.
	Fallback map[string]bool
	// Calls holds every model call of the phase, in character order.
	Calls []llm.Result
}

// IntentionKey is the history entity key of a character's intention calls.
func IntentionKey(characterID string) string { return "intention:" + characterID }

// Intention runs phase 1: one structured-output call per character, all in
// parallel. A failed call keeps the character's current external_intent and
// logs a warning; only a prompt that cannot be rendered is an error.
func Intention(ctx context.Context, env Env, st *world.State) (*IntentionResult, error) {
	tick := st.Tick + 1
	reqs := make([]llm.Request, 0, len(env.Sim.Characters))
	for _, c := range env.Sim.Characters {
		data, err := prompts.NewIntentionData(env.Sim, st, c.ID)
		if err != nil {
			return nil, fmt.Errorf("intention prompt for %s: %w", c.ID, err)
		}
		system, err := env.Prompts.Render(IntentionSystemTemplate, data)
		if err != nil {
			return nil, err
		}
		user, err := env.Prompts.Render(IntentionUserTemplate, data)
		if err != nil {
			return nil, err
		}
		reqs = append(reqs, llm.Request{
			EntityKey:  IntentionKey(c.ID),
			Phase:      PhaseIntention,
			Tick:       tick,
			Params:     env.Params,
			System:     system,
			User:       user,
			SchemaName: "IntentionResponse",
			Schema:     IntentionSchema(),
		})
	}

	results := env.Model.CreateBatch(ctx, reqs)
	out := &IntentionResult{
		Intentions: make(map[string]string, len(results)),
		Fallback:   make(map[string]bool),
		Calls:      results,
	}
	for i, c := range env.Sim.Characters {
		res := results[i]
		if res.Err == nil {
			resp, err := ParseIntention(res.Output)
			if err == nil {
				out.Intentions[c.ID] = resp.Intention
				continue
			}
			results[i].Err = &llm.Error{Kind: llm.KindSchema, Attempts: res.Attempts, Message: err.Error(), Err: err}
			results[i].Output = nil
			res = results[i]
		}
		out.Intentions[c.ID] = st.Characters[c.ID].ExternalIntent
		out.Fallback[c.ID] = true
		env.logger().Warn(fmt.Sprintf("Phase 1: %s fallback (%s: %v)", c.ID, llm.KindOf(res.Err), res.Err),
			"phase", PhaseIntention, "tick", tick, "entity", IntentionKey(c.ID))
	}
	return out, nil
}
