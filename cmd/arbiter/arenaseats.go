package main

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/arena"
	"github.com/arbiter-sim/arbiter/eval"
	"github.com/arbiter-sim/arbiter/session"
)

// seatConfigs gives cfg the model seats that play a configuration of
// their own: a variant of the eval suite that --seats names (variants, by
// player), or a templates folder and a model given by --seat-templates and
// --seat-model. Each configuration is the simulation opened with its
// settings, so a template that does not parse is named, with its file and
// line, before any game; seats of one configuration share its game, and
// configurations on one endpoint share a client (with the simulation's
// own model seats, on its endpoint). It returns each configured player's
// session.
func seatConfigs(opts *ArenaOptions, s *session.Session, set session.Settings, cfg *arena.Config, variants map[string]string) (map[string]*session.Session, error) {
	kind, err := s.ArenaGame()
	if err != nil {
		return nil, err
	}
	configured, err := directSeats(opts, kind.Players())
	if err != nil {
		return nil, err
	}
	if len(variants) > 0 {
		if err := suiteSeats(opts, s, variants, configured); err != nil {
			return nil, err
		}
	}
	if len(configured) == 0 {
		return nil, nil
	}
	eff, err := arena.Seats(kind, cfg.Seats)
	if err != nil {
		return nil, usageError(err)
	}
	logger := opts.Globals.logger(opts.IO)
	opened, clients := map[string]*session.Session{}, map[string]*session.Client{}
	out := map[string]*session.Session{}
	cfg.Models = map[string]arena.Model{}
	for _, p := range slices.Sorted(maps.Keys(configured)) {
		v := configured[p]
		if eff[p] != "model" {
			return nil, usageErrorf("seat %s is a %s: --seat-templates and --seat-model are for a model seat (--seats %s=model)", p, eff[p], p)
		}
		ss := opened[v.Name]
		if ss == nil {
			if ss, err = session.Load(s.Dir, variantSettings(opts.Config, set, v)); err != nil {
				return nil, fmt.Errorf("seat %s (model:%s): %w", p, v.Name, err)
			}
			opened[v.Name] = ss
		}
		g, err := ss.ArenaGame()
		if err != nil {
			return nil, err
		}
		c := clients[v.Endpoint]
		if c == nil {
			if c, err = ss.ArenaModelClient(logger); err != nil {
				return nil, fmt.Errorf("seat %s (model:%s): %w", p, v.Name, err)
			}
			clients[v.Endpoint] = c
		}
		cfg.Models[p] = arena.Model{Name: v.Name, Game: g, Client: c}
		out[p] = ss
	}
	cfg.Client = clients[""]
	return out, nil
}

// directSeats reads --seat-templates and --seat-model (PLAYER=VALUE; a
// player's folders in order) into one configuration per player, named
// by what it sets: model:DIR/ for a folder, model:@M for a model,
// model:DIR/@M for both.
func directSeats(opts *ArenaOptions, players []string) (map[string]eval.Variant, error) {
	out := map[string]eval.Variant{}
	read := func(flag string, values []string, set func(v *eval.Variant, value string)) error {
		for _, kv := range values {
			p, value, ok := strings.Cut(kv, "=")
			p, value = strings.TrimSpace(p), strings.TrimSpace(value)
			switch {
			case !ok || value == "":
				return usageErrorf("--%s %s: want PLAYER=VALUE (p1=...)", flag, kv)
			case !slices.Contains(players, p):
				return usageErrorf("--%s %s: %q is not a player (players: %s)", flag, kv, p, strings.Join(players, ", "))
			}
			v := out[p]
			set(&v, value)
			out[p] = v
		}
		return nil
	}
	if err := read("seat-templates", opts.SeatTemplates, func(v *eval.Variant, dir string) { v.Templates = append(v.Templates, dir) }); err != nil {
		return nil, err
	}
	if err := read("seat-model", opts.SeatModels, func(v *eval.Variant, m string) { v.Model = m }); err != nil {
		return nil, err
	}
	for p, v := range out {
		var dirs []string
		for _, d := range v.Templates {
			dirs = append(dirs, filepath.ToSlash(filepath.Clean(d))+"/")
		}
		v.Name = strings.Join(dirs, "+")
		if v.Model != "" {
			v.Name += "@" + v.Model
		}
		if !arena.ValidConfigName(v.Name) {
			return nil, usageErrorf("seat %s: %q holds a control character", p, v.Name)
		}
		out[p] = v
	}
	return out, nil
}

// suiteSeats adds to configured the variant each player of variants
// plays, from the eval suite (--suite, or the simulation's evals.yaml); a
// seat given a variant and a folder or model of its own is refused.
func suiteSeats(opts *ArenaOptions, s *session.Session, variants map[string]string, configured map[string]eval.Variant) error {
	for _, p := range slices.Sorted(maps.Keys(variants)) {
		if _, ok := configured[p]; ok {
			return usageErrorf("seat %s plays the variant %s: give a seat a variant or --seat-templates and --seat-model, not both", p, variants[p])
		}
	}
	path := opts.Suite
	if path == "" {
		path = filepath.Join(s.Dir, eval.DefaultSuite)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return usageErrorf("--seats names a variant (model:%s), and %s has no %s: give the suite with --suite FILE", variants[slices.Sorted(maps.Keys(variants))[0]], opts.Dir, eval.DefaultSuite)
		}
	}
	suite, err := eval.LoadSuite(path, modelPhases(s), s.KindAssertions())
	if err != nil {
		return usageError(err)
	}
	for _, p := range slices.Sorted(maps.Keys(variants)) {
		v, ok := suite.Variant(variants[p])
		if !ok {
			return usageErrorf("--seats: seat %s: no variant %q in %s (%s; model or model:%s plays the simulation as it is)", p, variants[p], path, suite.VariantNames(), eval.Baseline)
		}
		if len(v.Settings) > 0 {
			return usageErrorf("--seats: seat %s: the variant %s of %s lays settings over simulation.yaml's, and an arena's seats play one game, with the simulation's settings (a seat's variant gives templates, model, temperature, max tokens or endpoint)", p, v.Name, path)
		}
		configured[p] = v
	}
	return nil
}

// modelPhases are the phases of s's model calls, as an eval suite names
// them.
func modelPhases(s *session.Session) []string {
	if phases, err := s.CallPhases(); err == nil {
		return phases
	}
	var out []string
	for _, m := range s.Kind.Manifest().Models {
		out = append(out, m.Phase)
	}
	return out
}
