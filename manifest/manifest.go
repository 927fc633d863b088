// Package manifest describes what a run of a simulation ran with, so that
// two runs can be compared and a run reproduced: the arbiter build, the
// models per phase and the endpoint (never its credentials), hashes of the
// prompt templates and schemas in effect, the seed, and the effective
// configuration with its secrets removed. A manifest is stored with the
// first tick its run commits (store.StartRun).
package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"runtime/debug"
)

// Manifest is what one run ran with.
type Manifest struct {
	Arbiter Build  `json:"arbiter"`
	Kind    string `json:"kind"`
	BaseURL string `json:"base_url"` // without user information or query secrets (llm.CleanURL)
	// Endpoints name the servers of llm.endpoints and the phases' own
	// lists (name, else the URL without credentials), when configured;
	// each stored call names the one that answered it.
	Endpoints []string     `json:"endpoints,omitempty"`
	Models    []PhaseModel `json:"models"` // in the kind's phase order
	Templates []File       `json:"templates"`
	Schemas   []File       `json:"schemas"`
	Seed      *uint64      `json:"seed,omitempty"` // games only
	// Config is the effective configuration as flattened keys
	// ("llm.timeout") and their values as text, secrets removed.
	Config map[string]string `json:"config"`
}

// Build is the arbiter binary that ran.
type Build struct {
	Version  string `json:"version"`            // the module version, "(devel)" for a build from a work tree
	Revision string `json:"revision,omitempty"` // the VCS revision the binary was built from
	Modified bool   `json:"modified,omitempty"` // built from a work tree with changes not committed
	Go       string `json:"go"`
}

// PhaseModel is the model a phase's calls are made with.
type PhaseModel struct {
	Phase string `json:"phase"`
	Model string `json:"model"`
}

// File is a prompt template or schema in effect, by name: where it came
// from ("default", the path of a simulation's override, "generated") and
// the SHA-256 of its content.
type File struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	SHA256 string `json:"sha256"`
}

// Hash is the hex SHA-256 of b.
func Hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// String is b in one line: version, revision (and whether the work tree
// had changes), Go.
func (b Build) String() string {
	line := b.Version
	if b.Revision != "" {
		line += " revision " + b.Revision
		if b.Modified {
			line += " (with uncommitted changes)"
		}
	}
	return line + " " + b.Go
}

// ReadBuild describes the running binary from its build information.
func ReadBuild() Build {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return Build{Version: "unknown"}
	}
	b := Build{Version: info.Main.Version, Go: info.GoVersion}
	if b.Version == "" {
		b.Version = "(devel)"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// Flatten turns a JSON object into dotted keys and text values: nested
// objects are walked ("llm.timeout"), strings are shown as they are, any
// other value (number, bool, array, null) as its JSON.
func Flatten(obj json.RawMessage) (map[string]string, error) {
	var root map[string]any
	if err := json.Unmarshal(obj, &root); err != nil {
		return nil, fmt.Errorf("flatten configuration: %w", err)
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, child := range x {
				key := k
				if prefix != "" {
					key = prefix + "." + k
				}
				walk(key, child)
			}
		case string:
			out[prefix] = x
		default:
			// Decoded from JSON, x is a number, bool, array or nil: it
			// always encodes again.
			b, _ := json.Marshal(x)
			out[prefix] = string(b)
		}
	}
	walk("", root)
	return out, nil
}
