package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// origin is where a configuration value came from, as `git config
// --show-origin` says it: a flag, an environment variable, a line of the
// config file, or the built-in default. Key is set when the value was read
// under another key (llm.rpm from llm.rate_limit).
type origin struct {
	Source string `json:"source"` // flag, env, file or default
	Name   string `json:"name,omitempty"`
	Line   int    `json:"line,omitempty"`
	Key    string `json:"key,omitempty"`
}

func (o origin) String() string {
	var s string
	switch o.Source {
	case "flag":
		s = "flag --" + o.Name
	case "env":
		s = "env " + o.Name
	case "file":
		s = fmt.Sprintf("%s:%d", o.Name, o.Line)
	default:
		s = "default"
	}
	if o.Key != "" {
		s += " (" + o.Key + ")"
	}
	return s
}

// envVar is the ARBITER_* variable of key.
func envVar(key string) string {
	return "ARBITER_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// configOrigins says where each key of c came from, in loadConfig's order,
// highest first: a flag that was set (flagKeys maps flag names to keys),
// its ARBITER_* variable, the config file c was read from (with the line),
// OPENAI_BASE_URL or OPENAI_API_KEY for the endpoint, the default.
func configOrigins(c *Config, flags *pflag.FlagSet, flagKeys map[string]string) map[string]origin {
	lines, values := fileKeys(c.file)
	out := make(map[string]origin, len(defaults))
	for key := range knownKeys() {
		o := keyOrigin(key, c.file, lines, flags, flagKeys)
		if key == "llm.rate_limit" && o.Source == "default" {
			continue // not set: no key of its own to show
		}
		out[key] = o
	}
	// llm.rate_limit, when set, is read as llm.rpm: where the lower came from.
	if rl, ok := out["llm.rate_limit"]; ok {
		own := 0
		switch o := out["llm.rpm"]; o.Source {
		case "env":
			own, _ = strconv.Atoi(strings.TrimSpace(os.Getenv(o.Name)))
		case "file":
			own, _ = strconv.Atoi(values["llm.rpm"])
		}
		if c.LLM.RPM != own {
			rl.Key = "llm.rate_limit"
			out["llm.rpm"] = rl
		}
	}
	return out
}

// keyOrigin is where key's value came from.
func keyOrigin(key, file string, lines map[string]int, flags *pflag.FlagSet, flagKeys map[string]string) origin {
	for name, k := range flagKeys {
		if k != key || flags == nil {
			continue
		}
		if f := flags.Lookup(name); f != nil && f.Changed {
			return origin{Source: "flag", Name: name}
		}
	}
	if os.Getenv(envVar(key)) != "" {
		return origin{Source: "env", Name: envVar(key)}
	}
	if line, ok := lines[key]; ok {
		return origin{Source: "file", Name: file, Line: line}
	}
	// The endpoint's OpenAI variables and the otel.* keys' standard
	// OpenTelemetry ones (bindOTelEnv) come after ARBITER_*.
	for _, env := range []string{map[string]string{"llm.base_url": "OPENAI_BASE_URL", "llm.api_key": "OPENAI_API_KEY"}[key], otelEnv[key]} {
		if env != "" && os.Getenv(env) != "" {
			return origin{Source: "env", Name: env}
		}
	}
	return origin{Source: "default"}
}

// fileKeys are the line of each key the config file at path sets (a
// section's too), and the text of each scalar value; none when path is ""
// or not YAML (loadConfig has refused it then).
func fileKeys(path string) (lines map[string]int, values map[string]string) {
	lines, values = map[string]int{}, map[string]string{}
	if path == "" {
		return lines, values
	}
	b, err := os.ReadFile(path)
	var doc yaml.Node
	if err != nil || yaml.Unmarshal(b, &doc) != nil || len(doc.Content) == 0 {
		return lines, values
	}
	var walk func(m *yaml.Node, prefix string)
	walk = func(m *yaml.Node, prefix string) {
		for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := prefix + strings.ToLower(k.Value)
			lines[key] = k.Line
			if v.Kind == yaml.ScalarNode {
				values[key] = v.Value
			}
			walk(v, key+".")
		}
	}
	walk(doc.Content[0], "")
	return lines, values
}

// withOrigins is v, a configuration as YAML, with each key's origin as a
// comment on its line; a section (llm:, phases:) has none.
func withOrigins(v any, origins map[string]origin) (*yaml.Node, error) {
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	var walk func(m *yaml.Node, prefix string)
	walk = func(m *yaml.Node, prefix string) {
		for i := 0; m.Kind == yaml.MappingNode && i+1 < len(m.Content); i += 2 {
			k, v := m.Content[i], m.Content[i+1]
			key := prefix + k.Value
			if o, ok := origins[key]; ok {
				// The comment goes where the encoder writes it on the key's
				// line: a list's key when the list is written below it,
				// else the value (on the key of an empty list it would be
				// written after the list, on the next key's line).
				if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
					k.LineComment = o.String()
				} else {
					v.LineComment = o.String()
				}
				continue
			}
			walk(v, key+".")
		}
	}
	walk(&n, "")
	return &n, nil
}
