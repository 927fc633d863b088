// Package cast holds the narrative's file rules: its simulation is a cast
// of characters in connected places, so simulation.yaml needs a premise,
// and characters/*.yaml and locations/*.yaml (.yml too; other files are
// ignored) are read and checked: at least one of each, their fields, ids
// unique, each starting location and connection a location. Load is the
// narrative's world.Reads.Load. It imports world alone, so that the tests
// of the packages the narrative builds on (runner, prompts, session) load
// its simulations without an import cycle.
package cast

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/world"
)

var characterFields = []world.Field{
	{Key: "id", Shape: world.Text, Required: true},
	{Key: "name", Shape: world.Text, Required: true},
	{Key: "description", Shape: world.Text, Required: true},
	{Key: "state", Shape: world.Map, Required: true, Fields: []world.Field{
		{Key: "location", Shape: world.Text, Required: true},
		{Key: "internal_state", Shape: world.Text},
		{Key: "external_intent", Shape: world.Text},
	}},
}

var locationFields = []world.Field{
	{Key: "id", Shape: world.Text, Required: true},
	{Key: "name", Shape: world.Text, Required: true},
	{Key: "description", Shape: world.Text, Required: true},
	{Key: "state", Shape: world.Map, Fields: []world.Field{
		{Key: "moment", Shape: world.Text},
		{Key: "description", Shape: world.Text},
	}},
	{Key: "connections", Shape: world.List},
}

// authored pairs a loaded entity with the fields it came from, for the line
// numbers of problems found after every file is read.
type authored[T any] struct {
	value T
	f     *world.Fields
}

// loader reads one simulation's cast.
type loader struct {
	*world.Files
	// locationsUnread is set when a location file could not be read or had
	// no id: references to unknown locations are then not reported, since
	// the missing id may be the one they name.
	locationsUnread bool
	// charactersUnread is set when the characters folder or a character
	// file could not be read or had no id: an empty cast is then not
	// reported, since that file is the cast, only broken.
	charactersUnread bool
}

// Load reads and checks the cast of sim, whose simulation.yaml f has read,
// into sim.Characters and sim.Locations, sorted by id; every problem goes
// to f.
func Load(f *world.Files, sim *world.Simulation) {
	if s := f.Simulation; s != nil && sim.Premise == "" {
		f.Problem(s.File(), s.Line("premise"), "premise",
			fmt.Sprintf(`missing required field "premise": a %s simulation needs a world premise`, sim.Kind))
	}
	l := &loader{Files: f}
	chars := l.loadCharacters()
	locs := l.loadLocations()
	for _, c := range chars {
		sim.Characters = append(sim.Characters, c.value)
	}
	for _, loc := range locs {
		sim.Locations = append(sim.Locations, loc.value)
	}
	if len(chars) == 0 && !l.charactersUnread {
		f.Problem(filepath.Join(f.Dir(), "characters"), 0, "",
			"no characters: a "+sim.Kind+" simulation needs at least one characters/*.yaml")
	}
	if len(locs) == 0 && !l.locationsUnread {
		f.Problem(filepath.Join(f.Dir(), "locations"), 0, "",
			"no locations: a "+sim.Kind+" simulation needs at least one locations/*.yaml")
		return
	}
	l.checkReferences(chars, locs)
}

func (l *loader) loadCharacters() []authored[*world.Character] {
	var out []authored[*world.Character]
	ids := make(map[string]*world.Fields)
	paths, ok := l.Folder("characters")
	l.charactersUnread = !ok
	for _, path := range paths {
		f := l.ReadYAML(path, "character", characterFields)
		if f == nil || f.Text("id") == "" {
			l.charactersUnread = true
			continue
		}
		if !l.CheckID(f, "character", ids) {
			continue
		}
		c := &world.Character{
			ID:          f.Text("id"),
			Name:        f.Text("name"),
			Description: f.Text("description"),
			Start: world.CharacterState{
				Location:       f.Text("state.location"),
				InternalState:  f.Text("state.internal_state"),
				ExternalIntent: f.Text("state.external_intent"),
			},
		}
		out = append(out, authored[*world.Character]{c, f})
	}
	slices.SortFunc(out, func(a, b authored[*world.Character]) int { return cmp.Compare(a.value.ID, b.value.ID) })
	return out
}

func (l *loader) loadLocations() []authored[*world.Location] {
	var out []authored[*world.Location]
	ids := make(map[string]*world.Fields)
	paths, ok := l.Folder("locations")
	l.locationsUnread = !ok
	for _, path := range paths {
		f := l.ReadYAML(path, "location", locationFields)
		if f == nil || f.Text("id") == "" {
			l.locationsUnread = true
			continue
		}
		if !l.CheckID(f, "location", ids) {
			continue
		}
		loc := &world.Location{
			ID:          f.Text("id"),
			Name:        f.Text("name"),
			Description: f.Text("description"),
			Start: world.LocationState{
				Moment:      f.Text("state.moment"),
				Description: f.Text("state.description"),
			},
		}
		for _, item := range f.List("connections") {
			if item.Found == "" {
				loc.Connections = append(loc.Connections, item.Text)
			}
		}
		out = append(out, authored[*world.Location]{loc, f})
	}
	slices.SortFunc(out, func(a, b authored[*world.Location]) int { return cmp.Compare(a.value.ID, b.value.ID) })
	return out
}

// checkReferences reports starting locations and connections that name no
// location, connections of a location to itself, and repeated connections.
func (l *loader) checkReferences(chars []authored[*world.Character], locs []authored[*world.Location]) {
	known := make(map[string]bool, len(locs))
	ids := make([]string, len(locs))
	for i, loc := range locs {
		known[loc.value.ID] = true
		ids[i] = loc.value.ID
	}
	list := strings.Join(ids, ", ")

	for _, c := range chars {
		if at := c.value.Start.Location; at != "" && !known[at] && !l.locationsUnread {
			l.Problem(c.f.File(), c.f.Line("state.location"), "state.location",
				fmt.Sprintf("state.location %q is not a location (locations: %s)", at, list))
		}
	}
	for _, loc := range locs {
		listed := make(map[string]int)
		for i, item := range loc.f.List("connections") {
			if item.Found != "" {
				l.Problem(loc.f.File(), item.Line, "connections",
					fmt.Sprintf("connections[%d] must be a location id, found %s", i, item.Found))
				continue
			}
			to := item.Text
			switch first, dup := listed[to]; {
			case to == loc.value.ID:
				l.Problem(loc.f.File(), item.Line, "connections",
					fmt.Sprintf("connections: %q is this location itself (staying put is always allowed)", to))
			case !known[to] && !l.locationsUnread:
				l.Problem(loc.f.File(), item.Line, "connections",
					fmt.Sprintf("connections: %q is not a location (locations: %s)", to, list))
			case dup:
				l.Problem(loc.f.File(), item.Line, "connections",
					fmt.Sprintf("connections: %q is listed twice (first at line %d)", to, first))
			}
			if _, dup := listed[to]; !dup {
				listed[to] = item.Line
			}
		}
	}
}
