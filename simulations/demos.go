// Package simulations holds the ready-to-run worlds of this folder; the
// game demos' settings are built into arbiter too, so that `arbiter arena
// conquest` plays the conquest demo from any folder.
package simulations

import "embed"

//go:embed conquest-demo/simulation.yaml duel-demo/simulation.yaml
var demos embed.FS

// Demo is the simulation.yaml of the built-in demo of the game kind
// (conquest-demo for conquest); false when the kind has none.
func Demo(kind string) ([]byte, bool) {
	b, err := demos.ReadFile(kind + "-demo/simulation.yaml")
	return b, err == nil
}
