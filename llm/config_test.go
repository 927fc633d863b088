package llm

import (
	"strings"
	"testing"
	"time"
)

func TestConfigValidate(t *testing.T) {
	t.Parallel()
	local := func(mod func(*Config)) Config {
		c := DefaultConfig()
		c.BaseURL = "http://127.0.0.1:11434/v1"
		mod(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string // "" = valid
	}{
		{"defaults with key", func() Config { c := DefaultConfig(); c.APIKey = "sk"; return c }(), ""},
		{"local without key", local(func(*Config) {}), ""},
		{"zero values take defaults", Config{BaseURL: "http://localhost:8000/v1"}, ""},
		{"openai without key", DefaultConfig(), "set OPENAI_API_KEY"},
		{"empty base URL without key", Config{}, "set OPENAI_API_KEY"},
		{"no scheme", local(func(c *Config) { c.BaseURL = "localhost:11434/v1" }), `llm.base_url "localhost:11434/v1" must be an http`},
		{"negative attempts", local(func(c *Config) { c.MaxAttempts = -1 }), "llm.max_attempts must not be negative"},
		{"negative timeout", local(func(c *Config) { c.Timeout = -time.Second }), "llm.timeout"},
		{"negative depth", local(func(c *Config) { c.Depth = -1 }), "llm.depth"},
		{"negative rpm", local(func(c *Config) { c.RPM = -1 }), "llm.rpm must not be negative"},
		{"negative tpm", local(func(c *Config) { c.TPM = -5 }), "llm.tpm must not be negative"},
		{"rpm and tpm", local(func(c *Config) { c.RPM, c.TPM = 500, 200_000 }), ""},
		{"base above max", local(func(c *Config) { c.BackoffBase = time.Minute }), "llm.backoff_base 1m0s is larger than llm.backoff_max 20s"},
		{"concurrency at its bound", local(func(c *Config) { c.Concurrency = MaxConcurrency }), ""},
		{"concurrency past its bound", local(func(c *Config) { c.Concurrency = 1_000_000 }), "llm.concurrency must be at most 10000, got 1000000"},
		{"endpoint concurrency past its bound", local(func(c *Config) {
			c.Endpoints = []Endpoint{{Name: "a", BaseURL: "http://a/v1", Concurrency: 99_999_999_999}}
		}), "llm.endpoints[0].concurrency must be at most 10000, got 99999999999"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestNewFillsDefaults(t *testing.T) {
	t.Parallel()
	c, err := New(Config{BaseURL: "http://127.0.0.1:11434/v1/", Depth: 2})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	if got.BaseURL != "http://127.0.0.1:11434/v1" || got.Timeout != DefaultTimeout || got.MaxAttempts != 2 ||
		got.Concurrency != 4 || got.BackoffBase != DefaultBackoffBase || got.BackoffMax != DefaultBackoffMax ||
		got.Depth != 2 || got.RepairAttempts != 0 || got.Logger == nil {
		t.Errorf("Config() = %+v", got)
	}
	if c.History().Depth() != 2 {
		t.Errorf("history depth = %d", c.History().Depth())
	}
}

// Two endpoints of one name are refused, naming both entries: status,
// usage and the breakers would count (and take out) two servers as one.
// The same entry listed for two phases is one endpoint.
func TestDuplicateEndpointNamesRefused(t *testing.T) {
	t.Parallel()
	a, b := Endpoint{Name: "gpu", BaseURL: "http://10.0.0.1/v1"}, Endpoint{Name: "gpu", BaseURL: "http://10.0.0.2/v1"}
	unnamed := Endpoint{BaseURL: "http://10.0.0.3/v1", APIKey: "sk-one"}
	for _, tt := range []struct {
		name   string
		eps    []Endpoint
		phases map[string][]Endpoint
		want   string // "" = valid
	}{
		{"one list, one name twice", []Endpoint{a, b}, nil, `llm.endpoints[0] and llm.endpoints[1] are both named "gpu"`},
		{"one list, one URL twice unnamed", []Endpoint{unnamed, {BaseURL: "http://10.0.0.3/v1/", APIKey: "sk-two"}}, nil,
			`llm.endpoints[0] and llm.endpoints[1] are both named "http://10.0.0.3/v1"`},
		{"two phases, the same entry", []Endpoint{a}, map[string][]Endpoint{"resolution": {a}}, ""},
		{"two phases, another server of the name", []Endpoint{a}, map[string][]Endpoint{"resolution": {b}},
			`llm.endpoints[0] and phases.resolution.endpoints[0] are both named "gpu" but are not the same endpoint`},
		{"two phases, another limit", []Endpoint{a}, map[string][]Endpoint{"intention": {{Name: "gpu", BaseURL: a.BaseURL, Concurrency: 8}}},
			`llm.endpoints[0] and phases.intention.endpoints[0] are both named "gpu" but are not the same endpoint`},
		{"names of their own", []Endpoint{a, {Name: "gpu-2", BaseURL: b.BaseURL}}, nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := Config{Endpoints: tt.eps, PhaseEndpoints: tt.phases}.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want it to contain %q", err, tt.want)
			}
		})
	}
	if _, err := New(Config{Endpoints: []Endpoint{a, b}}); err == nil {
		t.Error("New took two endpoints of one name")
	}
}
