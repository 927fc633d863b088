package world_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/world"
)

// FuzzLint feeds arbitrary text to the loader as a character and a location
// file: it must never panic, and every problem must name a file of the
// simulation.
func FuzzLint(f *testing.F) {
	for _, seed := range []string{
		validFiles["characters/ada.yaml"],
		validFiles["locations/hall.yaml"],
		"id: &a x\nname: *a\nstate: {location: *a}\n",
		"<<: {id: x}\n",
		"- [a, {b: c}]\n",
		"id: [\n",
		"connections: [~, '', [x], {y: z}]\n",
		validFiles["characters/ada.yaml"] + "---\nid: x\n",
		"id: x\n---\nid: [\n",
		"id: x\n...\n---\n",
	} {
		f.Add(seed)
	}
	dir := writeSim(f, nil)
	f.Fuzz(func(t *testing.T, content string) {
		for _, name := range []string{"characters/ada.yaml", "locations/hall.yaml"} {
			path := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			problems, warnings := Lint(dir)
			if len(warnings) > 0 {
				t.Errorf("warnings %v: a narrative reads both folders", warnings)
			}
			for _, p := range problems {
				le, ok := p.(*world.LoadError)
				if !ok || !strings.HasPrefix(le.File, dir) || le.Msg == "" {
					t.Errorf("problem %#v does not name a file of the simulation", p)
				}
			}
			if err := os.WriteFile(path, []byte(validFiles[name]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	})
}
