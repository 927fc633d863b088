package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
)

// manifestConfig is the configuration as a run's manifest stores it:
// flattened keys, no secret. The API key is only said to be set (not even
// the last characters config show prints), and the base URL loses its
// user information and query secrets.
func (c Config) manifestConfig() (map[string]string, error) {
	r := c.redacted()
	r.LLM.BaseURL = session.StoredURL(c.LLM.BaseURL)
	if c.LLM.APIKey != "" {
		r.LLM.APIKey = session.Redacted
	}
	return session.ManifestConfig(r)
}

// defaultManifestConfig is the built-in defaults as manifestConfig writes
// them, for status to show only the keys a run changed.
func defaultManifestConfig() (map[string]string, error) {
	v := defaultsViper()
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, err
	}
	kinds, err := readKinds(v)
	if err != nil {
		return nil, err
	}
	c.Kinds = kinds
	return c.manifestConfig()
}

// openRun opens the simulation in dir for a run of run, play or chat: the
// cassette of --record / --replay around its model client, the session,
// and the run's manifest (startRun). closeRun closes the session, then the
// cassette, and returns the first error; on an error nothing stays open.
func openRun(ctx context.Context, dir string, c *Config, tape CassetteOptions, set session.Settings) (s *session.Session, closeRun func() error, err error) {
	done, err := tape.use(&set)
	if err != nil {
		return nil, nil, err
	}
	if s, err = session.Open(ctx, dir, set, session.ReadWrite); err != nil {
		done()
		return nil, nil, err
	}
	closeRun = func() error {
		err := s.Close()
		if derr := done(); err == nil {
			err = derr
		}
		return err
	}
	if err := startRun(s, c); err != nil {
		closeRun()
		return nil, nil, err
	}
	return s, closeRun, nil
}

// keepFirst calls closeFn and keeps its error in *err unless *err already
// holds one: a deferred close whose failure must not hide the first error.
func keepFirst(err *error, closeFn func() error) {
	if cerr := closeFn(); *err == nil {
		*err = cerr
	}
}

// startRun starts the session's run with the effective configuration
// without secrets, which its manifest stores beside what the session
// decides (session.StartRun).
func startRun(s *session.Session, c *Config) error {
	config, err := c.manifestConfig()
	if err != nil {
		return err
	}
	var endpoints []string
	lists := c.endpointLists()
	for _, key := range slices.Sorted(maps.Keys(lists)) {
		for _, ep := range lists[key] {
			if name := cmp.Or(ep.Name, session.ShownURL(strings.TrimRight(ep.BaseURL, "/"))); !slices.Contains(endpoints, name) {
				endpoints = append(endpoints, name)
			}
		}
	}
	return s.StartRun(config, endpoints)
}

// writeManifest prints a run's manifest for status: one line per part,
// the configuration keys that differ from the built-in defaults.
func writeManifest(w io.Writer, m *session.Manifest) error {
	build := m.Arbiter.Version
	if m.Arbiter.Revision != "" {
		build += " rev " + m.Arbiter.Revision
	}
	if m.Arbiter.Modified {
		build += " (modified)"
	}
	fmt.Fprintf(w, "  arbiter:    %s, %s\n", build, m.Arbiter.Go)
	if m.BaseURL != "" {
		fmt.Fprintf(w, "  base URL:   %s\n", m.BaseURL)
	}
	if len(m.Endpoints) > 0 {
		fmt.Fprintf(w, "  endpoints:  %s\n", strings.Join(m.Endpoints, ", "))
	}
	if len(m.Models) > 0 {
		parts := make([]string, len(m.Models))
		for i, p := range m.Models {
			parts[i] = p.Phase + " " + p.Model
		}
		fmt.Fprintf(w, "  models:     %s\n", strings.Join(parts, ", "))
	}
	if m.Seed != nil {
		fmt.Fprintf(w, "  seed:       %d\n", *m.Seed)
	}
	files := func(label string, fs []session.ManifestFile) {
		for i, f := range fs {
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "  %-11s %s (%s) sha256:%s\n", label, f.Name, f.Source, f.SHA256[:min(12, len(f.SHA256))])
		}
	}
	files("templates:", m.Templates)
	files("schemas:", m.Schemas)
	def, err := defaultManifestConfig()
	if err != nil {
		return err
	}
	var changed []string
	for _, k := range slices.Sorted(maps.Keys(m.Config)) {
		if v, ok := def[k]; !ok || v != m.Config[k] {
			changed = append(changed, k+"="+m.Config[k])
		}
	}
	if len(changed) == 0 {
		fmt.Fprintln(w, "  config:     the defaults (status --json lists every key)")
		return nil
	}
	fmt.Fprintf(w, "  config:     %s (besides the defaults; status --json lists every key)\n", strings.Join(changed, ", "))
	return nil
}
