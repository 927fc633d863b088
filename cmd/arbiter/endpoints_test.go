package main

import (
	"encoding/json"
	"fmt"
	"github.com/arbiter-sim/arbiter/phases"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
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
	resolution := func(c Config) []EndpointConfig { return c.Kinds["phases"].(*phases.Config).Resolution.Endpoints }
	if red := c.redacted(); resolution(red)[0].APIKey != "****" || resolution(*c)[0].APIKey == "****" {
		t.Errorf("redacted %+v (original must stay)", resolution(red))
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

// issue 27 item 1: status, usage and the manifest say which endpoint
// answered each call, a game's tool-using seat and a chronicle's chat
// included, not only the narrative's structured calls.
func TestGameAndChatCallsNameTheirEndpoint(t *testing.T) {
	submit := openaitest.Always(openaitest.ToolCalls(openaitest.Tool("submit", "submit_orders", map[string]any{"orders": []any{}})))
	for _, tc := range []struct {
		name    string
		handler openaitest.Handler
		play    func(t *testing.T) string
	}{
		{"conquest model seat", submit, func(t *testing.T) string {
			dir := gameCopy(t, "conquest-demo")
			seatModel(t, dir)
			if code, out, errOut := arbiter(t, "run", dir, "--ticks", "1"); code != 0 {
				t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
			}
			return dir
		}},
		{"chronicle chat", openaitest.Always(openaitest.Content("Hello, co-author.")), func(t *testing.T) string {
			dir := chronicleCopy(t)
			if code, out, errOut := arbiterIn(t, "Hi\n/quit\n", "chat", dir); code != 0 {
				t.Fatalf("chat: exit %d\n%s%s", code, out, errOut)
			}
			return dir
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cleanEnv(t)
			srv := fakeModel(t, tc.handler)
			dir := tc.play(t)
			code, out, errOut := arbiter(t, "usage", dir, "--json")
			if code != 0 {
				t.Fatalf("usage --json: exit %d\n%s", code, errOut)
			}
			var rep struct {
				ByEndpoint []struct {
					Key   string `json:"key"`
					Calls int    `json:"calls"`
				} `json:"by_endpoint"`
			}
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("usage --json: %v\n%s", err, out)
			}
			host := strings.TrimPrefix(srv.URL, "http://")
			if len(rep.ByEndpoint) != 1 || !strings.Contains(rep.ByEndpoint[0].Key, host) || rep.ByEndpoint[0].Calls != srv.CallCount() {
				t.Errorf("by_endpoint %+v, want the one server (%s) with its %d calls", rep.ByEndpoint, srv.URL, srv.CallCount())
			}
		})
	}
}

// An endpoint whose every attempt failed answered no call, yet status and
// usage give it a row with its failures, as they do every endpoint
// configured: they left it out, and its failures were in the run's own
// output alone.
func TestStatusAndUsageShowEndpointThatFailedEveryAttempt(t *testing.T) {
	cleanEnv(t)
	up := openaitest.New(t, openaitest.FromSchema(nil))
	down := openaitest.New(t, openaitest.Always(openaitest.Status(500, "server_error", "", "boom")))
	t.Setenv("ARBITER_LLM_MODEL", "test-model")
	t.Setenv("ARBITER_CONFIG", writeConfig(t, fmt.Sprintf("llm:\n  endpoints:\n    - {name: down, base_url: %q, concurrency: 8}\n    - {name: up, base_url: %q, concurrency: 2}\n", down.URL, up.URL)))
	sim := demoCopy(t)
	if code, out, errOut := arbiter(t, "run", sim, "-n", "1"); code != 0 {
		t.Fatalf("run: exit %d\n%s%s", code, out, errOut)
	}
	if down.CallCount() == 0 {
		t.Fatal("down was sent no call: the test shows nothing")
	}
	type row struct {
		Key              string `json:"key"`
		Calls            int    `json:"calls"`
		EndpointFailures int    `json:"endpoint_failures"`
	}
	want := []row{{"down", 0, down.CallCount()}, {"up", up.CallCount(), 0}}
	for _, cmd := range []string{"status", "usage"} {
		code, out, errOut := arbiter(t, cmd, sim, "--json")
		if code != 0 {
			t.Fatalf("%s --json: exit %d\n%s", cmd, code, errOut)
		}
		var rep struct {
			ByEndpoint []row `json:"by_endpoint"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s --json: %v\n%s", cmd, err, out)
		}
		if !reflect.DeepEqual(rep.ByEndpoint, want) {
			t.Errorf("%s --json: by_endpoint %+v, want %+v", cmd, rep.ByEndpoint, want)
		}
		code, out, errOut = arbiter(t, cmd, sim)
		line := fmt.Sprintf("down (%s failed)", plural(down.CallCount(), "attempt"))
		if code != 0 || !strings.Contains(out, line) || !strings.Contains(out, "up") {
			t.Errorf("%s: exit %d, want a line of %q\n%s%s", cmd, code, line, out, errOut)
		}
	}
}
