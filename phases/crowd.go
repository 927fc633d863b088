package phases

import (
	"fmt"
	"maps"
	"strconv"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/world"
)

// DefaultMaxOutputTokens is llm.max_output_tokens when it is not set: the
// session's default, the one the configuration shows.
const DefaultMaxOutputTokens = session.DefaultMaxOutputTokens

// A crowd is resolved in several calls when more characters are present in
// a location than one call may resolve (phases.resolution.max_characters):
// each call sees the whole scene and answers for its group; call 1 also
// writes the location's update.

// Group is the part of a location's crowd one game master call resolves: call
// Call (from 1) of Calls, for the characters IDs, sorted.
type Group struct {
	Call, Calls int
	IDs         []string
}

// Groups cuts present, sorted ids, into as few groups of at most per
// consecutive ids as it takes, as even as can be (sizes differ by one at
// most). An empty location is one group with no one in it.
func Groups(present []string, per int) []Group {
	per = max(per, 1)
	calls := max(1, (len(present)+per-1)/per)
	out := make([]Group, calls)
	start := 0
	for i := range out {
		size := len(present) / calls
		if i < len(present)%calls {
			size++
		}
		out[i] = Group{Call: i + 1, Calls: calls, IDs: present[start : start+size : start+size]}
		start += size
	}
	return out
}

// GroupKey is the history entity key of call call of location locationID:
// ResolutionKey for call 1, so that a location one call resolves keeps its
// key; "resolution:<id>/<call>" for the others (ids have no '/').
func GroupKey(locationID string, call int) string {
	if call <= 1 {
		return ResolutionKey(locationID)
	}
	return ResolutionKey(locationID) + "/" + strconv.Itoa(call)
}

// perCall is the most characters one game master call resolves, of answers
// within a's bounds: maxCharacters (phases.resolution.max_characters) when
// set, else as many as an answer within maxOutputTokens
// (llm.max_output_tokens; 0: the default) and strict mode's property limit
// allow, whichever is smaller. A maxCharacters whose answer could pass
// maxOutputTokens, or that strict mode cannot list, is an error naming both
// keys, as is an output budget too small for one character.
func perCall(a Answer, maxCharacters, maxOutputTokens int) (int, error) {
	if maxOutputTokens <= 0 {
		maxOutputTokens = DefaultMaxOutputTokens
	}
	fit, err := MaxPresent()
	if err != nil {
		return 0, err
	}
	tokens := a.resolutionTokens
	budget := min(fit, (maxOutputTokens-tokens(0))/(tokens(1)-tokens(0)))
	switch {
	case budget < 1:
		return 0, fmt.Errorf("llm.max_output_tokens %d: a game master's answer for one character may take %d tokens; allow at least that", maxOutputTokens, tokens(1))
	case maxCharacters < 0:
		return 0, fmt.Errorf("phases.resolution.max_characters %d: must not be negative (0: as many as llm.max_output_tokens allows)", maxCharacters)
	case maxCharacters == 0:
		return budget, nil
	case maxCharacters > budget:
		return 0, fmt.Errorf("phases.resolution.max_characters %d: an answer for that many may take %d tokens, more than llm.max_output_tokens %d (or strict mode's %d characters): at most %d; 0 picks it",
			maxCharacters, tokens(maxCharacters), maxOutputTokens, fit, budget)
	}
	return maxCharacters, nil
}

// perCall is perCall of the env's settings; settings perCall refuses (Lint
// reports them) resolve as many as the output budget allows.
func (e Env) perCall() int {
	a := e.schemas().answer
	if n, err := perCall(a, e.MaxCharacters, e.MaxOutputTokens); err == nil {
		return n
	}
	n, err := perCall(a, 0, e.MaxOutputTokens)
	if err != nil {
		n, _ = perCall(a, 0, 0)
	}
	return max(n, 1)
}

// crowdWarning is validate's warning about the worst a run can meet: every
// character that can walk into a location standing there at once. Where
// that is more than one call resolves (per), the location is then resolved
// in several calls, each seeing the whole scene; nil when no location can
// gather that many. A world with no more characters than one call resolves
// passes at once; otherwise each location counts who can reach it, and
// stops counting past per; the first such location is counted whole.
func (n *Narrative) crowdWarning(per int) error {
	if len(n.Sim.Characters) <= per {
		return nil
	}
	from := map[string][]string{} // location -> the locations with a connection to it
	for _, l := range n.Sim.Locations {
		for _, c := range l.Connections {
			from[c] = append(from[c], l.ID)
		}
	}
	starting := map[string]int{} // location -> characters that start there
	for _, c := range n.Sim.Characters {
		starting[c.Start.Location]++
	}
	first, over := "", 0
	for _, l := range n.Sim.Locations {
		if canGather(from, starting, l.ID, per) > per {
			if over == 0 {
				first = l.ID
			}
			over++
		}
	}
	if over == 0 {
		return nil
	}
	crowd := canGather(from, starting, first, len(n.Sim.Characters))
	others := ""
	if over > 1 {
		others = fmt.Sprintf(" (and %d other locations can gather more than %d)", over-1, per)
	}
	return fmt.Errorf("%d characters can gather in location %s%s, more than one resolution call resolves (%d, phases.resolution.max_characters or what llm.max_output_tokens allows): such a crowd is resolved in up to %d calls a tick, each seeing the whole scene",
		crowd, first, others, per, len(Groups(make([]string, crowd), per)))
}

// canGather counts the characters whose starting location has a path to
// location id along the connections (from maps a location to those with a
// connection to it; starting counts who starts where), up to past limit.
func canGather(from map[string][]string, starting map[string]int, id string, limit int) int {
	reach := map[string]bool{id: true}
	count := starting[id]
	for queue := []string{id}; len(queue) > 0 && count <= limit; queue = queue[1:] {
		for _, p := range from[queue[0]] {
			if !reach[p] {
				reach[p] = true
				count += starting[p]
				queue = append(queue, p)
			}
		}
	}
	return count
}

// mergeParts is the outcome of location locationID resolved in several
// calls, parts in call order: every group's updates (a failed call's group
// keeps its fallback, and each of its characters is reported so), the
// location's update from call 1, and a fallback as a whole only when every
// call fell back, as seed 004 has it for one call. Parts keeps the calls.
func mergeParts(st *world.State, locationID string, parts []Outcome[MasterOutput]) Outcome[MasterOutput] {
	if len(parts) == 1 {
		return parts[0]
	}
	out := Outcome[MasterOutput]{ID: locationID, Call: parts[0].Call, Parts: parts, Fallback: true,
		Value: MasterOutput{Tick: st.Tick + 1, LocationID: locationID, Characters: CharacterUpdates{}, Location: parts[0].Value.Location}}
	for _, p := range parts {
		out.Fallback = out.Fallback && p.Fallback
	}
	for i, p := range parts {
		maps.Copy(out.Value.Characters, p.Value.Characters)
		out.Skipped = append(out.Skipped, p.Skipped...)
		if !p.Fallback || out.Fallback {
			continue
		}
		reason := fmt.Sprintf("no resolution: call %d of %d for this location failed (%s); kept as is (fallback)", i+1, len(parts), llm.ErrorKindOf(p.Call.Err))
		for _, id := range sortedKeys(p.Value.Characters) {
			out.Skipped = append(out.Skipped, ApplyError{Tick: st.Tick + 1, LocationID: locationID, CharacterID: id, Reason: reason})
		}
	}
	return out
}
