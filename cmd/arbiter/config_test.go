package main

import (
	"encoding/json"
	"github.com/arbiter-sim/arbiter/games/chronicle"
	"github.com/arbiter-sim/arbiter/phases"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"
)

// TestConfigYAMLMatchesDefaults keeps the documented config.yaml and the
// built-in defaults equal, so running without the file behaves the same.
func TestConfigYAMLMatchesDefaults(t *testing.T) {
	cleanEnv(t)
	fromFile, err := loadConfig(filepath.Join(repoRoot, "config.yaml"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	builtIn, err := loadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromFile.file = "" // where it was read, the one difference that must be
	if !reflect.DeepEqual(fromFile, builtIn) {
		t.Errorf("config.yaml and the built-in defaults differ:\nfile:     %+v\nbuilt-in: %+v", *fromFile, *builtIn)
	}
	// Seed 001: the model sees the whole conversation; seed 002: one retry;
	// issue 12: 429s waited out long enough to ride out a per-minute limit.
	if w := builtIn.Kinds["chronicle"].(*chronicle.Config).Window; w != 0 || builtIn.LLM.MaxAttempts != 2 || builtIn.LLM.RateLimitWaits != 8 {
		t.Errorf("chronicle.window %d, llm.max_attempts %d, llm.rate_limit_waits %d; want 0, 2, 8",
			w, builtIn.LLM.MaxAttempts, builtIn.LLM.RateLimitWaits)
	}
}

func TestConfigPrecedence(t *testing.T) {
	cleanEnv(t)
	cfgFile := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfgFile, []byte("llm:\n  base_url: http://from-file/v1\n  model: file-model\n  timeout: 10s\n  concurrency: 2\n"), 0o644)
	flags := func(args ...string) *pflag.FlagSet {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.String("model", "", "")
		fs.Int("concurrency", 0, "")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		return fs
	}
	keys := map[string]string{"model": "llm.model", "concurrency": "llm.concurrency"}

	t.Setenv("OPENAI_BASE_URL", "http://from-openai-env/v1")
	t.Setenv("OPENAI_API_KEY", "sk-openai-env-key-1234")
	c, err := loadConfig("", flags(), keys)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.BaseURL != "http://from-openai-env/v1" || c.LLM.APIKey != "sk-openai-env-key-1234" || c.LLM.Model != "gpt-4o-mini" {
		t.Errorf("OPENAI_* over defaults: %+v", c.LLM)
	}

	c, _ = loadConfig(cfgFile, flags(), keys)
	if c.LLM.BaseURL != "http://from-file/v1" || c.LLM.Model != "file-model" || c.LLM.Timeout != 10*time.Second {
		t.Errorf("config file over OPENAI_*: %+v", c.LLM)
	}

	t.Setenv("ARBITER_LLM_MODEL", "env-model")
	t.Setenv("ARBITER_LLM_TIMEOUT", "7s")
	t.Setenv("ARBITER_LLM_MAX_ATTEMPTS", "5")
	t.Setenv("ARBITER_LLM_CONCURRENCY", "3")
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_TOKENS", "999")
	t.Setenv("ARBITER_CHRONICLE_WINDOW", "12")
	c, _ = loadConfig(cfgFile, flags(), keys)
	res, window := c.Kinds["phases"].(*phases.Config).Resolution, c.Kinds["chronicle"].(*chronicle.Config).Window
	if c.LLM.Model != "env-model" || c.LLM.Timeout != 7*time.Second || c.LLM.MaxAttempts != 5 || c.LLM.Concurrency != 3 || res.MaxTokens != 999 || window != 12 {
		t.Errorf("ARBITER_* over the file: %+v %+v", c.LLM, res)
	}

	c, _ = loadConfig(cfgFile, flags("--model", "flag-model", "--concurrency", "8"), keys)
	if c.LLM.Model != "flag-model" || c.LLM.Concurrency != 8 || c.LLM.MaxAttempts != 5 {
		t.Errorf("flags over ARBITER_*: %+v", c.LLM)
	}
}

func TestConfigErrors(t *testing.T) {
	cleanEnv(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte("llm: [oops\n"), 0o644)
	if _, err := loadConfig(bad, nil, nil); err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed config file: %v (exit %d)", err, exitCode(err))
	}
	if _, err := loadConfig(filepath.Join(t.TempDir(), "missing.yaml"), nil, nil); err == nil || exitCode(err) != ExitUsage {
		t.Errorf("missing config file: %v", err)
	}
	t.Setenv("ARBITER_LLM_TIMEOUT", "soon")
	if _, err := loadConfig("", nil, nil); err == nil || exitCode(err) != ExitUsage {
		t.Errorf("bad duration: %v", err)
	}
	t.Setenv("ARBITER_LLM_TIMEOUT", "")
	t.Setenv("ARBITER_PHASES_INTENTION_TEMPERATURE", "3")
	if _, err := loadConfig("", nil, nil); err == nil || !strings.Contains(err.Error(), "phases.intention.temperature") {
		t.Errorf("temperature out of range: %v", err)
	}
}

func TestConfigShowRedactsKey(t *testing.T) {
	cleanEnv(t)
	t.Setenv("OPENAI_API_KEY", "sk-very-secret-key-abcd")
	code, out, _ := arbiter(t, "config", "show")
	if code != 0 || strings.Contains(out, "very-secret") || !strings.Contains(out, "****abcd") {
		t.Errorf("config show: exit %d\n%s", code, out)
	}
	var shown struct {
		Endpoint string `yaml:"endpoint"`
	}
	if err := yaml.Unmarshal([]byte(out), &shown); err != nil || shown.Endpoint != OpenAIBaseURL {
		t.Errorf("endpoint %q (%v), want %s when only a key is set", shown.Endpoint, err, OpenAIBaseURL)
	}
	t.Setenv("OPENAI_API_KEY", "")
	code, out, _ = arbiter(t, "config", "show", "--base-url", "http://127.0.0.1:11434/v1")
	if code != 0 || !strings.Contains(out, "endpoint: http://127.0.0.1:11434/v1") {
		t.Errorf("config show --base-url: exit %d\n%s", code, out)
	}
}

// TestConfigClientKeys: the backoff bounds and the rate limits, named by
// the client's messages, are settable in every layer and reach the client; a
// bad value is an error naming the key.
func TestConfigClientKeys(t *testing.T) {
	cleanEnv(t)
	c, err := loadConfig("", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.LLM.BackoffBase != 500*time.Millisecond || c.LLM.BackoffMax != 20*time.Second || c.LLM.RPM != 0 || c.LLM.TPM != 0 {
		t.Errorf("defaults: %+v", c.LLM)
	}
	file := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(file, []byte("llm:\n  base_url: http://x/v1\n  backoff_base: 1s\n  rpm: 500\n"), 0o644)
	t.Setenv("ARBITER_LLM_BACKOFF_MAX", "45s")
	t.Setenv("ARBITER_LLM_TPM", "200000")
	c, err = loadConfig(file, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cc, err := c.clientConfig()
	if err != nil || cc.BackoffBase != time.Second || cc.BackoffMax != 45*time.Second || cc.RPM != 500 || cc.TPM != 200000 {
		t.Errorf("client config %+v, %v", cc, err)
	}
	t.Setenv("ARBITER_LLM_TPM", "")
	for _, tc := range []struct{ env, value, want string }{
		{"ARBITER_LLM_RATE_LIMIT", "-1", "config llm.rate_limit must not be negative"},
		{"ARBITER_LLM_RATE_LIMIT", "fast", `config llm.rate_limit: "fast" is not a number of requests per second`},
		{"ARBITER_LLM_RPM", "-1", "config llm.rpm: must be a whole number from 0 to 1000000000, got -1"},
		{"ARBITER_LLM_TPM", "-200", "config llm.tpm: must be a whole number from 0 to 1000000000000, got -200"},
		{"ARBITER_LLM_RPM", "lots", `config llm.rpm: must be a whole number from 0 to 1000000000, got "lots"`},
		{"ARBITER_LLM_BACKOFF_BASE", "0s", "config llm.backoff_base: must be positive, got 0s"},
		{"ARBITER_LLM_BACKOFF_BASE", "1m", "config llm.backoff_base 1m0s is larger than llm.backoff_max 45s"},
		{"ARBITER_LLM_DEPTH", "-2", "config llm.depth: must be a whole number from 0 to 1000, got -2"},
		{"ARBITER_LLM_BASE_URL", "ftp://x", `config llm.base_url "ftp://x" must be an http:// or https:// URL`},
	} {
		t.Run(tc.env+"="+tc.value, func(t *testing.T) {
			t.Setenv(tc.env, tc.value)
			_, err := loadConfig("", nil, nil)
			if err == nil || exitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

// TestRateLimitFoldsIntoRPM: llm.rate_limit, requests per second, is still
// read, as llm.rpm (the lower of the two when both are set), with one line
// naming the file or the variable it came from (printed on stderr by
// every command); unset, nothing is said.
func TestRateLimitFoldsIntoRPM(t *testing.T) {
	cleanEnv(t)
	var said strings.Builder
	dir := t.TempDir()
	for _, tc := range []struct {
		name, yaml, env string
		rpm             int
		where           string
	}{
		{"unset", "rpm: 500", "", 500, ""},
		{"alone", "rate_limit: 2.5", "", 150, "config.yaml: llm.rate_limit"},
		{"lower than rpm", "rate_limit: 2.5\n  rpm: 500", "", 150, "config.yaml: llm.rate_limit"},
		{"higher than rpm", "rate_limit: 100\n  rpm: 500", "", 500, "config.yaml: llm.rate_limit"},
		{"zero", "rate_limit: 0", "", 0, "config.yaml: llm.rate_limit"},
		{"from the environment", "rpm: 0", "0.5", 30, "ARBITER_LLM_RATE_LIMIT"},
	} {
		said.Reset()
		t.Setenv("ARBITER_LLM_RATE_LIMIT", tc.env)
		file := filepath.Join(dir, "config.yaml")
		os.WriteFile(file, []byte("llm:\n  base_url: http://x/v1\n  "+tc.yaml+"\n"), 0o644)
		c, err := loadConfig(file, nil, nil)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, w := range c.warnings() {
			said.WriteString(w + "\n")
		}
		if c.LLM.RPM != tc.rpm {
			t.Errorf("%s: llm.rpm %d, want %d", tc.name, c.LLM.RPM, tc.rpm)
		}
		lines := strings.Count(said.String(), "\n")
		switch {
		case tc.where == "" && lines != 0:
			t.Errorf("%s: said %q, want nothing", tc.name, said.String())
		case tc.where != "" && (lines != 1 || !strings.Contains(said.String(), tc.where+" is deprecated") || !strings.Contains(said.String(), "llm.rpm")):
			t.Errorf("%s: said %q, want one line naming %s and llm.rpm", tc.name, said.String(), tc.where)
		}
	}
}

// TestConfigShowJSONDurations: --json prints durations as the text view
// does ("60s"), not as nanoseconds.
func TestConfigShowJSONDurations(t *testing.T) {
	cleanEnv(t)
	code, out, errOut := arbiter(t, "config", "show", "--json", "--timeout", "90s")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var shown struct {
		Config struct {
			LLM map[string]any `json:"llm"`
			Run map[string]any `json:"run"`
		} `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatal(err)
	}
	llmKeys, run := shown.Config.LLM, shown.Config.Run
	if llmKeys["timeout"] != "1m30s" || llmKeys["backoff_base"] != "500ms" || llmKeys["backoff_max"] != "20s" || run["phase_timeout"] != "0s" {
		t.Errorf("durations in --json: llm %v, run %v", llmKeys, run)
	}
	if _, ok := llmKeys["rate_limit"]; ok || llmKeys["model"] != "gpt-4o-mini" || llmKeys["rpm"] != 0.0 || llmKeys["tpm"] != 0.0 {
		t.Errorf("other keys lost: %v", llmKeys)
	}
	t.Setenv("ARBITER_LLM_RPM", "6000")
	if code, out, errOut := arbiter(t, "config", "show"); code != 0 || !strings.Contains(out, "rpm: 6000") || !strings.Contains(out, "tpm: 0") {
		t.Errorf("config show with ARBITER_LLM_RPM=6000: exit %d\n%s%s", code, out, errOut)
	}
}
