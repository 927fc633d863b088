package main

import (
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/session"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// Every integer setting is read as an integer, with its bound named:
// 9223372036854775808 was reported as -9223372036854775808, and 1.5 taken
// for 1 without a word.
func TestConfigIntegersReadAsIntegers(t *testing.T) {
	cleanEnv(t)
	for _, tc := range []struct {
		name, yaml, env, value string
		want                   string // "" = accepted
	}{
		{"past int64", "phases:\n  resolution:\n    max_characters: 9223372036854775808\n", "", "",
			"config phases.resolution.max_characters: must be a whole number from 0 to 5000, got 9223372036854775808"},
		{"a fraction", "phases:\n  resolution:\n    max_characters: 1.5\n", "", "",
			"config phases.resolution.max_characters: must be a whole number from 0 to 5000, got 1.5"},
		{"a fraction from the environment", "", "ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "1.5",
			"config phases.resolution.max_characters: must be a whole number from 0 to 5000, got 1.5"},
		{"past int64 from the environment", "", "ARBITER_RUN_TOKEN_BUDGET", "99999999999999999999",
			"config run.token_budget: must be a whole number from 0 to 1000000000000000, got 99999999999999999999"},
		{"a word", "llm:\n  depth: three\n", "", "", `config llm.depth: must be a whole number from 0 to 1000, got "three"`},
		{"true", "chronicle:\n  window: true\n", "", "", "config chronicle.window: must be a whole number from 0 to 1000000, got true"},
		{"below its bound", "llm:\n  max_attempts: 0\n", "", "", "config llm.max_attempts: must be a whole number from 1 to 100, got 0"},
		{"an endpoint's", "llm:\n  endpoints:\n    - {base_url: \"http://a/v1\", rpm: 2.5}\n", "", "",
			"config llm.endpoints[0].rpm: must be a whole number from 0 to 1000000000, got 2.5"},
		{"an endpoint's context", "llm:\n  endpoints:\n    - {base_url: \"http://a/v1\", context_tokens: -1}\n", "", "",
			"config llm.endpoints[0].context_tokens: must be a whole number from 0 to 100000000, got -1"},
		{"a whole float", "phases:\n  resolution:\n    max_characters: 12.0\n", "", "", ""},
		{"at its bound", "phases:\n  resolution:\n    max_characters: 5000\n", "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := ""
			if tc.yaml != "" {
				file = writeConfig(t, tc.yaml)
			}
			if tc.env != "" {
				t.Setenv(tc.env, tc.value)
			}
			c, err := loadConfig(file, nil, nil)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				if n := c.Kinds["phases"].(*phases.Config).Resolution.MaxCharacters; tc.name == "a whole float" && n != 12 {
					t.Errorf("max_characters %d, want 12", n)
				}
			case err == nil || exitCode(err) != ExitUsage || err.Error() != tc.want:
				t.Errorf("err = %v, want exactly %q (exit %d)", err, tc.want, ExitUsage)
			}
		})
	}
	// Through the CLI: one line, exit 2, nothing run.
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "9223372036854775808")
	code, out, errOut := arbiter(t, "config", "show")
	if want := "arbiter: config phases.resolution.max_characters: must be a whole number from 0 to 5000, got 9223372036854775808\n"; code != ExitUsage || out != "" || errOut != want {
		t.Errorf("config show: exit %d\n%s%s\nwant exit %d and %q", code, out, errOut, ExitUsage, want)
	}
}

// allIntSettings names every integer field of Config and of the kinds'
// sections, and endpointInts every one of an endpoint: a setting added without a bound would be read as
// decoding reads it, wrapping and truncating.
func TestConfigIntegersAllBounded(t *testing.T) {
	var ints []string
	var walk func(typ reflect.Type, prefix string)
	walk = func(typ reflect.Type, prefix string) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			key := prefix + tag
			if tag == "" {
				key = strings.TrimSuffix(prefix, ".") // squashed
			}
			switch {
			case !f.IsExported():
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, key+".")
			case f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() == reflect.Struct:
				walk(f.Type.Elem(), key+"[].")
			case f.Type.Kind() >= reflect.Int && f.Type.Kind() <= reflect.Int64 && f.Type.PkgPath() == "": // not time.Duration
				list, _, inList := strings.Cut(key, "[]")
				if _, read := allDefaults()[list]; read || !inList { // chronicle.endpoints and games.endpoints are not read
					ints = append(ints, key)
				}
			}
		}
	}
	walk(reflect.TypeFor[Config](), "")
	for _, sec := range session.Sections() {
		walk(reflect.TypeOf(sec.New()).Elem(), sec.Key+".")
	}
	intSettings, defaults := allIntSettings(), allDefaults()
	var bounded []string
	for _, s := range intSettings {
		bounded = append(bounded, s.key)
	}
	for _, list := range endpointListKeys() {
		for _, s := range endpointInts {
			bounded = append(bounded, list+"[]."+s.key)
		}
	}
	for _, key := range ints {
		if !slices.Contains(bounded, key) {
			t.Errorf("integer setting %s has no bound in intSettings", key)
		}
	}
	for _, s := range intSettings {
		if _, ok := defaults[s.key]; !ok || !slices.Contains(ints, s.key) {
			t.Errorf("intSettings names %s, which is no integer key of the defaults and Config", s.key)
		}
		if n, ok := wholeNumber(defaults[s.key]); !ok || n < s.min || n > s.max {
			t.Errorf("%s: default %v is outside its bounds %d..%d", s.key, defaults[s.key], s.min, s.max)
		}
	}
	if len(ints) < len(intSettings) {
		t.Errorf("found %d integer fields, fewer than the %d settings bounded: the walk is broken", len(ints), len(intSettings))
	}
}

// llm.concurrency and an endpoint's concurrency have a bound, named when
// a value passes it: 1,000,000 took 5.35 GB for a tick of 72 calls.
func TestConfigConcurrencyBounded(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	t.Setenv("ARBITER_LLM_CONCURRENCY", "1000000")
	code, out, errOut := arbiter(t, "run", sim, "-n", "1")
	if want := "arbiter: config llm.concurrency: must be a whole number from 1 to 10000, got 1000000\n"; code != ExitUsage || out != "" || errOut != want {
		t.Errorf("run: exit %d\n%s%s\nwant exit %d and %q", code, out, errOut, ExitUsage, want)
	}
	if exists(filepath.Join(sim, "state.db")) {
		t.Error("a refused run left a state.db")
	}
	t.Setenv("ARBITER_LLM_CONCURRENCY", "")
	file := writeConfig(t, "llm:\n  endpoints:\n    - {name: a, base_url: \"http://a/v1\", concurrency: 99999999999}\n")
	if _, err := loadConfig(file, nil, nil); err == nil || err.Error() != "config llm.endpoints[0].concurrency: must be a whole number from 0 to 10000, got 99999999999" {
		t.Errorf("endpoint concurrency: err = %v", err)
	}
	t.Setenv("ARBITER_LLM_CONCURRENCY", "10000")
	if code, out, errOut := arbiter(t, "run", sim, "-n", "1"); code != 0 {
		t.Errorf("run at the bound: exit %d\n%s%s", code, out, errOut)
	}
}

// Two endpoints of one name are refused, naming both entries: status
// merged them into one row.
func TestConfigDuplicateEndpointNamesRefused(t *testing.T) {
	cleanEnv(t)
	file := writeConfig(t, `llm:
  endpoints:
    - {name: gpu, base_url: "http://10.0.0.1:8000/v1"}
    - {name: gpu, base_url: "http://10.0.0.2:8000/v1"}
phases:
  resolution:
    endpoints:
      - {name: gpu, base_url: "http://10.0.0.1:8000/v1"}
`)
	_, err := loadConfig(file, nil, nil)
	want := `config llm.endpoints[0] and llm.endpoints[1] are both named "gpu": give each endpoint a name of its own`
	if err == nil || exitCode(err) != ExitUsage || err.Error() != want {
		t.Errorf("err = %v, want exactly %q", err, want)
	}
}
