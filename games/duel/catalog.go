package duel

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/world"
	"go.yaml.in/yaml/v3"
)

//go:embed ships.yaml
var shipsYAML []byte

// CatalogFile names the embedded catalog in errors.
const CatalogFile = "games/duel/ships.yaml"

// ShipsFile is a simulation's own catalog, beside its simulation.yaml:
// its ships are merged over the built-in ones (LoadCatalog).
const ShipsFile = "ships.yaml"

// custom holds the handlers of the catalog's CUSTOM powers.
var custom = map[string]engine.CustomFunc{
	// Ark of Knowledge: 1 line for every 2 other ships its owner has
	// (with a Hive, the ships in its owner's upgrades count too).
	"ark_scaling": func(s *engine.State, src *engine.Ship, m engine.Modifiers) []engine.Effect {
		n := (s.Count(src.Owner, m.UpgradesCount(src.Owner)) - 1) / 2
		if n < 1 {
			return nil
		}
		return []engine.Effect{{Type: engine.GainLines, Amount: n}}
	},
}

// parseShips reads the definitions of a catalog file (the format of
// ships.yaml). Unknown fields are errors. A power that writes baseAmount
// has one, even when it writes null: the seed's check is `!== undefined`.
func parseShips(name string, data []byte) ([]engine.Definition, error) {
	var f struct {
		Ships []engine.Definition `yaml:"ships"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	// The same document again, as maps, only to see which keys were
	// written: a null decodes to a nil pointer, as if it were absent.
	var keys struct {
		Ships []struct {
			Powers []map[string]any `yaml:"powers"`
		} `yaml:"ships"`
	}
	if err := yaml.Unmarshal(data, &keys); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	for i := range min(len(f.Ships), len(keys.Ships)) {
		for j := range min(len(f.Ships[i].Powers), len(keys.Ships[i].Powers)) {
			if _, ok := keys.Ships[i].Powers[j]["baseAmount"]; ok {
				f.Ships[i].Powers[j].BaseAmountSet = true
			}
		}
	}
	return f.Ships, nil
}

// newCatalog checks defs; every problem is an error of its own, naming
// file, ship and power.
func newCatalog(file string, defs []engine.Definition) (*engine.Catalog, error) {
	cat, err := engine.NewCatalog(defs, slices.Sorted(maps.Keys(custom)))
	if err == nil {
		return cat, nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			errs = append(errs, fmt.Errorf("%s: %w", file, e))
		}
	} else {
		errs = append(errs, fmt.Errorf("%s: %w", file, err))
	}
	return nil, errors.Join(errs...)
}

// ParseCatalog reads a catalog of ships (the format of ships.yaml) and
// checks it; name is the file named in errors.
func ParseCatalog(name string, data []byte) (*engine.Catalog, error) {
	defs, err := parseShips(name, data)
	if err != nil {
		return nil, err
	}
	return newCatalog(name, defs)
}

// Catalog is the duel's embedded catalog of ships.
func Catalog() (*engine.Catalog, error) { return ParseCatalog(CatalogFile, shipsYAML) }

// LoadCatalog is the catalog of the duel simulation in dir: the built-in
// ships, with the ships of dir/ships.yaml, when there is one, merged over
// them by id (a ship of a built-in id replaces it, in its place; others are
// added after). The merged catalog is checked as a whole, and its problems
// name dir/ships.yaml, the ship and the power (the built-in ships are
// checked by the tests).
func LoadCatalog(dir string) (*engine.Catalog, error) {
	defs, err := parseShips(CatalogFile, shipsYAML)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ShipsFile)
	if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
		return newCatalog(CatalogFile, defs)
	}
	data, err := world.ReadFile(dir, path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	own, err := parseShips(path, data)
	if err != nil {
		return nil, err
	}
	if len(own) == 0 {
		return nil, fmt.Errorf("%s: no ships: write ships: [...] with the ships to add or replace, or remove the file", path)
	}
	seen := map[string]bool{}
	for _, d := range own {
		if seen[d.ID] {
			return nil, fmt.Errorf("%s: %w", path, &engine.DefinitionError{Ship: d.ID, Power: -1, Msg: "defined twice"})
		}
		seen[d.ID] = true
		if i := slices.IndexFunc(defs, func(b engine.Definition) bool { return b.ID == d.ID }); i >= 0 {
			defs[i] = d
		} else {
			defs = append(defs, d)
		}
	}
	return newCatalog(path, defs)
}
