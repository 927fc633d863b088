package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// The kinds' own sections of the configuration: each kind declares its
// section (session.Section: its key, defaults, integer bounds and value),
// and the CLI reads, checks, prints and stores it beside the shared keys
// without knowing which kind it is.

// allDefaults are the built-in values of every key: the shared ones
// (defaults) and each registered kind's section's.
func allDefaults() map[string]any {
	out := maps.Clone(defaults)
	for _, sec := range session.Sections() {
		for k, v := range sec.Defaults {
			out[sec.Key+"."+k] = v
		}
	}
	return out
}

// allIntSettings are the integer keys of the configuration and their
// bounds: the shared ones (intSettings) and each kind's section's.
func allIntSettings() []intSetting {
	out := slices.Clone(intSettings)
	for _, sec := range session.Sections() {
		for _, b := range sec.Ints {
			out = append(out, intSetting{sec.Key + "." + b.Key, b.Min, b.Max})
		}
	}
	return out
}

// readKinds reads each kind's section from v: the sub-tree of its key,
// every key of which has its default in v, into the section's value.
func readKinds(v *viper.Viper) (map[string]session.SectionConfig, error) {
	out := map[string]session.SectionConfig{}
	for _, sec := range session.Sections() {
		sub := viper.New()
		for k := range sec.Defaults {
			sub.Set(k, v.Get(sec.Key+"."+k))
		}
		c := sec.New()
		if err := sub.Unmarshal(c); err != nil {
			return nil, fmt.Errorf("%s: %w", sec.Key, err)
		}
		out[sec.Key] = c
	}
	return out, nil
}

// kindPhase is one phase of a kind's section: key is where it sits
// ("<section>.<phase>"; the section's key for a section of one phase), name
// the phase's, and mode and endpoints whether the section reads those keys
// of it.
type kindPhase struct {
	*session.PhaseConfig
	key, name       string
	mode, endpoints bool
}

// kindPhases are the phases of every kind's section, in key order.
func (c *Config) kindPhases() []kindPhase {
	var out []kindPhase
	for _, sec := range session.Sections() {
		kc, ok := c.Kinds[sec.Key]
		if !ok {
			continue
		}
		for name, p := range kc.Phases() {
			key, below := sec.Key, ""
			if name != "" {
				key, below = sec.Key+"."+name, name+"."
			}
			_, mode := sec.Defaults[below+"mode"]
			_, endpoints := sec.Defaults[below+"endpoints"]
			out = append(out, kindPhase{PhaseConfig: p, key: key, name: name, mode: mode, endpoints: endpoints})
		}
	}
	slices.SortFunc(out, func(a, b kindPhase) int { return strings.Compare(a.key, b.key) })
	return out
}

// checkKinds checks the kinds' sections: each phase's temperature,
// max_tokens and mode, then what each section checks of its own keys.
func (c *Config) checkKinds() []error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	for _, p := range c.kindPhases() {
		check(p.Temperature >= 0 && p.Temperature <= 2, "config %s.temperature: must be within 0..2, got %g", p.key, p.Temperature)
		check(p.MaxTokens <= c.LLM.MaxOutputTokens, "config %s.max_tokens: %d is more than llm.max_output_tokens %d", p.key, p.MaxTokens, c.LLM.MaxOutputTokens)
		if p.mode {
			check(p.Mode == session.ModeLive || p.Mode == session.ModeBatch, "%s: %q is not a phase mode: %s (live calls) or %s (one Batch API job per tick, as run --batch)",
				c.where(p.key+".mode"), p.Mode, session.ModeLive, session.ModeBatch)
		}
	}
	for _, sec := range session.Sections() {
		if kc, ok := c.Kinds[sec.Key]; ok {
			errs = append(errs, kc.Check(c.where)...)
		}
	}
	return errs
}

// batchPhases are the phases whose mode is batch.
func (c *Config) batchPhases() []string {
	var out []string
	for _, p := range c.kindPhases() {
		if p.mode && p.Mode == session.ModeBatch {
			out = append(out, p.name)
		}
	}
	return out
}

// batchAll sets every phase that has a mode in batch mode (run --batch),
// as the run's manifest then records it.
func (c *Config) batchAll() {
	for _, p := range c.kindPhases() {
		if p.mode {
			p.Mode = session.ModeBatch
		}
	}
}

// endpointLists are llm.endpoints and every phase's own, by key.
func (c *Config) endpointLists() map[string][]EndpointConfig {
	out := map[string][]EndpointConfig{"llm.endpoints": c.LLM.Endpoints}
	for _, p := range c.kindPhases() {
		if p.endpoints {
			out[p.key+".endpoints"] = p.Endpoints
		}
	}
	return out
}

// endpointListKeys are the keys that hold a list of endpoints: llm's and
// each phase's that reads one.
func endpointListKeys() []string {
	out := []string{"llm.endpoints"}
	for k := range allDefaults() {
		if strings.HasSuffix(k, ".endpoints") && k != "llm.endpoints" {
			out = append(out, k)
		}
	}
	slices.Sort(out[1:])
	return out
}

// cloneKinds is a copy of the kinds' sections that may be changed.
func (c *Config) cloneKinds() map[string]session.SectionConfig {
	out := make(map[string]session.SectionConfig, len(c.Kinds))
	for k, kc := range c.Kinds {
		out[k] = kc.Clone()
	}
	return out
}

// tree is c as config show prints it and a manifest stores it: the shared
// keys and each kind's section under its key.
func (c Config) tree() map[string]any {
	out := map[string]any{"llm": c.LLM, "run": c.Run, "otel": c.OTel, "prices": c.Prices}
	for k, kc := range c.Kinds {
		out[k] = kc
	}
	return out
}

// MarshalJSON writes c's tree.
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.tree()) }

// MarshalYAML writes c's tree: the shared keys first, then the kinds'
// sections in key order.
func (c Config) MarshalYAML() (any, error) {
	tree := c.tree()
	keys := []string{"llm", "run", "otel", "prices"}
	for _, sec := range session.Sections() {
		if _, ok := tree[sec.Key]; ok {
			keys = append(keys, sec.Key)
		}
	}
	n := &yaml.Node{Kind: yaml.MappingNode}
	for _, k := range keys {
		var v yaml.Node
		if err := v.Encode(tree[k]); err != nil {
			return nil, err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &v)
	}
	return n, nil
}

// kindFlags adds to flags the flags that the kinds' sections give command
// (session.SectionFlag) and returns them with the keys they set.
func kindFlags(command string, flags map[string]string, add func(f session.SectionFlag, key string, def any)) map[string]string {
	out := maps.Clone(flags)
	for _, sec := range session.Sections() {
		for _, f := range sec.Flags {
			if f.Command == command {
				out[f.Name] = sec.Key + "." + f.Key
				add(f, sec.Key+"."+f.Key, sec.Defaults[f.Key])
			}
		}
	}
	return out
}

// longestPhase is the phase of the kinds' sections whose answers may be
// the longest (its max_tokens): what doctor asks of an endpoint.
func (c *Config) longestPhase() session.PhaseConfig {
	var out session.PhaseConfig
	for _, p := range c.kindPhases() {
		if p.MaxTokens > out.MaxTokens {
			out = *p.PhaseConfig
		}
	}
	return out
}
