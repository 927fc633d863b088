package session

import (
	"os"
	"slices"
	"strings"
)

// Section is a kind's own part of the configuration: a key at the top of
// config.yaml and every key below it. A kind declares it (Opener.Section)
// and reads it at run time (SectionOf); the CLI reads it from the
// configuration's sub-tree for Key, with the shared keys (llm, run,
// prices), and checks it. Kinds that share one section (the model seats
// of several games) register the same *Section.
type Section struct {
	// Key is the section's key at the top of config.yaml.
	Key string
	// Defaults are every key below Key the section reads ("intention.model",
	// or "model" for a section of one phase) with its built-in value. A
	// phase (PhaseConfig) has the keys listed here: "intention.mode" gives
	// the intention phase a mode, "intention.endpoints" servers of its own.
	Defaults map[string]any
	// Ints are the section's integer keys (below Key) and their bounds:
	// each value must be a whole number within them.
	Ints []IntBound
	// Flags are the flags of commands that set keys of the section (`arbiter
	// chat --window`), beside the shared flags.
	Flags []SectionFlag
	// New is the section's value with no key set, a pointer the CLI decodes
	// the section into (mapstructure tags, as Key's sub-tree names them;
	// yaml and json tags as `arbiter config show` prints them).
	New func() SectionConfig
}

// SectionFlag is a flag of command that sets Key (below the section), its
// type that of the key's default.
type SectionFlag struct{ Command, Name, Key, Usage string }

// IntBound is an integer key of the configuration and the bounds of its
// value.
type IntBound struct {
	Key      string
	Min, Max int64
}

// SectionConfig is a kind's section of the configuration, read.
type SectionConfig interface {
	// Phases are the model settings of the section's phases, by the key
	// below the section that holds them, which is the phase's name
	// ("intention"; "" when the section is one phase's): pointers into the
	// section, which the CLI checks (temperature, max_tokens, mode,
	// endpoints), prices, and sets in batch mode for run --batch.
	Phases() map[string]*PhaseConfig
	// Check lists the problems of the section's other keys, each an error
	// naming its key as where says where it was set ("config config.yaml:
	// toy.target"); nil when there are none.
	Check(where func(key string) string) []error
	// Clone is a copy the CLI may change (redact) without changing this
	// one.
	Clone() SectionConfig
}

// PhaseConfig is the model settings of one phase of a kind's calls, as its
// section holds them: an empty model means llm.model. Mode and Endpoints
// are read for the phases whose section lists their keys.
type PhaseConfig struct {
	Model       string  `mapstructure:"model" yaml:"model" json:"model"`
	Temperature float32 `mapstructure:"temperature" yaml:"temperature" json:"temperature"`
	MaxTokens   int     `mapstructure:"max_tokens" yaml:"max_tokens" json:"max_tokens"`
	// Mode is how its calls go: ModeLive, or ModeBatch (one Batch API job
	// per tick).
	Mode string `mapstructure:"mode" yaml:"mode,omitempty" json:"mode,omitempty"`
	// Endpoints are the phase's own servers in place of llm.endpoints.
	Endpoints []EndpointConfig `mapstructure:"endpoints" yaml:"endpoints,omitempty" json:"endpoints,omitempty"`
}

// Modes of a phase (<phase>.mode): live calls, or one Batch API job per
// tick, as run --batch sends every phase.
const (
	ModeLive  = "live"
	ModeBatch = "batch"
)

// EndpointConfig is one entry of llm.endpoints or of a phase's endpoints:
// its limits default to the llm.* ones.
type EndpointConfig struct {
	Name    string `mapstructure:"name" yaml:"name,omitempty" json:"name,omitempty"`
	BaseURL string `mapstructure:"base_url" yaml:"base_url" json:"base_url"`
	APIKey  string `mapstructure:"api_key" yaml:"api_key,omitempty" json:"api_key,omitempty"`
	// APIKeyEnv names the variable holding the key, so that the file
	// holds none.
	APIKeyEnv   string `mapstructure:"api_key_env" yaml:"api_key_env,omitempty" json:"api_key_env,omitempty"`
	Model       string `mapstructure:"model" yaml:"model,omitempty" json:"model,omitempty"`
	Concurrency int    `mapstructure:"concurrency" yaml:"concurrency,omitempty" json:"concurrency,omitempty"`
	RPM         int    `mapstructure:"rpm" yaml:"rpm,omitempty" json:"rpm,omitempty"`
	TPM         int    `mapstructure:"tpm" yaml:"tpm,omitempty" json:"tpm,omitempty"`
	// ContextTokens is the model's context on this server (0:
	// llm.context_tokens, else what the server says).
	ContextTokens int `mapstructure:"context_tokens" yaml:"context_tokens,omitempty" json:"context_tokens,omitempty"`
}

// Key is the endpoint's API key: api_key, else the variable api_key_env
// names.
func (e EndpointConfig) Key() string {
	if e.APIKey == "" && e.APIKeyEnv != "" {
		return os.Getenv(e.APIKeyEnv)
	}
	return e.APIKey
}

// PhaseOverride replaces the model settings of every phase of a session's kind:
// `prompts try --model`, an eval variant's model, temperature and max
// tokens. Zero values replace nothing.
type PhaseOverride struct {
	Model       string   `json:",omitempty"`
	Temperature *float32 `json:",omitempty"`
	MaxTokens   int      `json:",omitempty"`
}

// Params are the model settings of phase p of the session's kind: its
// model, else Settings.Model, then what Override replaces.
func (set Settings) Params(p PhaseConfig) Params {
	out := Params{Model: p.Model, Temperature: p.Temperature, MaxTokens: p.MaxTokens}
	if out.Model == "" {
		out.Model = set.Model
	}
	if o := set.Override; o.Model != "" {
		out.Model = o.Model
	}
	if t := set.Override.Temperature; t != nil {
		out.Temperature = *t
	}
	if n := set.Override.MaxTokens; n > 0 {
		out.MaxTokens = n
	}
	return out
}

// SectionOf is the section sec of set (Settings.Sections), read as the
// kind's type T; with no such section set (a test's Settings), the
// section with no key set (Section.New).
func SectionOf[T SectionConfig](set Settings, sec *Section) T {
	if c, ok := set.Sections[sec.Key].(T); ok {
		return c
	}
	return sec.New().(T)
}

// Sections are the registered kinds' sections of the configuration, each
// once, in the order of their keys.
func Sections() []*Section {
	registryMu.RLock()
	defer registryMu.RUnlock()
	var out []*Section
	for _, o := range registry {
		if o.Section != nil && !slices.Contains(out, o.Section) {
			out = append(out, o.Section)
		}
	}
	slices.SortFunc(out, func(a, b *Section) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// MaxTokensBound is the most max_tokens a configuration may give a phase:
// far above any model's output, low enough that a value past it is a
// typo, never a plan.
const MaxTokensBound = 1_000_000
