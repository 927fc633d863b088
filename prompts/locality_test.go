package prompts

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// reach classifies everything a narrative template can reach: every
// exported field of the data it is rendered with (IntentionData,
// ResolutionData: phases.renderPair accepts no other), of the types those
// hold, the methods of those types, and the functions of funcs.
//
// Out-of-order ticks (phases/ahead.go) render a location's prompts from a
// state holding only that location and the characters in it, and rely on
// the prompts being the ones lockstep renders from the whole world. That
// holds while each thing reached is one of:
//
//	authored: fixed by the simulation's files, the same at every tick
//	tick:     the number of the tick being run
//	here:     the location's own state as the tick starts
//	present:  a character in the location as the tick starts: their state,
//	          or their intention this tick (asked in the location)
//	call:     how the location's crowd is cut into calls, from who is present
//	func:     a function computing from its arguments alone
//
// A field reaching further (another location's state or characters, the
// whole world) would need the run to fall back to lockstep whenever a
// template uses it; there is no such field, so there is no such fallback.
// A field, method or function added without a line here fails the test
// until it is classified: adding a non-local one means adding that
// fallback too.
var reach = map[string]string{
	"prompts.IntentionData.Simulation": "authored+tick: SimulationData",
	"prompts.IntentionData.Character":  "present: the character whose intention is asked, in the location",
	"prompts.IntentionData.Location":   "here: the location the character is in",
	"prompts.IntentionData.Others":     "present: the others in that location as the tick starts",
	"prompts.IntentionData.Answer":     "authored: simulation.yaml's settings.answer (IntentionAnswer)",

	"prompts.ResolutionData.Simulation":      "authored+tick: SimulationData",
	"prompts.ResolutionData.Location":        "here: the location being resolved",
	"prompts.ResolutionData.Characters":      "present: this call's group of the characters there, with their intentions",
	"prompts.ResolutionData.Present":         "present: the ids of that group",
	"prompts.ResolutionData.Reachable":       "authored: the location and its connections (world.Simulation.Destinations)",
	"prompts.ResolutionData.Others":          "present: the rest of the characters there, resolved by the location's other calls",
	"prompts.ResolutionData.Call":            "call: this call's number among the location's",
	"prompts.ResolutionData.Calls":           "call: how many calls resolve the location (the crowd there and max_characters)",
	"prompts.ResolutionData.UpdatesLocation": "call: whether this is call 1",
	"prompts.ResolutionData.Answer":          "authored: simulation.yaml's settings.answer (ResolutionAnswer)",

	"prompts.IntentionAnswer.Intention":       "authored: simulation.yaml's settings.answer.intention",
	"prompts.ResolutionAnswer.MemoryEntry":    "authored: simulation.yaml's settings.answer.memory_entry",
	"prompts.ResolutionAnswer.InternalState":  "authored: simulation.yaml's settings.answer.internal_state",
	"prompts.ResolutionAnswer.ExternalIntent": "authored: simulation.yaml's settings.answer.external_intent",
	"prompts.ResolutionAnswer.Moment":         "authored: simulation.yaml's settings.answer.moment",
	"prompts.ResolutionAnswer.Description":    "authored: simulation.yaml's settings.answer.description",
	"prompts.Field.MaxLength":                 "authored: the field's max_length, or its default",
	"prompts.Field.Description":               "authored: the field's description, or its default",

	"prompts.SimulationData.ID":      "authored: simulation.yaml",
	"prompts.SimulationData.Title":   "authored: simulation.yaml",
	"prompts.SimulationData.Premise": "authored: simulation.yaml",
	"prompts.SimulationData.Tick":    "tick: the tick being run (committed ticks + 1), the same for every location of a round",

	"prompts.LocationData.ID":          "authored: the location's file",
	"prompts.LocationData.Name":        "authored: the location's file",
	"prompts.LocationData.Description": "authored: the location's file",
	"prompts.LocationData.Moment":      "here: the location's state",
	"prompts.LocationData.Scene":       "here: the location's state",
	"prompts.LocationData.Connections": "authored: the location's connections, by id and name; nothing of their state",

	"prompts.Link.ID":   "authored: a connected location's id",
	"prompts.Link.Name": "authored: a connected location's name",

	"prompts.CharacterData.ID":             "authored: the character's file",
	"prompts.CharacterData.Name":           "authored: the character's file",
	"prompts.CharacterData.Description":    "authored: the character's file",
	"prompts.CharacterData.Location":       "present: the character's state (the location itself)",
	"prompts.CharacterData.InternalState":  "present: the character's state",
	"prompts.CharacterData.ExternalIntent": "present: the character's state",
	"prompts.CharacterData.Memory":         "present: the character's state, its last entries",

	"world.MemoryEntry.Tick":  "present: an entry of a present character's memory",
	"world.MemoryEntry.Entry": "present: an entry of a present character's memory",

	"prompts.Other.ID":             "present: a character in the same location",
	"prompts.Other.Name":           "present: a character in the same location",
	"prompts.Other.ExternalIntent": "present: that character's state",

	"prompts.PresentCharacter.ID":             "present: a character in the location",
	"prompts.PresentCharacter.Name":           "present: a character in the location",
	"prompts.PresentCharacter.Description":    "present: a character in the location",
	"prompts.PresentCharacter.Location":       "present: the character's state (the location itself)",
	"prompts.PresentCharacter.InternalState":  "present: the character's state",
	"prompts.PresentCharacter.ExternalIntent": "present: the character's state",
	"prompts.PresentCharacter.Memory":         "present: the character's state, its last entries",
	"prompts.PresentCharacter.Intention":      "present: the character's intention this tick, asked in the location",

	"prompts.Bystander.ID":        "present: a character in the location whom another call resolves",
	"prompts.Bystander.Name":      "present: a character in the location whom another call resolves",
	"prompts.Bystander.Intention": "present: that character's intention this tick",

	"func join":   "func: strings.Join of its arguments",
	"func latest": "func: the last n entries of the list it is given",
}

// TestTemplateDataIsLocal walks, by reflection, everything a narrative
// template can reach (see reach) and fails on anything unclassified, on
// anything a template could reach without a type to classify (an
// interface, a function value, a channel), and on classifications of
// things that are no longer there.
func TestTemplateDataIsLocal(t *testing.T) {
	t.Parallel()
	found := map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(from string, typ reflect.Type)
	walk = func(from string, typ reflect.Type) {
		for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array {
			typ = typ.Elem()
		}
		switch typ.Kind() {
		case reflect.Map:
			walk(from, typ.Key())
			walk(from, typ.Elem())
			return
		case reflect.Interface, reflect.Func, reflect.Chan, reflect.UnsafePointer:
			t.Errorf("%s is a %s: a template could reach anything through it", from, typ)
			return
		case reflect.Struct:
		default:
			if typ.Name() != "" && typ.PkgPath() != "" && reflect.PointerTo(typ).NumMethod() > 0 {
				t.Errorf("%s: %s has methods, which a template can call: classify them", from, typ)
			}
			return
		}
		if seen[typ] {
			return
		}
		seen[typ] = true
		pt := reflect.PointerTo(typ)
		for i := range pt.NumMethod() { // text/template calls a value's methods, its pointer's when addressable
			name := typ.String() + "." + pt.Method(i).Name + "()"
			found[name] = true
			// A method's result is reached too; its receiver is classified.
			for o := range pt.Method(i).Type.NumOut() {
				walk(name, pt.Method(i).Type.Out(o))
			}
		}
		for i := range typ.NumField() {
			f := typ.Field(i)
			if f.Anonymous { // its exported fields are promoted
				walk(typ.String()+"."+f.Name, f.Type)
				continue
			}
			if !f.IsExported() {
				continue
			}
			name := typ.String() + "." + f.Name
			found[name] = true
			walk(name, f.Type)
		}
	}
	walk("IntentionData", reflect.TypeFor[IntentionData]())
	walk("ResolutionData", reflect.TypeFor[ResolutionData]())
	for name, fn := range funcs {
		found["func "+name] = true
		ft := reflect.TypeOf(fn)
		for o := range ft.NumOut() {
			walk("func "+name, ft.Out(o))
		}
	}

	scopes := []string{"authored", "tick", "here", "present", "call", "func", "authored+tick"}
	for _, name := range slices.Sorted(maps.Keys(found)) {
		why, ok := reach[name]
		if !ok {
			t.Errorf("%s: a template can reach it, and it is not classified in reach: if it depends on more than the location and the characters in it, out-of-order ticks need a lockstep fallback for templates that use it", name)
			continue
		}
		if scope, _, _ := strings.Cut(why, ":"); !slices.Contains(scopes, scope) {
			t.Errorf("%s is classified %q: not one of %v", name, why, scopes)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(reach)) {
		if !found[name] {
			t.Errorf("reach classifies %s, which no template can reach any more", name)
		}
	}
}
