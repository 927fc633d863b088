package localmodel

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Environment variables that point the integration tests at an endpoint.
const (
	EnvBaseURL = "OPENAI_BASE_URL"
	EnvAPIKey  = "OPENAI_API_KEY"
	EnvModel   = "ARBITER_LLM_MODEL"
)

// Depth is the llm.depth a simulation runs with on the local model, as
// scripts/local-model.sh exports it (ARBITER_LLM_DEPTH): with past
// exchanges sent back, demo-sim's resolution prompts pass the model's
// window (the Modelfile's num_ctx) by tick 3; its memories carry the story
// on.
const Depth = 0

// Timeout is the llm.timeout of a call to the local model, as
// scripts/local-model.sh exports it (ARBITER_LLM_TIMEOUT): one thread reads
// a prompt of several thousand tokens, slowly on a busy machine.
const Timeout = 5 * time.Minute

const (
	openAIBaseURL = "https://api.openai.com/v1"
	openAIModel   = "gpt-4o-mini"
	// LocalAPIKey is the key ForTest gives for the local server, which
	// ignores it; clients that insist on a key get one.
	LocalAPIKey = "local"
)

// Endpoint is where the integration tests send requests.
type Endpoint struct {
	BaseURL, APIKey, Model string
}

// EndpointFromEnv reads the configured endpoint: ok is false when neither
// OPENAI_BASE_URL nor OPENAI_API_KEY is set. A key alone means OpenAI
// (default model gpt-4o-mini); any other base URL needs ARBITER_LLM_MODEL.
func EndpointFromEnv(getenv func(string) string) (ep Endpoint, ok bool, err error) {
	ep = Endpoint{BaseURL: getenv(EnvBaseURL), APIKey: getenv(EnvAPIKey), Model: getenv(EnvModel)}
	if ep.BaseURL == "" && ep.APIKey == "" {
		return Endpoint{}, false, nil
	}
	if ep.BaseURL == "" {
		ep.BaseURL = openAIBaseURL
	}
	if ep.Model == "" {
		if ep.BaseURL != openAIBaseURL {
			return ep, true, fmt.Errorf("%s=%s is set but %s is not: set it to a model that endpoint serves", EnvBaseURL, ep.BaseURL, EnvModel)
		}
		ep.Model = openAIModel
	}
	return ep, true, nil
}

// shared is the one local server of a test binary whose TestMain calls Main.
var shared struct {
	inMain atomic.Bool
	once   sync.Once
	srv    *Server
	skip   string // why no server can be had; the tests skip
	err    error  // the server could be had but failed; the tests fail
}

// ForTest returns the endpoint an integration test should use: the one
// configured by OPENAI_BASE_URL / OPENAI_API_KEY / ARBITER_LLM_MODEL when
// set, else a local Ollama serving the GGUF model, started on first use. With
// Main in TestMain the local server is shared by the test binary and stopped
// after the tests; without it each call starts its own, stopped by
// t.Cleanup. When no server can be had (no GGUF file, no ollama and no way to
// build it) the test is skipped with the reason and what to set, or fails if
// ARBITER_REQUIRE_MODEL is set.
func ForTest(t testing.TB) (baseURL, apiKey, model string) {
	t.Helper()
	if ep, ok, err := EndpointFromEnv(os.Getenv); ok {
		if err != nil {
			t.Fatal(err)
		}
		return ep.BaseURL, ep.APIKey, ep.Model
	}

	if !shared.inMain.Load() {
		srv, skip, err := startForTest(t)
		switch {
		case skip != "":
			skipOrFail(t, skip)
		case err != nil:
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if err := srv.Stop(); err != nil {
				t.Error(err)
			}
		})
		t.Log("localmodel: no TestMain calling localmodel.Main, so this test has a server of its own")
		return srv.BaseURL(), LocalAPIKey, srv.Model()
	}

	shared.once.Do(func() { shared.srv, shared.skip, shared.err = startForTest(t) })
	switch {
	case shared.skip != "":
		skipOrFail(t, shared.skip)
	case shared.err != nil:
		t.Fatal(shared.err)
	}
	return shared.srv.BaseURL(), LocalAPIKey, shared.srv.Model()
}

// EnvRequire, when set to anything, turns ForTest's skips into failures: CI
// sets it so that a machine that cannot run the model fails rather than
// passing with every integration test skipped.
const EnvRequire = "ARBITER_REQUIRE_MODEL"

func skipOrFail(t testing.TB, reason string) {
	t.Helper()
	if os.Getenv(EnvRequire) != "" {
		t.Fatalf("%s (and %s is set)", reason, EnvRequire)
	}
	t.Skip(reason)
}

// startForTest starts a local server. A model file or ollama binary that is
// not there by default is a reason to skip; one named by ARBITER_GGUF or
// ARBITER_OLLAMA_BIN that is not there, or a failure to start what is there,
// is an error.
func startForTest(t testing.TB) (srv *Server, skip string, err error) {
	t.Helper()
	const what = "set " + EnvBaseURL + " / " + EnvAPIKey + " (and " + EnvModel + ") to use an endpoint, " +
		"or ARBITER_GGUF (a .gguf file) and ARBITER_OLLAMA_BIN for the local server"
	gguf, err := DefaultGGUF()
	switch {
	case err != nil && os.Getenv("ARBITER_GGUF") != "":
		return nil, "", err
	case err != nil:
		return nil, fmt.Sprintf("no local model: %v; %s", err, what), nil
	}
	began := time.Now()
	bin, err := FindOrBuild(t.Context())
	switch {
	case err != nil && os.Getenv("ARBITER_OLLAMA_BIN") != "":
		return nil, "", err
	case err != nil:
		return nil, fmt.Sprintf("no ollama %s: %v; %s", OllamaVersion, err, what), nil
	}
	found := time.Now()
	srv, err = Start(t.Context(), Options{GGUF: gguf, Binary: bin})
	if err != nil {
		return nil, "", fmt.Errorf("local model server: %w", err)
	}
	t.Logf("localmodel: %s serving %s at %s (ollama found/built in %s, started in %s)",
		bin, srv.Model(), srv.BaseURL(), found.Sub(began).Round(time.Millisecond), time.Since(found).Round(time.Millisecond))
	return srv, "", nil
}

// Main runs the tests of a package that uses ForTest and then stops the
// shared local server:
//
//	func TestMain(m *testing.M) { os.Exit(localmodel.Main(m)) }
//
// A TestMain with setup of its own calls Main in place of m.Run. A failure to
// stop the server turns a passing run into exit code 1.
func Main(m *testing.M) int {
	shared.inMain.Store(true)
	code := m.Run()
	if err := stopShared(); err != nil {
		fmt.Fprintln(os.Stderr, "localmodel:", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// stopShared stops the shared local server if ForTest started one.
func stopShared() error {
	if shared.srv == nil {
		return nil
	}
	if err := shared.srv.Stop(); err != nil {
		return errors.Join(errors.New("stop the shared local model server"), err)
	}
	return nil
}
