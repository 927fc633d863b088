package duel

import (
	"bytes"
	_ "embed"
	"fmt"
	"maps"
	"slices"

	"github.com/arbiter-sim/arbiter/engine"
	"go.yaml.in/yaml/v3"
)

//go:embed ships.yaml
var shipsYAML []byte

// CatalogFile names the embedded catalog in errors.
const CatalogFile = "games/duel/ships.yaml"

// custom holds the handlers of the catalog's CUSTOM powers.
var custom = map[string]engine.CustomFunc{
	// Ark of Knowledge: 1 line for every 2 other ships its owner has.
	"ark_scaling": func(s *engine.State, src *engine.Ship, _ engine.Modifiers) []engine.Effect {
		n := (len(s.Fleet(src.Owner)) - 1) / 2
		if n < 1 {
			return nil
		}
		return []engine.Effect{{Type: engine.GainLines, Amount: n}}
	},
}

// ParseCatalog reads a catalog of ships (the format of ships.yaml) and
// checks it; name is the file named in errors. Unknown fields are errors.
func ParseCatalog(name string, data []byte) (*engine.Catalog, error) {
	var f struct {
		Ships []engine.Definition `yaml:"ships"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	cat, err := engine.NewCatalog(f.Ships, slices.Sorted(maps.Keys(custom)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return cat, nil
}

// Catalog is the duel's embedded catalog of ships.
func Catalog() (*engine.Catalog, error) { return ParseCatalog(CatalogFile, shipsYAML) }
