package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"

	"go.yaml.in/yaml/v3"
)

// RegionCharacters is the most characters the generator puts in one region
// of connected locations, unless the shape is Connected. The engine once
// refused a world where more characters could gather in one location than
// one strict resolution schema holds (about 990), so worlds were written as
// regions of 500 that do not connect; it now resolves such a crowd in
// several calls, and the regions stay the default so that the figures
// measured before keep their meaning.
const RegionCharacters = 500

// Shape is the size of a generated world.
type Shape struct {
	Characters int `json:"characters"`
	Locations  int `json:"locations"`
	// Connected writes the world as one region, whatever its size: every
	// character can walk into every location (`arbiter bench --connected`).
	Connected bool `json:"connected,omitempty"`
}

func (s Shape) String() string {
	if s.Connected {
		return fmt.Sprintf("%d characters in %d connected locations", s.Characters, s.Locations)
	}
	return fmt.Sprintf("%d characters in %d locations", s.Characters, s.Locations)
}

// Check reports a shape the generator cannot write.
func (s Shape) Check() error {
	switch {
	case s.Characters < 1:
		return fmt.Errorf("a world needs at least 1 character, got %d", s.Characters)
	case s.Locations < 1:
		return fmt.Errorf("a world needs at least 1 location, got %d", s.Locations)
	case s.Characters > 1_000_000 || s.Locations > 1_000_000:
		return fmt.Errorf("%s: at most 1,000,000 of each", s)
	}
	return nil
}

// Regions is how many regions of connected locations the generator splits
// a world of this shape into: one when all its characters fit one region.
func (s Shape) Regions() int {
	if s.Connected {
		return 1
	}
	n := (s.Characters + RegionCharacters - 1) / RegionCharacters
	return max(1, min(n, s.Locations))
}

// The YAML files of a simulation folder, as world.Load reads them.
type (
	simulationFile struct {
		ID      string `yaml:"id"`
		Kind    string `yaml:"kind"`
		Title   string `yaml:"title"`
		Premise string `yaml:"premise"`
	}
	characterFile struct {
		ID          string         `yaml:"id"`
		Name        string         `yaml:"name"`
		Description string         `yaml:"description"`
		State       characterState `yaml:"state"`
	}
	characterState struct {
		Location       string `yaml:"location"`
		InternalState  string `yaml:"internal_state"`
		ExternalIntent string `yaml:"external_intent"`
	}
	locationFile struct {
		ID          string        `yaml:"id"`
		Name        string        `yaml:"name"`
		Description string        `yaml:"description"`
		State       locationState `yaml:"state"`
		Connections []string      `yaml:"connections"`
	}
	locationState struct {
		Moment      string `yaml:"moment"`
		Description string `yaml:"description"`
	}
)

// Generate writes a narrative simulation of shape s into dir, which must not
// exist yet or be empty: simulation.yaml, characters/*.yaml, locations/*.yaml.
// Locations are split into s.Regions() regions of consecutive locations;
// within a region they form a ring (every location connected both ways to the
// next) with one more two-way connection per location to a random other
// location of the region, so a character can reach every location of its
// region in a few moves. Character i starts in location i mod M, which
// spreads the characters evenly. The same shape and seed write the same
// files. When ctx ends, it stops between two files with ctx's error (a
// world of 300,000 characters takes minutes to write); the caller removes
// the folder.
func Generate(ctx context.Context, dir string, s Shape, seed uint64) error {
	if err := s.Check(); err != nil {
		return err
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("%s: not empty; a world is generated into a new folder", dir)
	}
	for _, sub := range []string{"characters", "locations"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(seed, uint64(s.Characters)<<32|uint64(s.Locations)))
	sim := simulationFile{
		ID:      fmt.Sprintf("bench-%d-%d", s.Characters, s.Locations),
		Kind:    "narrative",
		Title:   fmt.Sprintf("Benchmark world: %s", s),
		Premise: premise,
	}
	if err := writeYAML(ctx, filepath.Join(dir, "simulation.yaml"), sim); err != nil {
		return err
	}
	locs := locationIDs(s.Locations)
	for i, conns := range connect(s, rng) {
		l := locationFile{
			ID:          locs[i],
			Name:        fmt.Sprintf("%s %s", placeAdjectives[i%len(placeAdjectives)], placeNouns[(i/len(placeAdjectives))%len(placeNouns)]),
			Description: fmt.Sprintf(locationDescription, placeNouns[(i/len(placeAdjectives))%len(placeNouns)], i%97+3),
			State: locationState{
				Moment:      fmt.Sprintf("The bell over the %s has rung %d times since dusk.", placeNouns[(i/len(placeAdjectives))%len(placeNouns)], i%12+1),
				Description: "Lamps are lit; the floor is wet where people came in from the rain.",
			},
			Connections: make([]string, len(conns)),
		}
		for k, c := range conns {
			l.Connections[k] = locs[c]
		}
		if err := writeYAML(ctx, filepath.Join(dir, "locations", l.ID+".yaml"), l); err != nil {
			return err
		}
	}
	width := len(fmt.Sprint(s.Characters - 1))
	for i := range s.Characters {
		c := characterFile{
			ID:          fmt.Sprintf("c%0*d", width, i),
			Name:        fmt.Sprintf("%s %s", givenNames[i%len(givenNames)], familyNames[(i/len(givenNames))%len(familyNames)]),
			Description: fmt.Sprintf(characterDescription, trades[i%len(trades)], i%40+20, secrets[(i/3)%len(secrets)]),
			State: characterState{
				Location:       locs[i%s.Locations],
				InternalState:  fmt.Sprintf("Uneasy; owes %d crowns and suspects someone here knows it.", i%90+10),
				ExternalIntent: fmt.Sprintf("Find out who moved the %s before the tide turns.", placeNouns[i%len(placeNouns)]),
			},
		}
		if err := writeYAML(ctx, filepath.Join(dir, "characters", c.ID+".yaml"), c); err != nil {
			return err
		}
	}
	return nil
}

// locationIDs names m locations l0, l1, ... with a fixed width so that they
// sort in order.
func locationIDs(m int) []string {
	width := len(fmt.Sprint(m - 1))
	ids := make([]string, m)
	for i := range ids {
		ids[i] = fmt.Sprintf("l%0*d", width, i)
	}
	return ids
}

// connect returns the connections of every location, by index: a ring per
// region plus one random chord per location within its region, two-way.
func connect(s Shape, rng *rand.Rand) [][]int {
	conns := make([]map[int]bool, s.Locations)
	for i := range conns {
		conns[i] = map[int]bool{}
	}
	link := func(a, b int) {
		if a != b {
			conns[a][b], conns[b][a] = true, true
		}
	}
	regions := s.Regions()
	for r := range regions {
		lo, hi := r*s.Locations/regions, (r+1)*s.Locations/regions
		n := hi - lo
		for i := lo; i < hi; i++ {
			if n > 1 {
				link(i, lo+(i-lo+1)%n)
			}
			if n > 3 {
				link(i, lo+rng.IntN(n))
			}
		}
	}
	out := make([][]int, s.Locations)
	for i, m := range conns {
		for c := range m {
			out[i] = append(out[i], c)
		}
		slices.Sort(out[i])
	}
	return out
}

// writeYAML writes v to path as YAML, unless ctx has ended.
func writeYAML(ctx context.Context, path string, v any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := yaml.Marshal(v)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return os.WriteFile(path, b, 0o644)
}

// The texts of generated worlds: about as long as a hand-written world's, so
// that prompt sizes are realistic.
const premise = `Saltmere is a river port on the night the tide turns for the last time this
year. Every barge must pass the great lock before the water falls, the keeper of
the lock has vanished, and the harbour master has closed the roads until the
ledger of cargoes is found. Everyone in town owes someone, and everyone has a
reason to want the ledger found, or burned, before morning.`

const locationDescription = `A %s of tarred timber and wet brick, built when the port was young. Its
floor slopes toward the river, and on stormy nights the water comes up
through the boards. About %d people can stand inside without touching.`

const characterDescription = `A %s of %d who came to Saltmere to start over. Friendly to strangers,
careful with friends, and keeping a secret: %s.`

var (
	placeAdjectives = []string{"Old", "Low", "Salt", "Grey", "North", "Lamplit", "Sunken", "Tarred", "Narrow", "Upper", "Broken"}
	placeNouns      = []string{"wharf", "chandlery", "lock house", "tavern", "ropewalk", "customs shed", "chapel", "boathouse", "market", "granary", "tannery", "bridge"}
	givenNames      = []string{"Ada", "Bram", "Cora", "Dov", "Esme", "Finn", "Greta", "Hale", "Ines", "Jory", "Kit", "Lune", "Mags", "Nell", "Orrin", "Pell", "Quin"}
	familyNames     = []string{"Penrake", "Sallow", "Voss", "Hemlin", "Cray", "Dunmore", "Ashby", "Tolle", "Marsh", "Greaves", "Wick", "Hollow", "Brand"}
	trades          = []string{"rope maker", "barge pilot", "clerk", "fishwife", "smuggler", "priest", "carpenter", "customs man", "tavern keeper", "midwife"}
	secrets         = []string{"they read the keeper's ledger last spring", "they owe the Sallows a barge", "they saw a lamp in the old tunnel", "they are paid by the inspector", "they forged a cargo seal"}
)
