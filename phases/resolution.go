package phases

import (
	"context"
	"fmt"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/world"
)

// FallbackMemory is the memory entry a character gets when the arbiter of its
// location could not be reached (seed 004).
const FallbackMemory = "[No resolution — simulation continues]"

// ResolutionResult is the outcome of phase 2a. Success is implied: every
// location has an entry, real or fallback.
type ResolutionResult struct {
	// Outputs maps every location id to the arbiter's decision for it.
	Outputs map[string]MasterOutput
	// Fallback marks locations whose call failed and got the fallback output.
	Fallback map[string]bool
	// Calls holds every model call of the phase, in location order.
	Calls []llm.Result
}

// ResolutionKey is the history entity key of a location's arbiter calls.
func ResolutionKey(locationID string) string { return "resolution:" + locationID }

// Resolution runs phase 2a (seed 004): one arbiter call per location, empty
// locations included, all in parallel. Each call's schema is specialised to the
// location: exactly the characters present, destinations limited to the
// location and its connections. A failed call yields a fallback that keeps
// every character where and as it is, with a logged warning. Only a prompt or
// schema that cannot be built is an error.
func Resolution(ctx context.Context, env Env, st *world.State, intentions map[string]string) (*ResolutionResult, error) {
	tick := st.Tick + 1
	groups := GroupByLocation(env.Sim, st)
	reqs := make([]llm.Request, 0, len(env.Sim.Locations))
	for _, loc := range env.Sim.Locations {
		present := groups[loc.ID]
		data, err := prompts.NewResolutionData(env.Sim, st, loc.ID, IntentionsAt(intentions, present))
		if err != nil {
			return nil, fmt.Errorf("resolution prompt for %s: %w", loc.ID, err)
		}
		system, err := env.Prompts.Render(ResolutionSystemTemplate, data)
		if err != nil {
			return nil, err
		}
		user, err := env.Prompts.Render(ResolutionUserTemplate, data)
		if err != nil {
			return nil, err
		}
		schema, err := ResolutionSchema(tick, loc.ID, present, reachableFrom(loc))
		if err != nil {
			return nil, fmt.Errorf("resolution schema for %s: %w", loc.ID, err)
		}
		reqs = append(reqs, llm.Request{
			EntityKey:  ResolutionKey(loc.ID),
			Phase:      PhaseResolution,
			Tick:       tick,
			Params:     resolutionParams(env.Params, len(present)),
			System:     system,
			User:       user,
			SchemaName: "MasterOutput",
			Schema:     schema,
		})
	}

	results := env.Model.CreateBatch(ctx, reqs)
	out := &ResolutionResult{
		Outputs:  make(map[string]MasterOutput, len(results)),
		Fallback: make(map[string]bool),
		Calls:    results,
	}
	for i, loc := range env.Sim.Locations {
		res := results[i]
		if res.Err == nil {
			mo, err := ParseMasterOutput(res.Output)
			if err == nil {
				out.Outputs[loc.ID] = mo
				continue
			}
			results[i].Err = &llm.Error{Kind: llm.KindSchema, Attempts: res.Attempts, Message: err.Error(), Err: err}
			results[i].Output = nil
			res = results[i]
		}
		out.Outputs[loc.ID] = Fallback(st, loc.ID)
		out.Fallback[loc.ID] = true
		env.logger().Warn(fmt.Sprintf("Phase 2a: %s fallback (%s: %v)", loc.ID, llm.KindOf(res.Err), res.Err),
			"phase", PhaseResolution, "tick", tick, "entity", ResolutionKey(loc.ID))
	}
	return out, nil
}

// GroupByLocation maps every location id to the sorted ids of the characters
// in it; empty locations map to an empty slice.
func GroupByLocation(sim *world.Simulation, st *world.State) map[string][]string {
	groups := make(map[string][]string, len(sim.Locations))
	for _, loc := range sim.Locations {
		groups[loc.ID] = []string{}
	}
	for _, c := range sim.Characters {
		l := st.Characters[c.ID].Location
		groups[l] = append(groups[l], c.ID)
	}
	return groups
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
// every character present stays where it is with its state unchanged, gets
// FallbackMemory, and the location is left as it is.
func Fallback(st *world.State, locationID string) MasterOutput {
	chars := make(map[string]CharacterUpdate)
	for _, id := range st.CharactersAt(locationID) {
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
