package main

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// knownKeys are the keys a config file may hold: every key of the defaults
// table, and llm.rate_limit, read as llm.rpm.
func knownKeys() map[string]bool {
	known := map[string]bool{"llm.rate_limit": true}
	for k := range allDefaults() {
		known[k] = true
	}
	return known
}

// priceKeys are the keys of one entry of prices:.
var priceKeys = []string{"model", "prompt", "completion", "batch_discount"}

// unknownKeys lists the keys of the config file at path that arbiter does
// not read (a typo such as llm.endpointz would otherwise be ignored
// without a word), each as "file:line: key: ...", in file order. A file
// that is not YAML is viper's to refuse: nothing is listed.
func unknownKeys(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var doc yaml.Node
	if yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return nil
	}
	known := knownKeys()
	var out []string
	var walk func(m *yaml.Node, prefix string)
	walk = func(m *yaml.Node, prefix string) {
		if m.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := prefix + strings.ToLower(k.Value)
			switch {
			case key == "prices" && v.Kind == yaml.SequenceNode:
				for n, item := range v.Content {
					for j := 0; item.Kind == yaml.MappingNode && j+1 < len(item.Content); j += 2 {
						if pk := item.Content[j]; !slices.Contains(priceKeys, strings.ToLower(pk.Value)) {
							out = append(out, fmt.Sprintf("%s:%d: prices[%d].%s: unknown key, ignored (an entry of prices has %s)",
								path, pk.Line, n, pk.Value, strings.Join(priceKeys, ", ")))
						}
					}
				}
			case strings.HasSuffix(key, ".endpoints") && known[key] && v.Kind == yaml.SequenceNode:
				for n, item := range v.Content {
					for j := 0; item.Kind == yaml.MappingNode && j+1 < len(item.Content); j += 2 {
						if ek := item.Content[j]; !slices.Contains(endpointKeys, strings.ToLower(ek.Value)) {
							out = append(out, fmt.Sprintf("%s:%d: %s[%d].%s: unknown key, ignored (an endpoint has %s)",
								path, ek.Line, key, n, ek.Value, strings.Join(endpointKeys, ", ")))
						}
					}
				}
			case known[key]:
			case hasSection(known, key) && v.Kind == yaml.MappingNode:
				walk(v, key+".")
			default:
				out = append(out, fmt.Sprintf("%s:%d: %s: unknown key, ignored (%s)", path, k.Line, prefix+k.Value, knownUnder(known, prefix)))
			}
		}
	}
	walk(doc.Content[0], "")
	return out
}

// hasSection reports whether some known key lies under section.
func hasSection(known map[string]bool, section string) bool {
	for k := range known {
		if strings.HasPrefix(k, section+".") {
			return true
		}
	}
	return false
}

// knownUnder says which keys the section prefix ("llm.", "" for the top)
// holds.
func knownUnder(known map[string]bool, prefix string) string {
	names := map[string]bool{}
	for k := range known {
		if rest, ok := strings.CutPrefix(k, prefix); ok && k != "llm.rate_limit" {
			name, _, _ := strings.Cut(rest, ".")
			names[name] = true
		}
	}
	what := "the top level holds "
	if prefix != "" {
		what = strings.TrimSuffix(prefix, ".") + " holds "
	}
	return what + strings.Join(slices.Sorted(maps.Keys(names)), ", ")
}
