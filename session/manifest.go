package session

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/arbiter-sim/arbiter/manifest"
)

// Manifest describes what the session runs with, as far as the simulation
// decides it: the arbiter build, the kind, the model of each of its phases,
// the prompt templates it renders and the schemas it sends (by hash, the
// overrides of the simulation's prompts/ included), and a game's seed. The
// caller adds the endpoint and the configuration, which are its own.
func (s *Session) Manifest() (*manifest.Manifest, error) {
	m := &manifest.Manifest{Arbiter: manifest.ReadBuild(), Kind: s.Sim.Kind, Models: []manifest.PhaseModel{},
		Templates: []manifest.File{}, Schemas: []manifest.File{}, Config: map[string]string{}}
	part := s.Kind.Manifest()
	if s.needsModel() {
		m.Models = append(m.Models, part.Models...)
	}
	m.Seed = part.Seed
	templates, named := part.Templates, part.Schemas
	for _, name := range templates {
		digest := s.prompts.Digest(name)
		if digest == "" {
			return nil, fmt.Errorf("manifest: the %s kind uses prompt template %s, which the renderer does not serve", s.Sim.Kind, name)
		}
		m.Templates = append(m.Templates, manifest.File{Name: name, Source: s.prompts.Source(name), SHA256: digest})
	}
	for _, n := range named {
		b, err := n.Pretty()
		if err != nil {
			return nil, fmt.Errorf("manifest: %w", err)
		}
		m.Schemas = append(m.Schemas, manifest.File{Name: n.Name, Source: "generated", SHA256: manifest.Hash(b)})
	}
	return m, nil
}

// StartRun makes m the manifest of this run (ReadWrite): it is stored with
// the run's first commit, and each later commit of the session extends the
// run's ticks. A run that commits nothing stores nothing.
func (s *Session) StartRun(m *manifest.Manifest) error {
	if s.store == nil || s.unlock == nil {
		return errors.New("session: StartRun needs a session opened ReadWrite")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return s.store.StartRun(b)
}
