package world_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
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
	want := world.CharacterState{Location: "hall", InternalState: "curious", ExternalIntent: "fix the clock"}
	if ada == nil || ada.Name != "Ada" || ada.Description != "A tinkerer." || !equalCharacterState(ada.Start, want) {
		t.Errorf("ada = %+v", ada)
	}
	hall := sim.Location("hall")
	if hall == nil || hall.Start != (world.LocationState{Moment: "Dusk.", Description: "Candles gutter."}) ||
		!slices.Equal(hall.Connections, []string{"cellar", "yard"}) {
		t.Errorf("hall = %+v", hall)
	}
	if sim.Character("nobody") != nil || sim.Location("nowhere") != nil {
		t.Error("lookup of an unknown id is not nil")
	}
	if problems, warnings := Lint(dir); problems != nil || warnings != nil {
		t.Errorf("Lint = %v, warnings %v, want nil", problems, warnings)
	}
	if sim.Warnings != nil {
		t.Errorf("Warnings = %v, want nil", sim.Warnings)
	}
}

// loadProblem is a simulation folder with changes to the valid one and
// every problem Lint reports of it, paths relative to the folder.
type loadProblem struct {
	name    string
	changes map[string]string
	want    []string
}

// TestLoadProblemsSyntax: a file that is not well-formed YAML is
// reported at the line the parser names.
func TestLoadProblemsSyntax(t *testing.T) {
	t.Parallel()
	checkLoadProblems(t, []loadProblem{
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
			name:    "only character file unreadable",
			changes: map[string]string{"characters/ada.yaml": "", "characters/bo.yaml": "id: [bo\n"},
			want:    []string{`characters/bo.yaml:2: malformed YAML: did not find expected ',' or ']'`},
		},
		{
			// The first document is still checked: both problems at once.
			name:    "second document malformed, first has an unknown field",
			changes: map[string]string{"characters/bo.yaml": "id: bo\nname: Bo\nmood: grim\ndescription: A cook.\nstate: {location: cellar}\n---\nid: [x\n"},
			want: []string{
				`characters/bo.yaml:3: unknown field "mood" (known fields: id, name, description, state)`,
				`characters/bo.yaml:7: malformed YAML: did not find expected ',' or ']'`,
			},
		},
	})
}

// TestLoadProblemsShape: a file is one object of known fields, each given
// once.
func TestLoadProblemsShape(t *testing.T) {
	t.Parallel()
	checkLoadProblems(t, []loadProblem{
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
			name:    "second document in a character file",
			changes: map[string]string{"characters/bo.yaml": validFiles["characters/bo.yaml"] + "---\nid: x\n"},
			want:    []string{`characters/bo.yaml:6: a second YAML document starts here: a character file holds one document; put each character in a file of its own in characters/`},
		},
		{
			name:    "second document in a location file, after a comment",
			changes: map[string]string{"locations/yard.yaml": "---\n" + validFiles["locations/yard.yaml"] + "# the kitchen\n---\nid: kitchen\nname: Kitchen\n"},
			want:    []string{`locations/yard.yaml:6: a second YAML document starts here: a location file holds one document; put each location in a file of its own in locations/`},
		},
		{
			name:    "second document in simulation.yaml",
			changes: map[string]string{"simulation.yaml": validFiles["simulation.yaml"] + "--- {id: other}\n"},
			want:    []string{`simulation.yaml:9: a second YAML document starts here: simulation.yaml holds one document, and a folder one simulation`},
		},
		{
			name:    "empty second document",
			changes: map[string]string{"characters/bo.yaml": validFiles["characters/bo.yaml"] + "---\n"},
			want:    []string{`characters/bo.yaml:6: a second YAML document starts here: a character file holds one document; put each character in a file of its own in characters/`},
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
	})
}

// TestLoadProblemsFields: required fields are present and their values of
// the right form.
func TestLoadProblemsFields(t *testing.T) {
	t.Parallel()
	checkLoadProblems(t, []loadProblem{
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
			// The one character file is broken: that, not an empty cast, is the problem.
			name:    "only character has no id",
			changes: map[string]string{"characters/ada.yaml": "", "characters/bo.yaml": "name: Bo\ndescription: A cook.\nstate: {location: cellar}\n"},
			want:    []string{`characters/bo.yaml:1: missing required field "id"`},
		},
		{
			name:    "unknown kind and missing premise",
			changes: map[string]string{"simulation.yaml": "id: test\nkind: narative\ntitle: Test\n"},
			want: []string{
				`simulation.yaml:1: missing required field "premise": a narrative simulation needs a world premise`,
				`simulation.yaml:2: kind "narative" must be one of narrative, chronicle, conquest, duel`,
			},
		},
	})
}

// TestLoadProblemsReferences: ids are unique and every id a file names
// exists.
func TestLoadProblemsReferences(t *testing.T) {
	t.Parallel()
	checkLoadProblems(t, []loadProblem{
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
	})
}

// TestLoadProblemsFolder: the simulation folder has its file and the
// folders its kind reads, with at least one file each.
func TestLoadProblemsFolder(t *testing.T) {
	t.Parallel()
	checkLoadProblems(t, []loadProblem{
		{
			name: "no locations",
			changes: map[string]string{
				"locations/hall.yaml": "", "locations/cellar.yaml": "", "locations/yard.yaml": "",
			},
			want: []string{`locations: no locations: a narrative simulation needs at least one locations/*.yaml`},
		},
		{
			name:    "no characters",
			changes: map[string]string{"characters/ada.yaml": "", "characters/bo.yaml": ""},
			want:    []string{`characters: no characters: a narrative simulation needs at least one characters/*.yaml`},
		},
		{
			name: "no characters and no locations",
			changes: map[string]string{
				"characters/ada.yaml": "", "characters/bo.yaml": "",
				"locations/hall.yaml": "", "locations/cellar.yaml": "", "locations/yard.yaml": "",
			},
			want: []string{
				`characters: no characters: a narrative simulation needs at least one characters/*.yaml`,
				`locations: no locations: a narrative simulation needs at least one locations/*.yaml`,
			},
		},
		{
			name:    "characters is not a folder",
			changes: map[string]string{"characters/ada.yaml": "", "characters/bo.yaml": "", "characters": "ada\n"},
			want:    []string{`characters: cannot read folder: not a directory`},
		},
		{
			// The characters' starting places may be in the folder that
			// could not be read: they are not reported as unknown.
			name: "locations is not a folder",
			changes: map[string]string{
				"locations/hall.yaml": "", "locations/cellar.yaml": "", "locations/yard.yaml": "", "locations": "hall\n",
			},
			want: []string{`locations: cannot read folder: not a directory`},
		},
		{
			name:    "missing simulation.yaml",
			changes: map[string]string{"simulation.yaml": ""},
			want:    []string{`simulation.yaml: missing: every simulation folder needs a simulation.yaml`},
		},
	})
}

// checkLoadProblems checks that Lint reports exactly each case's problems,
// and that Load fails with the first of them as a *LoadError.
func checkLoadProblems(t *testing.T, tests []loadProblem) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeSim(t, tt.changes)
			problems, _ := Lint(dir)
			if got := relative(dir, problems); !slices.Equal(got, tt.want) {
				t.Errorf("Lint:\n got  %q\n want %q", got, tt.want)
			}

			sim, err := Load(dir)
			if sim != nil || err == nil {
				t.Fatalf("Load = %v, %v; want nil and an error", sim, err)
			}
			if msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), ""); !strings.HasPrefix(msg, tt.want[0]) {
				t.Errorf("Load error = %q, want it to start with %q", msg, tt.want[0])
			}
			var le *world.LoadError
			if !errors.As(err, &le) || !strings.HasPrefix(le.File, dir) {
				t.Errorf("Load error %v does not reach a *LoadError naming a file in %s", err, dir)
			}
		})
	}
}

// relative is the messages of errs with the paths in dir made relative to it.
func relative(dir string, errs []error) []string {
	var out []string
	for _, e := range errs {
		out = append(out, strings.ReplaceAll(e.Error(), dir+string(filepath.Separator), ""))
	}
	return out
}

func TestLoadErrorFields(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, map[string]string{"characters/bo.yaml": "id: bo\nname: Bo\ndescription: A cook.\nstate:\n  location: kitchen\n"})
	_, err := Load(dir)
	var le *world.LoadError
	if !errors.As(err, &le) {
		t.Fatalf("Load error %v is not a *LoadError", err)
	}
	want := world.LoadError{File: filepath.Join(dir, "characters", "bo.yaml"), Line: 5, Field: "state.location"}
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
	var problems world.Problems
	if !errors.As(err, &problems) || len(problems) != 3 {
		t.Errorf("Load error %v: want Problems with 3 entries", err)
	}
}

func equalCharacterState(a, b world.CharacterState) bool {
	return a.Location == b.Location && a.InternalState == b.InternalState &&
		a.ExternalIntent == b.ExternalIntent && slices.Equal(a.Memory, b.Memory)
}

// TestLoadIgnoredFolders: a folder the simulation's kind does not read is a
// warning, never a problem, and its files are not read at all.
func TestLoadIgnoredFolders(t *testing.T) {
	t.Parallel()
	const (
		narrative = "folder ignored: a narrative simulation reads only simulation.yaml, characters/, evals/, locations/ and prompts/"
		game      = "folder ignored: a %s simulation reads only simulation.yaml and prompts/"
	)
	// A character file a narrative would refuse: a game must not read it.
	broken := "id: Bo!\nmood: grim\n---\nid: x\n"
	tests := []struct {
		name    string
		changes map[string]string
		empty   []string // empty folders to make
		kind    string
		want    []string // warnings, paths relative to the folder
	}{
		{
			name:    "conquest with characters and locations",
			changes: map[string]string{"simulation.yaml": "id: test\nkind: conquest\ntitle: T\n", "characters/bo.yaml": broken},
			kind:    KindConquest,
			want:    []string{"characters: " + fmt.Sprintf(game, "conquest"), "locations: " + fmt.Sprintf(game, "conquest")},
		},
		{
			name:    "duel with an empty characters folder and prompt overrides",
			changes: map[string]string{"simulation.yaml": "id: test\nkind: duel\ntitle: T\n", "prompts/duel_system.md": "x\n"},
			empty:   []string{"characters"},
			kind:    KindDuel,
			want: []string{"characters: folder ignored: a duel simulation reads only simulation.yaml, ships.yaml and prompts/",
				"locations: folder ignored: a duel simulation reads only simulation.yaml, ships.yaml and prompts/"},
		},
		{
			name: "chronicle with locations only",
			changes: map[string]string{"simulation.yaml": "id: test\nkind: chronicle\ntitle: T\npremise: P\n",
				"characters/ada.yaml": "", "characters/bo.yaml": ""},
			kind: KindChronicle,
			want: []string{"locations: " + fmt.Sprintf(game, "chronicle")},
		},
		{
			name:    "narrative with a misspelt folder and a hidden one",
			changes: map[string]string{"locaitons/attic.yaml": validFiles["locations/yard.yaml"], ".git/HEAD": "ref\n", "notes.md": "a file, not a folder\n"},
			empty:   []string{"prompts", "archive"},
			kind:    KindNarrative,
			want:    []string{"archive: " + narrative, "locaitons: " + narrative},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeSim(t, tt.changes)
			for _, name := range tt.empty {
				if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			problems, warnings := Lint(dir)
			if problems != nil || !slices.Equal(relative(dir, warnings), tt.want) {
				t.Errorf("Lint = %q, warnings\n got  %q\n want %q", relative(dir, problems), relative(dir, warnings), tt.want)
			}
			sim, err := Load(dir)
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if sim.Kind != tt.kind || !slices.Equal(relative(dir, sim.Warnings), tt.want) {
				t.Errorf("Load: kind %q, warnings %q", sim.Kind, relative(dir, sim.Warnings))
			}
			if tt.kind != KindNarrative && (sim.Characters != nil || sim.Locations != nil) {
				t.Errorf("a %s read %d characters and %d locations", tt.kind, len(sim.Characters), len(sim.Locations))
			}
			for _, w := range sim.Warnings {
				var le *world.LoadError
				if !errors.As(w, &le) || !strings.HasPrefix(le.File, dir) || le.Line != 0 {
					t.Errorf("warning %#v does not name a folder of the simulation", w)
				}
			}
		})
	}
}

// TestLintWarningsBesideProblems: warnings are listed even when the files
// have problems, so validate shows both at once.
func TestLintWarningsBesideProblems(t *testing.T) {
	t.Parallel()
	dir := writeSim(t, map[string]string{"simulation.yaml": "id: test\nkind: conquest\n"})
	problems, warnings := Lint(dir)
	want := filepath.Join(dir, "simulation.yaml") + `:1: missing required field "title"`
	if len(problems) != 1 || problems[0].Error() != want {
		t.Errorf("problems = %v, want %q", problems, want)
	}
	if len(warnings) != 2 || !strings.HasPrefix(warnings[0].Error(), filepath.Join(dir, "characters")+": folder ignored: a conquest") {
		t.Errorf("warnings = %v, want characters/ and locations/ ignored", warnings)
	}
	if _, err := Load(dir); err == nil || err.Error() != want {
		t.Errorf("Load = %v, want %q", err, want)
	}
}

// TestKindNamed: the kind simulation.yaml names, read even from a file
// that does not load; a file naming none (or not YAML) is a narrative, and
// with no file there is no kind.
func TestKindNamed(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"id: Not An Id!\nkind: duel\nno_such_key: 1\n", "duel"},
		{"id: x\nkind: toy\n", "toy"},
		{"id: x\n", KindNarrative},
		{"{{{", KindNarrative},
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), []byte(tc.file), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := testKinds.Named(dir); got != tc.want {
			t.Errorf("%q: kind %q, want %q", tc.file, got, tc.want)
		}
	}
	if got := testKinds.Named(t.TempDir()); got != "" {
		t.Errorf("no simulation.yaml: kind %q, want none", got)
	}
}
