package session

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/simulations"
)

// ArenaGame is the kind of s as an arena plays it: a kind that can be
// reseated with another seed and seats (arena.Game). A kind that cannot is
// an *InputError naming the kinds an arena plays.
func (s *Session) ArenaGame() (arena.Game, error) {
	if g, ok := s.Kind.(arena.Game); ok {
		return g, nil
	}
	return nil, inputErrorf("%s is a %s simulation: an arena plays conquest or duel", s.Dir, s.Sim.Kind)
}

// LoadDemo loads the built-in demo game of kind (the settings of
// simulations/<kind>-demo, built into arbiter), from a folder of its own
// that done removes. ok is false when the kind has no built-in demo.
func LoadDemo(kind string, set Settings) (s *Session, done func(), ok bool, err error) {
	yaml, ok := simulations.Demo(kind)
	if !ok {
		return nil, nil, false, nil
	}
	tmp, err := os.MkdirTemp("", "arbiter-demo-")
	if err != nil {
		return nil, nil, true, err
	}
	done = func() { os.RemoveAll(tmp) }
	dir := filepath.Join(tmp, kind+"-demo")
	if err := os.Mkdir(dir, 0o755); err != nil {
		done()
		return nil, nil, true, err
	}
	if err := os.WriteFile(filepath.Join(dir, "simulation.yaml"), yaml, 0o644); err != nil {
		done()
		return nil, nil, true, err
	}
	if s, err = Load(dir, set); err != nil {
		done()
		return nil, nil, true, fmt.Errorf("built-in %s demo: %w", kind, err)
	}
	return s, done, true, nil
}
