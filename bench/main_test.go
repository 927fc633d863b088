package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/phases"
	"github.com/arbiter-sim/arbiter/session"
)

// TestMain lets the tests start the stand-in server in a child process by
// re-running this test binary with ServerEnv set, as `arbiter bench`
// re-runs the arbiter binary.
func TestMain(m *testing.M) {
	if os.Getenv(ServerEnv) != "" {
		if err := ServeChild(context.Background(), os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func testLauncher() Launcher { return Launcher{Path: os.Args[0], Args: []string{"-test.run=^$"}} }

// testOptions are small, quick settings: a world of s, a fast fixed-latency
// server, the client as config.yaml configures it.
func testOptions(t testing.TB, s Shape, ticks int) Options {
	client := llm.DefaultConfig()
	client.Concurrency, client.Timeout = 8, 20*time.Second
	return Options{
		Shape:  s,
		Ticks:  ticks,
		Server: ServerConfig{Latency: 5 * time.Millisecond, Tail: TailFixed, Concurrency: 8, Seed: 1},
		Client: client,
		Session: session.Settings{
			Command:  "run",
			Depth:    client.Depth,
			Sections: benchPhases(),
		},
		Seed:     1,
		Launcher: testLauncher(),
		TempDir:  t.TempDir(),
	}
}

// benchPhases are the narrative's phases as the benchmark configures them:
// the bench model, with the built-in max_tokens.
func benchPhases() map[string]session.SectionConfig {
	c := &phases.Config{Intention: session.PhaseConfig{Model: "bench", MaxTokens: 400}}
	c.Resolution.PhaseConfig = session.PhaseConfig{Model: "bench", MaxTokens: 2048}
	return map[string]session.SectionConfig{phases.Section.Key: c}
}
