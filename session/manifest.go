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

// StartRun starts a run (ReadWrite): its manifest is what the session
// runs with (Manifest), the endpoint its calls go to without credentials
// (none when no endpoint is configured: a replay, a game of bots), and
// config, the effective configuration without secrets (ManifestConfig),
// and the names of the endpoints configured beside it (never a key).
// It is stored with the run's first commit, and each later commit of the
// session extends the run's ticks. A run that commits nothing stores
// nothing.
func (s *Session) StartRun(config map[string]string, endpoints []string) error {
	if s.store == nil || s.unlock == nil {
		return errors.New("session: StartRun needs a session opened ReadWrite")
	}
	m, err := s.Manifest()
	if err != nil {
		return err
	}
	if s.settings.LLM != nil {
		if e, err := s.settings.LLM(); err == nil {
			m.BaseURL = StoredURL(e.BaseURL)
		}
	}
	m.Config, m.Endpoints = config, endpoints
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	return s.store.StartRun(b)
}

// ManifestConfig is config, a value encoding/json writes as an object, as
// a run's manifest stores it: one dotted key a leaf ("llm.timeout"),
// strings as they are, any other value as its JSON. What config holds is
// stored: it is the caller's to leave its secrets out.
func ManifestConfig(config any) (map[string]string, error) {
	b, err := json.Marshal(config)
	if err != nil {
		return nil, fmt.Errorf("manifest: %w", err)
	}
	return manifest.Flatten(b)
}
