package prompts

import (
	"fmt"
	"slices"
	"sync"

	"github.com/arbiter-sim/arbiter/world"
)

// MemoryDepth is how many of a character's latest memory entries a prompt
// shows.
const MemoryDepth = 10

// SimulationData is the world as a whole.
type SimulationData struct {
	ID      string
	Title   string
	Premise string
	Tick    int // the tick being run: committed ticks + 1
}

// Link is a location one can reach from another in one tick.
type Link struct {
	ID   string
	Name string
}

// LocationData is a location: identity, current state, connections.
type LocationData struct {
	ID          string
	Name        string
	Description string // identity: what the place is (authored, fixed)
	Moment      string // state: what is happening there right now
	Scene       string // state: how the place is now (the state's description)
	Connections []Link // in authored order
}

// CharacterData is a character: identity, current state, recent memory.
type CharacterData struct {
	ID             string
	Name           string
	Description    string // identity: who they are (authored, fixed)
	Location       string // id of the location they are in
	InternalState  string // hidden feelings and thoughts
	ExternalIntent string // what others can see them doing or about to do
	// Memory is the last MemoryDepth entries, oldest first.
	Memory []world.MemoryEntry
}

// Other is someone else present, as a character sees them.
type Other struct {
	ID             string
	Name           string
	ExternalIntent string
}

// IntentionData is the data of the phase-1 templates: one character deciding
// what to try this tick.
type IntentionData struct {
	Simulation SimulationData
	Character  CharacterData
	Location   LocationData // where the character is
	Others     []Other      // the others in that location, by id
	// Answer is the answer's field as its schema bounds and describes it,
	// for the template to tell the model the same.
	Answer IntentionAnswer
}

// Field is a text field of a model's answer as the schema sent with the
// call has it: the most characters it may hold and what the schema tells
// the model it holds. A simulation sets both (simulation.yaml's
// settings.answer), so that a template stating a length and the schema
// enforcing one agree.
type Field struct {
	MaxLength   int
	Description string
}

// IntentionAnswer is the field of a character's phase-1 answer.
type IntentionAnswer struct {
	Intention Field
}

// ResolutionAnswer is the text fields of the game master's phase-2a answer:
// each character's update, then the location's.
type ResolutionAnswer struct {
	MemoryEntry, InternalState, ExternalIntent Field
	Moment, Description                        Field
}

// DefaultIntentionAnswer is the phase-1 answer's field when the simulation
// does not set it.
func DefaultIntentionAnswer() IntentionAnswer {
	return IntentionAnswer{
		Intention: Field{MaxLength: 400, Description: "What you try to do this tick, in the first person: one concrete action, 1-3 sentences."},
	}
}

// DefaultResolutionAnswer is the game master answer's fields when the
// simulation does not set them.
func DefaultResolutionAnswer() ResolutionAnswer {
	return ResolutionAnswer{
		MemoryEntry:    Field{MaxLength: 300, Description: "What this character lived through this tick, as they will remember it. Never empty."},
		InternalState:  Field{MaxLength: 300, Description: "How the character feels and what they think now, hidden from others."},
		ExternalIntent: Field{MaxLength: 300, Description: "What others can see the character doing or about to do."},
		Moment:         Field{MaxLength: 300, Description: "What is happening here now, at the end of the tick; null keeps the current moment."},
		Description:    Field{MaxLength: 600, Description: "The lasting state of the place if this tick changed it; null keeps it."},
	}
}

// PresentCharacter is a character in the location being resolved, with what
// they intend this tick: the fields of CharacterData, then Intention. They
// are written out rather than embedded because text/template finds a field
// of a struct with an embedded one by a breadth-first search that
// allocates, at every use.
type PresentCharacter struct {
	ID             string
	Name           string
	Description    string
	Location       string
	InternalState  string
	ExternalIntent string
	Memory         []world.MemoryEntry
	// Intention is the character's phase-1 intention, or their external
	// intent when they have none (their intention call failed).
	Intention string
}

// ResolutionData is the data of the phase-2a templates: the game master of one
// location resolving one tick, or, for a crowd resolved in several calls,
// its part of it (call Call of Calls).
type ResolutionData struct {
	Simulation SimulationData
	Location   LocationData
	Characters []PresentCharacter // the characters this call resolves, by id: everyone present unless the crowd is split
	Present    []string           // their ids, sorted
	Reachable  []string           // where they may be after the tick: the location, then its connections
	// Others are the rest of the characters present, by id, resolved by
	// the location's other calls of the tick: the whole scene, compactly.
	// Empty when one call resolves everyone.
	Others []Bystander
	// Call is this call's number, from 1, of the Calls that resolve the
	// location this tick (1 of 1 unless the crowd is split).
	Call, Calls int
	// UpdatesLocation is whether this call writes the location's update
	// (moment, description): call 1's; the others leave it null.
	UpdatesLocation bool
	// Answer is the answer's text fields as its schema bounds and
	// describes them.
	Answer ResolutionAnswer
}

// Bystander is someone present whom another call of the tick resolves, as
// this call sees them: who they are and what they intend.
type Bystander struct {
	ID        string
	Name      string
	Intention string // their phase-1 intention, or their external intent when they have none
}

// Snapshot is the world as the prompts of one tick read it: the authored
// simulation, the state the tick starts from and where everyone is, placed
// once (world.State.Occupancy), so that the data of any character or
// location is gathered without scanning the others. Build one per tick.
type Snapshot struct {
	sim *world.Simulation
	st  *world.State
	at  world.Occupancy

	mu     sync.Mutex
	places map[string]*place
}

// place is what every prompt of one location shares in a snapshot,
// gathered by the first that needs it: the location, and each character
// there as the others see them, so that the prompts of ten characters in a
// place do not each repeat the same lookups.
type place struct {
	once      sync.Once
	loc       LocationData
	locErr    error
	present   []Other
	othersErr error
}

// NewSnapshot places every character of st once.
func NewSnapshot(sim *world.Simulation, st *world.State) *Snapshot {
	return &Snapshot{sim: sim, st: st, at: st.Occupancy(), places: map[string]*place{}}
}

// place is location id's place, gathered on first use. Its data is shared
// by every prompt of the place: read, never changed.
func (w *Snapshot) place(id string) *place {
	w.mu.Lock()
	p := w.places[id]
	if p == nil {
		p = &place{}
		w.places[id] = p
	}
	w.mu.Unlock()
	p.once.Do(func() {
		if p.loc, p.locErr = location(w.sim, w.st, id); p.locErr != nil {
			return
		}
		here := w.at[id]
		p.present = make([]Other, 0, len(here))
		for _, cid := range here {
			c := w.sim.Character(cid)
			if c == nil {
				p.othersErr = fmt.Errorf("state has unknown character %q", cid)
				return
			}
			p.present = append(p.present, Other{ID: cid, Name: c.Name, ExternalIntent: w.st.Characters[cid].ExternalIntent})
		}
	})
	return p
}

// State is the state the tick starts from.
func (w *Snapshot) State() *world.State { return w.st }

// Present returns the sorted ids of the characters in location id (nil
// when nobody is there).
func (w *Snapshot) Present(id string) []string { return w.at[id] }

// IntentionData gathers what character characterID knows. Its Answer is
// the default; the request that sends it puts the simulation's.
func (w *Snapshot) IntentionData(characterID string) (IntentionData, error) {
	sim, st := w.sim, w.st
	ch, err := character(sim, st, characterID)
	if err != nil {
		return IntentionData{}, err
	}
	p := w.place(ch.Location)
	if p.locErr != nil {
		return IntentionData{}, fmt.Errorf("character %q: %w", characterID, p.locErr)
	}
	if p.othersErr != nil {
		return IntentionData{}, p.othersErr
	}
	others := make([]Other, 0, max(0, len(p.present)-1))
	for _, o := range p.present {
		if o.ID != characterID {
			others = append(others, o)
		}
	}
	return IntentionData{Simulation: simulation(sim, st), Character: ch, Location: p.loc, Others: others, Answer: DefaultIntentionAnswer()}, nil
}

// ResolutionData gathers what the game master of location locationID needs to
// resolve everyone present in one call; intentions maps character ids to
// their phase-1 intentions (those of characters elsewhere are ignored).
func (w *Snapshot) ResolutionData(locationID string, intentions map[string]string) (ResolutionData, error) {
	return w.ResolutionPart(locationID, intentions, w.at[locationID], 1, 1)
}

// ResolutionPart is ResolutionData for call call of calls that share the
// crowd of location locationID: group, sorted ids of characters present,
// are the ones it resolves, in full; everyone else present is in Others,
// by name and intention. Call 1 writes the location's update. Its Answer
// is the default, as IntentionData's.
func (w *Snapshot) ResolutionPart(locationID string, intentions map[string]string, group []string, call, calls int) (ResolutionData, error) {
	sim, st := w.sim, w.st
	p := w.place(locationID)
	if p.locErr != nil {
		return ResolutionData{}, p.locErr
	}
	if p.othersErr != nil {
		return ResolutionData{}, p.othersErr
	}
	loc := p.loc
	if group == nil {
		group = []string{}
	}
	chars := make([]PresentCharacter, 0, len(group))
	for _, id := range group {
		ch, err := character(sim, st, id)
		if err != nil {
			return ResolutionData{}, err
		}
		if ch.Location != locationID {
			return ResolutionData{}, fmt.Errorf("character %q is in %q, not in %q", id, ch.Location, locationID)
		}
		intention, ok := intentions[id]
		if !ok {
			intention = ch.ExternalIntent
		}
		chars = append(chars, PresentCharacter{ID: ch.ID, Name: ch.Name, Description: ch.Description, Location: ch.Location,
			InternalState: ch.InternalState, ExternalIntent: ch.ExternalIntent, Memory: ch.Memory, Intention: intention})
	}
	var others []Bystander
	if len(group) < len(p.present) {
		others = make([]Bystander, 0, len(p.present)-len(group))
		for _, o := range p.present { // both sorted by id
			if _, in := slices.BinarySearch(group, o.ID); in {
				continue
			}
			intention, ok := intentions[o.ID]
			if !ok {
				intention = o.ExternalIntent
			}
			others = append(others, Bystander{ID: o.ID, Name: o.Name, Intention: intention})
		}
	}
	return ResolutionData{
		Simulation:      simulation(sim, st),
		Location:        loc,
		Characters:      chars,
		Present:         group,
		Reachable:       sim.Destinations(locationID),
		Others:          others,
		Call:            call,
		Calls:           calls,
		UpdatesLocation: call == 1,
		Answer:          DefaultResolutionAnswer(),
	}, nil
}

func simulation(sim *world.Simulation, st *world.State) SimulationData {
	return SimulationData{ID: sim.ID, Title: sim.Title, Premise: sim.Premise, Tick: st.Tick + 1}
}

func character(sim *world.Simulation, st *world.State, id string) (CharacterData, error) {
	c := sim.Character(id)
	if c == nil {
		return CharacterData{}, fmt.Errorf("unknown character %q", id)
	}
	cs, ok := st.Characters[id]
	if !ok {
		return CharacterData{}, fmt.Errorf("character %q has no state at tick %d", id, st.Tick)
	}
	mem := cs.Memory[max(0, len(cs.Memory)-MemoryDepth):]
	return CharacterData{
		ID:             c.ID,
		Name:           c.Name,
		Description:    c.Description,
		Location:       cs.Location,
		InternalState:  cs.InternalState,
		ExternalIntent: cs.ExternalIntent,
		Memory:         append([]world.MemoryEntry{}, mem...),
	}, nil
}

func location(sim *world.Simulation, st *world.State, id string) (LocationData, error) {
	l := sim.Location(id)
	if l == nil {
		return LocationData{}, fmt.Errorf("unknown location %q", id)
	}
	ls, ok := st.Locations[id]
	if !ok {
		return LocationData{}, fmt.Errorf("location %q has no state at tick %d", id, st.Tick)
	}
	links := make([]Link, 0, len(l.Connections))
	for _, cid := range l.Connections {
		c := sim.Location(cid)
		if c == nil {
			return LocationData{}, fmt.Errorf("location %q: unknown connection %q", id, cid)
		}
		links = append(links, Link{ID: c.ID, Name: c.Name})
	}
	return LocationData{
		ID:          l.ID,
		Name:        l.Name,
		Description: l.Description,
		Moment:      ls.Moment,
		Scene:       ls.Description,
		Connections: links,
	}, nil
}
