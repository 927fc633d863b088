package bench

import (
	"bytes"
	"context"
	"errors"
	"github.com/arbiter-sim/arbiter/internal/worldtest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/world"
)

// TestGenerateWritesTheWorldAsked: world.Load reads back exactly the shape
// asked for; every region is connected and holds at most RegionCharacters;
// every connection goes both ways; the engine's own checks (session.Load:
// prompt lint, the crowd limit) accept it.
func TestGenerateWritesTheWorldAsked(t *testing.T) {
	t.Parallel()
	for _, s := range []Shape{{Characters: 1, Locations: 1, Connected: false}, {Characters: 7, Locations: 3, Connected: false}, {Characters: 100, Locations: 10, Connected: false}, {Characters: 1200, Locations: 100, Connected: false}, {Characters: 3, Locations: 9, Connected: false}, {Characters: 1200, Locations: 100, Connected: true}} {
		t.Run(s.String(), func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "sim")
			if err := Generate(context.Background(), dir, s, 7); err != nil {
				t.Fatal(err)
			}
			sim, err := worldtest.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(sim.Characters) != s.Characters || len(sim.Locations) != s.Locations {
				t.Fatalf("loaded %d characters in %d locations, want %s", len(sim.Characters), len(sim.Locations), s)
			}
			region := regionsOf(sim)
			if got := len(distinct(region)); got != s.Regions() {
				t.Errorf("%d connected regions, want %d", got, s.Regions())
			}
			perRegion := map[int]int{}
			for _, c := range sim.Characters {
				perRegion[region[c.Start.Location]]++
			}
			for r, n := range perRegion {
				if n > RegionCharacters && !s.Connected {
					t.Errorf("region %d holds %d characters, more than %d", r, n, RegionCharacters)
				}
			}
			for _, l := range sim.Locations {
				for _, c := range l.Connections {
					if !sim.Reachable(c, l.ID) {
						t.Errorf("%s connects to %s but not back", l.ID, c)
					}
				}
			}
			if _, err := session.Load(dir, session.Settings{Sections: benchPhases()}); err != nil {
				t.Errorf("the engine refuses the generated world: %v", err)
			}
		})
	}
}

// regionsOf numbers the connected regions of sim's locations.
func regionsOf(sim *world.Simulation) map[string]int {
	region := map[string]int{}
	n := 0
	for _, l := range sim.Locations {
		if _, seen := region[l.ID]; seen {
			continue
		}
		region[l.ID] = n
		for queue := []string{l.ID}; len(queue) > 0; queue = queue[1:] {
			for _, c := range sim.Location(queue[0]).Connections {
				if _, seen := region[c]; !seen {
					region[c] = n
					queue = append(queue, c)
				}
			}
		}
		n++
	}
	return region
}

func distinct(m map[string]int) map[int]bool {
	out := map[int]bool{}
	for _, v := range m {
		out[v] = true
	}
	return out
}

func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	s := Shape{Characters: 60, Locations: 12}
	for _, dir := range []string{a, b} {
		if err := Generate(context.Background(), dir, s, 3); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"simulation.yaml", "locations/l00.yaml", "locations/l11.yaml", "characters/c59.yaml"} {
		x, err := os.ReadFile(filepath.Join(a, f))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, f))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two generations with the same seed", f)
		}
	}
}

func TestGenerateRefuses(t *testing.T) {
	t.Parallel()
	full := t.TempDir()
	if err := os.WriteFile(filepath.Join(full, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dir   string
		shape Shape
		want  string
	}{
		{"no characters", filepath.Join(t.TempDir(), "w"), Shape{Characters: 0, Locations: 1}, "at least 1 character"},
		{"no locations", filepath.Join(t.TempDir(), "w"), Shape{Characters: 1, Locations: 0}, "at least 1 location"},
		{"too large", filepath.Join(t.TempDir(), "w"), Shape{Characters: 2_000_000, Locations: 10}, "at most 1,000,000"},
		{"folder not empty", full, Shape{Characters: 1, Locations: 1}, "not empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Generate(context.Background(), tc.dir, tc.shape, 1)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Generate(%s) = %v, want an error saying %q", tc.shape, err, tc.want)
			}
		})
	}
}

// A world of 300,000 characters takes minutes to write: an interrupt stops
// Generate before its next file.
func TestGenerateStopsWhenCtxEnds(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "w")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Generate(ctx, dir, Shape{Characters: 50, Locations: 5}, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate after ctx ended = %v, want context.Canceled", err)
	}
	for _, sub := range []string{"characters", "locations"} {
		if files, _ := os.ReadDir(filepath.Join(dir, sub)); len(files) > 0 {
			t.Errorf("%s: %d files written after ctx ended", sub, len(files))
		}
	}
}
