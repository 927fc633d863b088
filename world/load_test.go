package world

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// validFiles is a small, correct simulation; each test case changes a few of
// its files. yard starts empty and has no way out (connections are directed).
var validFiles = map[string]string{
	"simulation.yaml": `id: test
kind: narrative
title: Test world
premise: |
  A hall, a cellar and a yard.
settings:
  tone: wry
  max_ticks: 3
`,
	"characters/ada.yaml": `id: ada
name: Ada
description: A tinkerer.
state:
  location: hall
  internal_state: curious
  external_intent: fix the clock
`,
	"characters/bo.yaml": `id: bo
name: Bo
description: A cook.
state:
  location: cellar
`,
	"locations/hall.yaml": `id: hall
name: The Hall
description: A long hall.
state:
  moment: Dusk.
  description: Candles gutter.
connections: [cellar, yard]
`,
	"locations/cellar.yaml": `id: cellar
name: The Cellar
description: Damp.
connections:
  - hall
`,
	"locations/yard.yaml": `id: yard
name: The Yard
description: Walled.
`,
	"README.md": "not a simulation file, ignored\n",
}

// writeSim writes validFiles with changes applied (an empty content deletes
// the file) into a fresh folder and returns the folder.
func writeSim(t testing.TB, changes map[string]string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "sim")
	files := make(map[string]string, len(validFiles))
	for name, content := range validFiles {
		files[name] = content
	}
	for name, content := range changes {
		if content == "" {
			delete(files, name)
		} else {
			files[name] = content
		}
	}
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadValid(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, nil)
	sim, err := Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if sim.ID != "test" || sim.Kind != KindNarrative || sim.Title != "Test world" || sim.Dir != dir {
		t.Errorf("simulation = %q %q %q %q", sim.ID, sim.Kind, sim.Title, sim.Dir)
	}
	if sim.Premise != "A hall, a cellar and a yard." {
		t.Errorf("Premise = %q, want the block text trimmed", sim.Premise)
	}
	if sim.Settings["tone"] != "wry" || sim.Settings["max_ticks"] != 3 {
		t.Errorf("Settings = %#v", sim.Settings)
	}
	var charIDs, locIDs []string
	for _, c := range sim.Characters {
		charIDs = append(charIDs, c.ID)
	}
	for _, l := range sim.Locations {
		locIDs = append(locIDs, l.ID)
	}
	if !slices.Equal(charIDs, []string{"ada", "bo"}) || !slices.Equal(locIDs, []string{"cellar", "hall", "yard"}) {
		t.Errorf("ids = %v %v, want sorted", charIDs, locIDs)
	}
	ada := sim.Character("ada")
	want := CharacterState{Location: "hall", InternalState: "curious", ExternalIntent: "fix the clock"}
	if ada == nil || ada.Name != "Ada" || ada.Description != "A tinkerer." || !equalCharacterState(ada.Start, want) {
		t.Errorf("ada = %+v", ada)
	}
	hall := sim.Location("hall")
	if hall == nil || hall.Start != (LocationState{Moment: "Dusk.", Description: "Candles gutter."}) ||
		!slices.Equal(hall.Connections, []string{"cellar", "yard"}) {
		t.Errorf("hall = %+v", hall)
	}
	if sim.Character("nobody") != nil || sim.Location("nowhere") != nil {
		t.Error("lookup of an unknown id is not nil")
	}
	if problems := Lint(dir); problems != nil {
		t.Errorf("Lint = %v, want nil", problems)
	}
}

func TestLoadProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		changes map[string]string
		want    []string // every problem Lint reports, paths relative to the folder
	}{
		{
			name: "malformed YAML",
			changes: map[string]string{"characters/ada.yaml": `id: ada
name: Ada
description: A tinkerer.
state:
  location: hall
  internal_state: curious
  external_intent: [fix the clock
`},
			want: []string{"characters/ada.yaml:7: malformed YAML: did not find expected ',' or ']'"},
		},
		{
			name: "malformed YAML: bad indentation",
			changes: map[string]string{"locations/yard.yaml": `id: yard
name: The Yard
description: Walled.
state:
  moment: Noon.
 description: Hot.
`},
			want: []string{"locations/yard.yaml:6: malformed YAML: did not find expected key"},
		},
		{
			name: "malformed YAML: scanner error",
			changes: map[string]string{"locations/yard.yaml": `id: yard
name: The Yard
description: Walled: high.
`},
			want: []string{"locations/yard.yaml:3: malformed YAML: mapping values are not allowed in this context"},
		},
		{
			name: "unknown field",
			changes: map[string]string{"characters/bo.yaml": `id: bo
nmae: Bo
description: A cook.
state:
  location: cellar
`},
			want: []string{
				`characters/bo.yaml:1: missing required field "name"`,
				`characters/bo.yaml:2: unknown field "nmae" (known fields: id, name, description, state)`,
			},
		},
		{
			name: "unknown nested field",
			changes: map[string]string{"characters/bo.yaml": `id: bo
name: Bo
description: A cook.
state:
  location: cellar
  mood: grim
`},
			want: []string{`characters/bo.yaml:6: unknown field "state.mood" (known fields: location, internal_state, external_intent)`},
		},
		{
			name: "missing id and name",
			changes: map[string]string{"characters/bo.yaml": `# a cook
description: A cook.
state:
  location: cellar
`},
			want: []string{
				`characters/bo.yaml:2: missing required field "id"`,
				`characters/bo.yaml:2: missing required field "name"`,
			},
		},
		{
			name: "missing starting location",
			changes: map[string]string{"characters/bo.yaml": `id: bo
name: Bo
description: A cook.
state:
  internal_state: tired
`},
			want: []string{`characters/bo.yaml:4: missing required field "state.location"`},
		},
		{
			name: "empty required values",
			changes: map[string]string{"characters/bo.yaml": `id: bo
name: ""
description:
state:
`},
			want: []string{
				`characters/bo.yaml:2: missing required field "name"`,
				`characters/bo.yaml:3: missing required field "description"`,
				`characters/bo.yaml:4: missing required field "state"`,
			},
		},
		{
			name: "bad id",
			changes: map[string]string{"characters/ada.yaml": `# Ada, the tinkerer
id: "Ada!"
name: Ada
description: A tinkerer.
state:
  location: hall
`},
			want: []string{`characters/ada.yaml:2: id "Ada!" must match [a-z0-9_-]+ (lower-case letters, digits, _ and -)`},
		},
		{
			name: "duplicate character id",
			changes: map[string]string{"characters/bo2.yaml": `id: bo
name: Bo again
description: A twin.
state:
  location: hall
`},
			want: []string{`characters/bo2.yaml:1: duplicate character id "bo": already used by characters/bo.yaml:1`},
		},
		{
			name: "duplicate location id",
			changes: map[string]string{"locations/yard2.yml": `name: Another yard
description: Also walled.
id: yard
`},
			want: []string{`locations/yard2.yml:3: duplicate location id "yard": already used by locations/yard.yaml:1`},
		},
		{
			name: "unknown starting location",
			changes: map[string]string{"characters/bo.yaml": `id: bo
name: Bo
description: A cook.
state:
  location: kitchen
`},
			want: []string{`characters/bo.yaml:5: state.location "kitchen" is not a location (locations: cellar, hall, yard)`},
		},
		{
			name: "unknown connection",
			changes: map[string]string{"locations/cellar.yaml": `id: cellar
name: The Cellar
description: Damp.
connections:
  - hall
  - vault
`},
			want: []string{`locations/cellar.yaml:6: connections: "vault" is not a location (locations: cellar, hall, yard)`},
		},
		{
			name: "connection to itself and twice",
			changes: map[string]string{"locations/cellar.yaml": `id: cellar
name: The Cellar
description: Damp.
connections:
  - cellar
  - hall
  - hall
`},
			want: []string{
				`locations/cellar.yaml:5: connections: "cellar" is this location itself (staying put is always allowed)`,
				`locations/cellar.yaml:7: connections: "hall" is listed twice (first at line 6)`,
			},
		},
		{
			name:    "connections not a list",
			changes: map[string]string{"locations/yard.yaml": "id: yard\nname: Yard\ndescription: Walled.\nconnections: hall\n"},
			want:    []string{`locations/yard.yaml:4: field "connections" must be a list, found text "hall"`},
		},
		{
			name:    "connection not an id",
			changes: map[string]string{"locations/yard.yaml": "id: yard\nname: Yard\ndescription: Walled.\nconnections:\n  - [hall]\n"},
			want:    []string{`locations/yard.yaml:5: connections[0] must be a location id, found a list`},
		},
		{
			name: "no locations",
			changes: map[string]string{
				"locations/hall.yaml": "", "locations/cellar.yaml": "", "locations/yard.yaml": "",
			},
			want: []string{`locations: no locations: a narrative simulation needs at least one locations/*.yaml`},
		},
		{
			name:    "missing simulation.yaml",
			changes: map[string]string{"simulation.yaml": ""},
			want:    []string{`simulation.yaml: missing: every simulation folder needs a simulation.yaml`},
		},
		{
			name:    "unknown kind and missing premise",
			changes: map[string]string{"simulation.yaml": "id: test\nkind: narative\ntitle: Test\n"},
			want: []string{
				`simulation.yaml:1: missing required field "premise": a narrative simulation needs a world premise`,
				`simulation.yaml:2: kind "narative" must be one of narrative, conquest, chronicle, duel`,
			},
		},
		{
			name:    "empty file",
			changes: map[string]string{"characters/bo.yaml": "# nothing yet\n"},
			want:    []string{`characters/bo.yaml: file is empty`},
		},
		{
			name:    "list instead of fields",
			changes: map[string]string{"characters/bo.yaml": "- id: bo\n"},
			want:    []string{`characters/bo.yaml:1: expected fields (key: value), found a list`},
		},
		{
			name:    "field given twice",
			changes: map[string]string{"characters/bo.yaml": "id: bo\nname: Bo\nname: Bob\ndescription: A cook.\nstate: {location: cellar}\n"},
			want:    []string{`characters/bo.yaml:3: field "name" is given twice (first at line 2)`},
		},
		{
			name: "problems in several files, in file order",
			changes: map[string]string{
				"simulation.yaml":     "id: Test\ntitle: T\npremise: P\n",
				"characters/ada.yaml": "id: ada\nname: Ada\ndescription: D\nstate: {location: attic}\n",
				"locations/yard.yaml": "id: yard\nname: Yard\ndescription: Walled.\nconnections: [moon]\n",
			},
			want: []string{
				`simulation.yaml:1: id "Test" must match [a-z0-9_-]+ (lower-case letters, digits, _ and -)`,
				`characters/ada.yaml:4: state.location "attic" is not a location (locations: cellar, hall, yard)`,
				`locations/yard.yaml:4: connections: "moon" is not a location (locations: cellar, hall, yard)`,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeSim(t, tt.changes)
			var got []string
			for _, p := range Lint(dir) {
				got = append(got, strings.ReplaceAll(p.Error(), dir+string(filepath.Separator), ""))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Lint:\n got  %q\n want %q", got, tt.want)
			}

			sim, err := Load(dir)
			if sim != nil || err == nil {
				t.Fatalf("Load = %v, %v; want nil and an error", sim, err)
			}
			if msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); !strings.HasPrefix(msg, tt.want[0]) {
				t.Errorf("Load error = %q, want it to start with %q", msg, tt.want[0])
			}
			var le *LoadError
			if !errors.As(err, &le) || !strings.HasPrefix(le.File, dir) {
				t.Errorf("Load error %v does not reach a *LoadError naming a file in %s", err, dir)
			}
		})
	}
}

func TestLoadErrorFields(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, map[string]string{"characters/bo.yaml": "id: bo\nname: Bo\ndescription: A cook.\nstate:\n  location: kitchen\n"})
	_, err := Load(dir)
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error %v is not a *LoadError", err)
	}
	want := LoadError{File: filepath.Join(dir, "characters", "bo.yaml"), Line: 5, Field: "state.location"}
	if le.File != want.File || le.Line != want.Line || le.Field != want.Field {
		t.Errorf("LoadError = %+v, want file %s line %d field %s", le, want.File, want.Line, want.Field)
	}
}

func TestLoadFolderProblems(t *testing.T) {
	t.Parallel()
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := Load(missing)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load(missing folder) = %v, want an error wrapping fs.ErrNotExist", err)
	}
	if want := missing + ": cannot open simulation folder: no such file or directory"; err == nil || err.Error() != want {
		t.Errorf("Load(missing folder) = %v, want %q", err, want)
	}

	file := filepath.Join(writeSim(t, nil), "simulation.yaml")
	if _, err := Load(file); err == nil || !strings.Contains(err.Error(), "not a folder") {
		t.Errorf("Load(file) = %v, want a 'not a folder' error", err)
	}
}

func TestProblemsMessage(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, map[string]string{"characters/bo.yaml": "id: bo\n"})
	_, err := Load(dir)
	want := filepath.Join(dir, "characters", "bo.yaml") + `:1: missing required field "name" (and 2 more problems)`
	if err == nil || err.Error() != want {
		t.Errorf("Load error = %v, want %q", err, want)
	}
	var problems Problems
	if !errors.As(err, &problems) || len(problems) != 3 {
		t.Errorf("Load error %v: want Problems with 3 entries", err)
	}
}

func equalCharacterState(a, b CharacterState) bool {
	return a.Location == b.Location && a.InternalState == b.InternalState &&
		a.ExternalIntent == b.ExternalIntent && slices.Equal(a.Memory, b.Memory)
}
