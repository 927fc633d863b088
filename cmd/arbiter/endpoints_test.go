package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigEndpoints(t *testing.T) {
	t.Setenv("ARBITER_TEST_EP_KEY", "sk-from-the-environment-1234")
	file := filepath.Join(t.TempDir(), "config.yaml")
	body := `llm:
  endpoints:
    - {name: gpu-a, base_url: "http://10.0.0.1:8000/v1/", concurrency: 32}
    - {base_url: "https://api.example.com/v1", api_key_env: ARBITER_TEST_EP_KEY, model: served, rpm: 500, colour: red}
  breaker_cooldown: 5s
phases:
  resolution:
    endpoints:
      - {base_url: "http://10.0.0.2:8000/v1", api_key: sk-inline-secret-5678}
`
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := loadConfig(file, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := c.clientConfig()
	if err != nil {
		t.Fatalf("llm.endpoints alone is an endpoint: %v", err)
	}
	if len(lc.Endpoints) != 2 || lc.Endpoints[0].BaseURL != "http://10.0.0.1:8000/v1" || lc.Endpoints[0].Concurrency != 32 ||
		lc.Endpoints[1].APIKey != "sk-from-the-environment-1234" || lc.Endpoints[1].Model != "served" || lc.Endpoints[1].RPM != 500 {
		t.Errorf("endpoints %+v", lc.Endpoints)
	}
	if got := lc.PhaseEndpoints["resolution"]; len(got) != 1 || got[0].APIKey != "sk-inline-secret-5678" || lc.PhaseEndpoints["intention"] != nil {
		t.Errorf("phase endpoints %+v", lc.PhaseEndpoints)
	}
	if lc.BreakerCooldown.String() != "5s" {
		t.Errorf("breaker_cooldown %s", lc.BreakerCooldown)
	}
	if w := strings.Join(c.warnings(), "\n"); !strings.Contains(w, "llm.endpoints[1].colour: unknown key") || strings.Contains(w, "base_url") && !strings.Contains(w, "an endpoint has") {
		t.Errorf("warnings:\n%s", w)
	}
	if red := c.redacted(); red.Phases.Resolution.Endpoints[0].APIKey != "****" || c.Phases.Resolution.Endpoints[0].APIKey == "****" {
		t.Errorf("redacted %+v (original must stay)", red.Phases.Resolution.Endpoints)
	}
}

func TestConfigEndpointKeyEnvUnset(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.yaml")
	body := "llm:\n  endpoints:\n    - {base_url: \"http://h/v1\", api_key_env: ARBITER_TEST_NOT_SET_EVER}\n"
	if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := loadConfig(file, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "llm.endpoints[0].api_key_env: $ARBITER_TEST_NOT_SET_EVER is not set") {
		t.Fatalf("err = %v", err)
	}
}
