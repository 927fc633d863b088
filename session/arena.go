package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/manifest"
	"github.com/arbiter-sim/arbiter/simulations"
)

// ArenaGame is the kind of s as an arena plays it: a kind that can be
// reseated with another seed and seats (arena.Game). A kind that cannot is
// an *InputError naming the kinds an arena plays.
func (s *Session) ArenaGame() (arena.Game, error) {
	if g, ok := s.Kind.(arena.Game); ok {
		return g, nil
	}
	return nil, inputErrorf("%s is a %s simulation: an arena plays %s", s.Dir, s.Sim.Kind, orList(ArenaKinds()))
}

// ArenaKinds lists the registered kinds an arena plays (their Kind is an
// arena.Game), in kind order.
func ArenaKinds() []string {
	var out []string
	for _, name := range Kinds() {
		if o, _ := opener(name); isArena(o.Kind) {
			out = append(out, name)
		}
	}
	return out
}

func isArena(k Kind) bool {
	_, ok := k.(arena.Game)
	return ok
}

// ArenaSettings is a digest of what decides how an arena of s plays,
// beyond its seeds and seats (arena.Identity.Settings): the simulation's
// settings and, when a seat is a model (models), the model seats'
// parameters and the prompt templates and schemas they are sent, by
// content; and those of each model seat that plays a configuration of its
// own (seats: the simulation opened with its settings, by player). The
// same simulation and configuration give the same digest on every
// machine, whatever folder the simulation sits in.
func (s *Session) ArenaSettings(models bool, seats map[string]*Session) (string, error) {
	digest, err := s.arenaSettings(models)
	if err != nil || len(seats) == 0 {
		return digest, err
	}
	parts := map[string]string{"": digest}
	for p, seat := range seats {
		if parts[p], err = seat.arenaSettings(true); err != nil {
			return "", err
		}
	}
	b, err := json.Marshal(parts)
	if err != nil {
		return "", err
	}
	return manifest.Hash(b), nil
}

func (s *Session) arenaSettings(models bool) (string, error) {
	type file struct{ Name, SHA256 string }
	what := struct {
		Settings  map[string]any
		Models    []manifest.PhaseModel `json:",omitempty"`
		Section   SectionConfig         `json:",omitempty"`
		Override  *PhaseOverride        `json:",omitempty"`
		Templates []file                `json:",omitempty"`
		Schemas   []file                `json:",omitempty"`
	}{Settings: s.Sim.Settings}
	if models {
		m, err := s.Manifest()
		if err != nil {
			return "", err
		}
		what.Models, what.Override = m.Models, &s.settings.Override
		if o, _ := opener(s.Sim.Kind); o.Section != nil {
			what.Section = s.settings.Sections[o.Section.Key]
		}
		for _, f := range m.Templates {
			what.Templates = append(what.Templates, file{f.Name, f.SHA256})
		}
		for _, f := range m.Schemas {
			what.Schemas = append(what.Schemas, file{f.Name, f.SHA256})
		}
	}
	b, err := json.Marshal(what)
	if err != nil {
		return "", fmt.Errorf("arena settings of %s: %w", s.Dir, err)
	}
	return manifest.Hash(b), nil
}

// Demos are the kinds an arena plays that have a demo built into arbiter
// (LoadDemo), in kind order.
func Demos() []string {
	var out []string
	for _, name := range Kinds() {
		o, _ := opener(name)
		if _, ok := simulations.Demo(name); ok && isArena(o.Kind) {
			out = append(out, name)
		}
	}
	return out
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

// ArenaClient gives cfg the model client its games share when a seat of
// cfg.Seats is a model that plays with the simulation's own settings (not
// one of cfg.Models), unless cfg.Client is set already; models says
// whether any seat is a model. Seats that are no seats of the kind are an
// *InputError.
func (s *Session) ArenaClient(cfg *arena.Config, logger *slog.Logger) (models bool, err error) {
	g, err := s.ArenaGame()
	if err != nil {
		return false, err
	}
	eff, err := arena.Seats(g, cfg.Seats)
	if err != nil {
		return false, &InputError{Err: err}
	}
	own := false // a model seat plays with the simulation's settings
	for p, seat := range eff {
		if _, configured := cfg.Models[p]; seat == "model" && !configured {
			own = true
		}
	}
	if !own || cfg.Client != nil {
		return own || len(cfg.Models) > 0, nil
	}
	cfg.Client, err = s.ArenaModelClient(logger)
	return true, err
}

// ArenaModelClient is a client for an arena's model seats, built from the
// session's endpoint without entity history (games in parallel would mix
// theirs), logging retries to logger.
func (s *Session) ArenaModelClient(logger *slog.Logger) (*llm.Client, error) {
	if s.settings.LLM == nil {
		return nil, errors.New("session: an arena's model seats need Settings.LLM")
	}
	e, err := s.settings.LLM()
	if err != nil {
		return nil, err
	}
	e.Depth, e.Logger = 0, logger
	c, err := llm.New(e)
	if err != nil {
		return nil, &InputError{Err: err}
	}
	return c, nil
}

// orList is names as a sentence says them: "a", "a or b", "a, b or c";
// "no registered kind" for none.
func orList(names []string) string {
	switch len(names) {
	case 0:
		return "no registered kind"
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
