package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigShowSaysWhereEachValueCameFrom: config show names each key's
// origin, highest first: a flag, its ARBITER_* variable, the config file's
// line, OPENAI_BASE_URL for the endpoint, the default; --json the same by
// key, every key of the configuration with one.
func TestConfigShowSaysWhereEachValueCameFrom(t *testing.T) {
	cleanEnv(t)
	cfg := filepath.Join(t.TempDir(), "arbiter.yaml")
	os.WriteFile(cfg, []byte("llm:\n  model: from-file\n  timeout: 90s\n  depth: 2\n  concurrency: 3\nphases:\n  resolution:\n    max_tokens: 1000\n"), 0o644)
	t.Setenv("ARBITER_LLM_CONCURRENCY", "7")
	t.Setenv("ARBITER_LLM_TPM", "") // empty: not set
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	code, out, errOut := arbiter(t, "config", "show", "--config", cfg, "--depth", "5")
	for _, want := range []string{
		"    model: from-file # " + cfg + ":2\n",
		"    timeout: 1m30s # " + cfg + ":3\n",
		"    depth: 5 # flag --depth\n",
		"    concurrency: 7 # env ARBITER_LLM_CONCURRENCY\n",
		"    base_url: http://127.0.0.1:9/v1 # env OPENAI_BASE_URL\n",
		"    tpm: 0 # default\n",
		"      max_tokens: 1000 # " + cfg + ":8\n",
		"      max_tokens: 400 # default\n",
		"  prices: [] # default\n",
		"endpoint: http://127.0.0.1:9/v1\n",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("config show: exit %d, lacks %q\n%s%s", code, want, out, errOut)
		}
	}
	t.Setenv("ARBITER_LLM_MODEL", "from-env")
	code, out, errOut = arbiter(t, "config", "show", "--config", cfg, "--json", "--model", "from-flag")
	var got struct{ Origins map[string]origin }
	if err := json.Unmarshal([]byte(out), &got); code != 0 || err != nil {
		t.Fatalf("config show --json: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	for key, want := range map[string]origin{
		"llm.model":   {Source: "flag", Name: "model"},
		"llm.timeout": {Source: "file", Name: cfg, Line: 3},
		"llm.depth":   {Source: "file", Name: cfg, Line: 4},
		"llm.tpm":     {Source: "default"},
	} {
		if got.Origins[key] != want {
			t.Errorf("origin of %s = %+v, want %+v", key, got.Origins[key], want)
		}
	}
	for key := range defaults {
		if _, ok := got.Origins[key]; !ok {
			t.Errorf("config show --json: no origin for %s", key)
		}
	}
	if _, ok := got.Origins["llm.rate_limit"]; ok {
		t.Errorf("an unset llm.rate_limit has an origin: %+v", got.Origins["llm.rate_limit"])
	}
}

// TestConfigShowOriginOfADeprecatedKey: llm.rpm read from llm.rate_limit
// says so; when llm.rpm's own value is the lower, it is llm.rpm's origin.
func TestConfigShowOriginOfADeprecatedKey(t *testing.T) {
	cleanEnv(t)
	cfg := filepath.Join(t.TempDir(), "arbiter.yaml")
	os.WriteFile(cfg, []byte("llm:\n  rpm: 100\n  rate_limit: 0.5\n"), 0o644)
	code, out, errOut := arbiter(t, "config", "show", "--config", cfg)
	if want := "    rpm: 30 # " + cfg + ":3 (llm.rate_limit)\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("rate_limit lower: exit %d, lacks %q\n%s%s", code, want, out, errOut)
	}
	t.Setenv("ARBITER_LLM_RPM", "20")
	code, out, errOut = arbiter(t, "config", "show", "--config", cfg)
	if want := "    rpm: 20 # env ARBITER_LLM_RPM\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("rpm lower: exit %d, lacks %q\n%s%s", code, want, out, errOut)
	}
}

// TestConfigOriginsWithoutAFile: with no config file nothing comes from a
// file, and a file that is not YAML gives no lines (loadConfig refuses it
// before config show prints anything).
func TestConfigOriginsWithoutAFile(t *testing.T) {
	cleanEnv(t)
	c, err := loadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for key, o := range configOrigins(c, nil, llmFlags) {
		if o.Source != "default" {
			t.Errorf("%s: origin %+v with no file, flag or variable", key, o)
		}
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
	if o := configOrigins(c, nil, llmFlags)["otel.endpoint"]; o != (origin{Source: "env", Name: "OTEL_EXPORTER_OTLP_ENDPOINT"}) {
		t.Errorf("otel.endpoint from its standard variable: origin %+v", o)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("llm: [unclosed\n"), 0o644)
	if lines, values := fileKeys(bad); len(lines) != 0 || len(values) != 0 {
		t.Errorf("fileKeys of a file that is not YAML: %v %v", lines, values)
	}
	if lines, _ := fileKeys(filepath.Join(t.TempDir(), "missing.yaml")); len(lines) != 0 {
		t.Errorf("fileKeys of a missing file: %v", lines)
	}
	code, out, errOut := arbiter(t, "config", "show", "--config", bad)
	if code != ExitUsage || out != "" || !strings.Contains(errOut, "config "+bad) {
		t.Errorf("config show of a broken file: exit %d, want %d and nothing on stdout\n%s%s", code, ExitUsage, out, errOut)
	}
}
