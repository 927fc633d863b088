package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/arbiter-sim/arbiter/session"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

// Config is the whole effective configuration, loaded once per command from,
// lowest first: built-in defaults, OPENAI_API_KEY/OPENAI_BASE_URL, config.yaml,
// ARBITER_* variables, flags.
type Config struct {
	LLM  LLMConfig  `mapstructure:"llm" yaml:"llm" json:"llm"`
	Run  RunConfig  `mapstructure:"run" yaml:"run" json:"run"`
	OTel OTelConfig `mapstructure:"otel" yaml:"otel" json:"otel"`
	// Prices are what models cost, for `arbiter usage`: a list rather than
	// a map keyed by model, since model names hold dots (llama3.2, gpt-4.1)
	// and a dot splits a configuration key.
	Prices []PriceConfig `mapstructure:"prices" yaml:"prices" json:"prices"`
	// Kinds are the kinds' own sections (session.Section), read, by key:
	// printed and stored beside the shared keys.
	Kinds map[string]session.SectionConfig `mapstructure:"-" yaml:"-" json:"-"`

	// file is the config file read, "" when none was.
	file string
	// unknown are the keys of the config file arbiter does not read, and
	// deprecated the keys read under another name, each as a line naming
	// the file (and line) and the key.
	unknown, deprecated []string
}

// warnings are the lines that say what the configuration ignored or read
// under another name.
func (c *Config) warnings() []string { return append(slices.Clone(c.unknown), c.deprecated...) }

// PriceConfig is one model's price in USD per million tokens; cached prompt
// tokens are priced as prompt tokens. BatchDiscount is the part of that
// price taken off the tokens a Batch API job answered: unset, it is
// DefaultBatchDiscount (loadConfig fills it in, so config show and the
// manifest say what was used).
type PriceConfig struct {
	Model         string   `mapstructure:"model" yaml:"model" json:"model"`
	Prompt        float64  `mapstructure:"prompt" yaml:"prompt" json:"prompt"`
	Completion    float64  `mapstructure:"completion" yaml:"completion" json:"completion"`
	BatchDiscount *float64 `mapstructure:"batch_discount" yaml:"batch_discount" json:"batch_discount"`
}

// DefaultBatchDiscount is OpenAI's: the Batch API costs half the live
// price.
const DefaultBatchDiscount = 0.5

// LLMConfig is the model endpoint and how calls to it behave.
type LLMConfig struct {
	BaseURL        string        `mapstructure:"base_url" yaml:"base_url" json:"base_url"`
	APIKey         string        `mapstructure:"api_key" yaml:"api_key" json:"api_key"`
	Model          string        `mapstructure:"model" yaml:"model" json:"model"`
	Timeout        time.Duration `mapstructure:"timeout" yaml:"timeout" json:"timeout"`
	MaxAttempts    int           `mapstructure:"max_attempts" yaml:"max_attempts" json:"max_attempts"`
	RateLimitWaits int           `mapstructure:"rate_limit_waits" yaml:"rate_limit_waits" json:"rate_limit_waits"`
	RepairAttempts int           `mapstructure:"repair_attempts" yaml:"repair_attempts" json:"repair_attempts"`
	Concurrency    int           `mapstructure:"concurrency" yaml:"concurrency" json:"concurrency"`
	Depth          int           `mapstructure:"depth" yaml:"depth" json:"depth"`
	BackoffBase    time.Duration `mapstructure:"backoff_base" yaml:"backoff_base" json:"backoff_base"`
	BackoffMax     time.Duration `mapstructure:"backoff_max" yaml:"backoff_max" json:"backoff_max"`
	// RPM and TPM are the endpoint's published limits per minute (0:
	// unknown): the client paces calls under them.
	RPM int `mapstructure:"rpm" yaml:"rpm" json:"rpm"`
	TPM int `mapstructure:"tpm" yaml:"tpm" json:"tpm"`
	// MaxResponseBytes is the largest answer body read (0: from max_tokens).
	MaxResponseBytes int64 `mapstructure:"max_response_bytes" yaml:"max_response_bytes" json:"max_response_bytes"`
	// ContextTokens is the model's context window in tokens (0: unknown);
	// validate and run refuse a call that would not fit it.
	ContextTokens int `mapstructure:"context_tokens" yaml:"context_tokens" json:"context_tokens"`
	// MaxOutputTokens is the most tokens any call may ask the model to
	// write (its max_tokens); a crowd's resolution is cut to fit it.
	MaxOutputTokens int `mapstructure:"max_output_tokens" yaml:"max_output_tokens" json:"max_output_tokens"`
	// Endpoints, when listed, are the servers calls go to in place of
	// base_url and api_key, each call to the one with the most free
	// capacity; BreakerCooldown is how long one that keeps failing is left
	// out before a call probes it again.
	Endpoints       []EndpointConfig `mapstructure:"endpoints" yaml:"endpoints" json:"endpoints"`
	BreakerCooldown time.Duration    `mapstructure:"breaker_cooldown" yaml:"breaker_cooldown" json:"breaker_cooldown"`
}

// EndpointConfig is one entry of llm.endpoints or of a phase's endpoints
// (a kind's section): its limits default to the llm.* ones.
type EndpointConfig = session.EndpointConfig

// endpointKeys are the keys of one entry of an endpoints list.
var endpointKeys = []string{"name", "base_url", "api_key", "api_key_env", "model", "concurrency", "rpm", "tpm", "context_tokens"}

// MarshalJSON writes durations as strings ("60s"), as the text view does.
func (c LLMConfig) MarshalJSON() ([]byte, error) {
	type plain LLMConfig
	return json.Marshal(struct {
		plain
		Timeout         string `json:"timeout"`
		BackoffBase     string `json:"backoff_base"`
		BackoffMax      string `json:"backoff_max"`
		BreakerCooldown string `json:"breaker_cooldown"`
	}{plain(c), c.Timeout.String(), c.BackoffBase.String(), c.BackoffMax.String(), c.BreakerCooldown.String()})
}

// where names where key's value came from: its ARBITER_* variable when
// set, else the config file.
func (c *Config) where(key string) string {
	env := "ARBITER_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
	switch {
	case os.Getenv(env) != "":
		return env + " (" + key + ")"
	case c.file != "":
		return "config " + c.file + ": " + key
	}
	return "config " + key
}

// RunConfig bounds a run.
type RunConfig struct {
	PhaseTimeout time.Duration `mapstructure:"phase_timeout" yaml:"phase_timeout" json:"phase_timeout"`
	TokenBudget  int           `mapstructure:"token_budget" yaml:"token_budget" json:"token_budget"`
	// MaxCost is the US dollars a simulation may spend across runs (0:
	// unlimited), each call priced with prices:.
	MaxCost float64 `mapstructure:"max_cost" yaml:"max_cost" json:"max_cost"`
}

// MarshalJSON writes durations as strings ("0s"), as the text view does.
func (c RunConfig) MarshalJSON() ([]byte, error) {
	type plain RunConfig
	return json.Marshal(struct {
		plain
		PhaseTimeout string `json:"phase_timeout"`
	}{plain(c), c.PhaseTimeout.String()})
}

// defaults is the one table of the shared keys' built-in values, and each
// kind's section (session.Section.Defaults) holds its own (allDefaults);
// config.yaml at the repository root documents them and a test keeps the
// two equal. Where the
// model client has a default of its own, the table takes it from the
// session's (session.DefaultClientConfig).
var defaults = map[string]any{
	"llm.base_url":           "",
	"llm.api_key":            "",
	"llm.model":              "gpt-4o-mini",
	"llm.timeout":            "60s",
	"llm.max_attempts":       defaultClient.MaxAttempts,
	"llm.rate_limit_waits":   defaultClient.RateLimitWaits,
	"llm.repair_attempts":    defaultClient.RepairAttempts,
	"llm.concurrency":        defaultClient.Concurrency,
	"llm.depth":              defaultClient.Depth,
	"llm.rpm":                0,
	"llm.tpm":                0,
	"llm.backoff_base":       defaultClient.BackoffBase.String(),
	"llm.backoff_max":        defaultClient.BackoffMax.String(),
	"llm.max_response_bytes": 0,
	"llm.context_tokens":     0,
	"llm.endpoints":          []any{},
	"llm.breaker_cooldown":   defaultClient.BreakerCooldown.String(),
	"run.phase_timeout":      "0s",
	"run.token_budget":       0,
	"run.max_cost":           0.0,
	"prices":                 []any{},

	// Where traces and metrics go (telemetry.go): nowhere by default.
	"otel.endpoint":         "",
	"otel.protocol":         "http/protobuf",
	"otel.service_name":     "arbiter",
	"otel.traces_exporter":  "otlp",
	"otel.metrics_exporter": "otlp",
	"otel.capture_content":  false,
	"otel.queue_size":       2048,

	// The output budget of every call: a kind cuts what a call asks for to
	// fit it.
	"llm.max_output_tokens": session.DefaultMaxOutputTokens,
}

var defaultClient = session.DefaultClientConfig()

// OpenAIBaseURL is used when an API key is set and no base URL is.
const OpenAIBaseURL = "https://api.openai.com/v1"

// ErrNoEndpoint says exactly how to configure a model endpoint.
var ErrNoEndpoint = errors.New(`no model endpoint configured.
  For OpenAI:        export OPENAI_API_KEY=sk-...   (https://platform.openai.com/api-keys)
  With no key, the local model scripts/demo.sh uses (from the arbiter repository;
  it builds Ollama once, a few minutes, and stops with scripts/local-model.sh stop):
                     eval "$(scripts/local-model.sh start)"
  For a local server (Ollama, vLLM, llama.cpp), point at its OpenAI-compatible URL:
                     export OPENAI_BASE_URL=http://127.0.0.1:11434/v1   (Ollama's default)
                     and pick a model it serves: export ARBITER_LLM_MODEL=llama3.2
  Or set llm.base_url / llm.api_key in config.yaml, or pass --base-url`)

// defaultsViper is a viper holding the built-in defaults alone.
func defaultsViper() *viper.Viper {
	v := viper.NewWithOptions(viper.KeyDelimiter("."))
	for k, val := range allDefaults() {
		v.SetDefault(k, val)
	}
	return v
}

// loadConfig reads the configuration: configFile when given, else
// ./config.yaml when present, else the built-in defaults; then ARBITER_*
// variables and the flags that were set.
func loadConfig(configFile string, flags *pflag.FlagSet, flagKeys map[string]string) (*Config, error) {
	v := defaultsViper()
	// OpenAI's own variables rank below everything else, as in the OpenAI SDKs.
	if s := os.Getenv("OPENAI_BASE_URL"); s != "" {
		v.SetDefault("llm.base_url", s)
	}
	if s := os.Getenv("OPENAI_API_KEY"); s != "" {
		v.SetDefault("llm.api_key", s)
	}
	v.SetEnvPrefix("ARBITER")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()
	if err := bindOTelEnv(v); err != nil {
		return nil, err
	}

	if configFile == "" {
		configFile = os.Getenv("ARBITER_CONFIG")
	}
	switch {
	case configFile != "":
		v.SetConfigFile(configFile)
		if err := v.ReadInConfig(); err != nil {
			return nil, usageErrorf("config %s: %v", configFile, err)
		}
	default:
		if _, err := os.Stat("config.yaml"); err == nil {
			v.SetConfigFile("config.yaml")
			if err := v.ReadInConfig(); err != nil {
				return nil, usageErrorf("config config.yaml: %v", err)
			}
		}
	}
	if flags != nil {
		for name, key := range flagKeys {
			if f := flags.Lookup(name); f != nil && f.Changed {
				if err := v.BindPFlag(key, f); err != nil {
					return nil, err
				}
			}
		}
	}

	bad := checkIntegers(v)
	var c Config
	if err := v.Unmarshal(&c); err != nil {
		return nil, usageErrorf("config: %v", err)
	}
	kinds, err := readKinds(v)
	if err != nil {
		return nil, usageErrorf("config: %v", err)
	}
	c.Kinds = kinds
	for i := range c.Prices {
		if c.Prices[i].BatchDiscount == nil {
			d := DefaultBatchDiscount
			c.Prices[i].BatchDiscount = &d
		}
	}
	if file := v.ConfigFileUsed(); file != "" {
		c.file, c.unknown = file, unknownKeys(file)
	}
	if err := foldRateLimit(v, &c); err != nil {
		return nil, usageError(err)
	}
	if err := c.validate(bad); err != nil {
		return nil, usageError(err)
	}
	return &c, nil
}

// foldRateLimit reads llm.rate_limit, requests per second, which llm.rpm
// replaced: one pacer of the endpoint's limits, not two limiters in a row.
// Set, it is read as llm.rpm (the lower of the two when both are set), with
// a warning naming where it was set.
func foldRateLimit(v *viper.Viper, c *Config) error {
	const key = "llm.rate_limit"
	if !v.IsSet(key) {
		return nil
	}
	rps, err := strconv.ParseFloat(strings.TrimSpace(fmt.Sprint(v.Get(key))), 64)
	switch {
	case err != nil:
		return fmt.Errorf("config %s: %q is not a number of requests per second", key, v.Get(key))
	case rps < 0 || math.IsNaN(rps):
		return fmt.Errorf("config %s must not be negative", key)
	}
	where := v.ConfigFileUsed() + ": " + key
	if os.Getenv("ARBITER_LLM_RATE_LIMIT") != "" || !v.InConfig(key) {
		where = "ARBITER_LLM_RATE_LIMIT"
	}
	rpm := int(min(math.Ceil(rps*60), math.MaxInt32))
	if rps > 0 && (c.LLM.RPM == 0 || rpm < c.LLM.RPM) {
		c.LLM.RPM = rpm
	}
	c.deprecated = append(c.deprecated, fmt.Sprintf("%s is deprecated: set llm.rpm, requests per minute (read as llm.rpm %d)", where, c.LLM.RPM))
	return nil
}

// validate checks every key once, after the integer settings, whose
// problems (checkIntegers) come first in errs. The model client's own keys
// are checked by session.ClientConfig.Validate (the same check the session
// makes); what the configuration requires beyond it (a model, a positive
// timeout: a config file has no "0 means default") is checked here.
func (c *Config) validate(errs []error) error {
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	check(c.LLM.Model != "", "config llm.model: must not be empty")
	check(c.LLM.Timeout > 0, "config llm.timeout: must be positive, got %s", c.LLM.Timeout)
	check(c.LLM.BackoffBase > 0, "config llm.backoff_base: must be positive, got %s", c.LLM.BackoffBase)
	for key, list := range c.endpointLists() {
		for i, ep := range list {
			check(ep.APIKeyEnv == "" || ep.APIKey != "" || os.Getenv(ep.APIKeyEnv) != "", "config %s[%d].api_key_env: $%s is not set", key, i, ep.APIKeyEnv)
		}
	}
	lc := c.llmConfig(c.LLM.BaseURL)
	// The keys checked above are not checked again by the client's own,
	// weaker check ("must not be negative"): one line per problem.
	lc.Timeout, lc.BackoffBase = max(lc.Timeout, 1), max(lc.BackoffBase, 1)
	if lc.BaseURL == "" && len(lc.Endpoints) == 0 {
		lc.APIKey = "-" // whether there is an endpoint at all is the command's to say (ErrNoEndpoint)
	}
	if err := lc.Validate(); err != nil {
		for _, e := range unjoin(err) {
			errs = append(errs, fmt.Errorf("config %w", e))
		}
	}
	errs = append(errs, c.checkKinds()...)
	check(c.Run.PhaseTimeout >= 0, "config run.phase_timeout: must not be negative")
	number := func(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
	if !number(c.Run.MaxCost) {
		check(false, "config run.max_cost: must be a number of US dollars (0: no limit), got %g", c.Run.MaxCost)
	} else {
		check(c.Run.MaxCost >= 0, "config run.max_cost: must not be negative, got %g", c.Run.MaxCost)
	}
	seen := map[string]bool{}
	for i, p := range c.Prices {
		check(p.Model != "", "config prices[%d].model: must not be empty", i)
		check(!seen[p.Model], "config prices[%d]: model %q is priced twice", i, p.Model)
		check(number(p.Prompt) && number(p.Completion), "config prices[%d] (%s): prices must be numbers of US dollars per million tokens", i, p.Model)
		check(!(p.Prompt < 0 || p.Completion < 0), "config prices[%d] (%s): prices must not be negative", i, p.Model)
		if d := p.BatchDiscount; d != nil {
			check(*d >= 0 && *d <= 1, "config prices[%d] (%s).batch_discount: must be within 0..1 (the part of the price taken off batch tokens; 0.5: half price), got %g", i, p.Model, *d)
		}
		seen[p.Model] = true
	}
	if c.Run.MaxCost > 0 {
		for _, m := range c.models() {
			check(seen[m.model], "config run.max_cost: model %q (%s) has no price: add {model: %q, prompt: ..., completion: ...} under prices: (USD per million tokens)", m.model, m.key, m.model)
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return lineErrors(errs)
}

// configuredModel is a model the configuration names, with the key that
// names it.
type configuredModel struct{ key, model string }

// models lists the models the configuration calls: llm.model, and each
// phase's own model when it has one, each once.
func (c *Config) models() []configuredModel {
	out := []configuredModel{{"llm.model", c.LLM.Model}}
	for _, p := range c.kindPhases() {
		if m := p.Model; m != "" && !slices.ContainsFunc(out, func(o configuredModel) bool { return o.model == m }) {
			out = append(out, configuredModel{p.key + ".model", m})
		}
	}
	return out
}

// prices is the price table of a run.
func (c *Config) prices() map[string]session.Price {
	out := make(map[string]session.Price, len(c.Prices))
	for _, p := range c.Prices {
		d := DefaultBatchDiscount
		if p.BatchDiscount != nil {
			d = *p.BatchDiscount
		}
		out[p.Model] = session.Price{Prompt: p.Prompt, Completion: p.Completion, BatchDiscount: d}
	}
	return out
}

// unjoin lists the errors of an errors.Join.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// endpoint returns the base URL to call, or ErrNoEndpoint.
func (c *Config) endpoint() (string, error) {
	switch {
	case len(c.LLM.Endpoints) > 0 && c.LLM.BaseURL == "" && c.LLM.APIKey == "":
		return "", nil // llm.endpoints alone
	case c.LLM.BaseURL != "":
		return strings.TrimRight(c.LLM.BaseURL, "/"), nil
	case c.LLM.APIKey != "":
		return OpenAIBaseURL, nil
	default:
		return "", usageError(ErrNoEndpoint)
	}
}

// clientConfig is the model client's configuration.
func (c *Config) clientConfig() (session.ClientConfig, error) {
	url, err := c.endpoint()
	if err != nil {
		return session.ClientConfig{}, err
	}
	return c.llmConfig(url), nil
}

// llmConfig is the client configuration of the llm.* keys with base URL url.
func (c *Config) llmConfig(url string) session.ClientConfig {
	return session.ClientConfig{
		BaseURL:        url,
		APIKey:         c.LLM.APIKey,
		Timeout:        c.LLM.Timeout,
		MaxAttempts:    c.LLM.MaxAttempts,
		RateLimitWaits: c.LLM.RateLimitWaits,
		RepairAttempts: c.LLM.RepairAttempts,
		Concurrency:    c.LLM.Concurrency,
		Depth:          c.LLM.Depth,
		BackoffBase:    c.LLM.BackoffBase,
		BackoffMax:     c.LLM.BackoffMax,
		RPM:            c.LLM.RPM,
		TPM:            c.LLM.TPM,

		MaxResponseBytes: c.LLM.MaxResponseBytes,
		ContextTokens:    c.LLM.ContextTokens,
		Endpoints:        clientEndpoints(c.LLM.Endpoints),
		PhaseEndpoints:   c.phaseEndpoints(),
		BreakerCooldown:  c.LLM.BreakerCooldown,
	}
}

// phaseEndpoints are the kinds' phases' own endpoint lists, by phase,
// nil when none has one.
func (c *Config) phaseEndpoints() map[string][]session.Endpoint {
	var out map[string][]session.Endpoint
	for _, p := range c.kindPhases() {
		if len(p.Endpoints) > 0 {
			if out == nil {
				out = map[string][]session.Endpoint{}
			}
			out[p.name] = clientEndpoints(p.Endpoints)
		}
	}
	return out
}

// clientEndpoints are list as the model client takes them, keys read.
func clientEndpoints(list []EndpointConfig) []session.Endpoint {
	var out []session.Endpoint
	for _, e := range list {
		out = append(out, session.Endpoint{Name: e.Name, BaseURL: strings.TrimRight(e.BaseURL, "/"), APIKey: e.Key(), Model: e.Model,
			Concurrency: e.Concurrency, RPM: e.RPM, TPM: e.TPM, ContextTokens: e.ContextTokens})
	}
	return out
}

func (c *Config) params(p session.PhaseConfig) session.Params {
	model := p.Model
	if model == "" {
		model = c.LLM.Model
	}
	return session.Params{Model: model, Temperature: p.Temperature, MaxTokens: p.MaxTokens}
}

// redacted returns a copy safe to print: the API key shows its last 4
// characters, the base URL no credentials.
func (c Config) redacted() Config {
	c.LLM.BaseURL = session.ShownURL(c.LLM.BaseURL)
	redact := func(list []EndpointConfig) []EndpointConfig {
		list = slices.Clone(list)
		for i := range list {
			list[i].BaseURL = session.ShownURL(list[i].BaseURL)
			if list[i].APIKey != "" {
				list[i].APIKey = "****"
			}
		}
		return list
	}
	c.LLM.Endpoints = redact(c.LLM.Endpoints)
	c.Kinds = c.cloneKinds()
	for _, p := range c.kindPhases() {
		p.Endpoints = redact(p.Endpoints)
	}
	if k := c.LLM.APIKey; k != "" {
		if len(k) > 8 {
			c.LLM.APIKey = "****" + k[len(k)-4:]
		} else {
			c.LLM.APIKey = "****"
		}
	}
	return c
}
