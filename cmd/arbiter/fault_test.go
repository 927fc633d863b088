package main

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// faults is what the fault server injects, each with its share of calls;
// the rest are valid answers. A fault's reply counts its usage when the
// client can read it (an answer it refuses for size, or a cut body, it
// cannot).
var faults = []struct {
	name  string
	rate  float64
	usage bool
	reply func() openaitest.Reply
}{
	{"429 Retry-After", 0.04, false, func() openaitest.Reply {
		return openaitest.Status(429, "rate_limit", "", "slow down").WithHeader("Retry-After-Ms", "2")
	}},
	{"429", 0.03, false, func() openaitest.Reply { return openaitest.Status(429, "rate_limit", "", "slow down") }},
	{"500", 0.02, false, func() openaitest.Reply { return openaitest.Status(500, "server_error", "", "boom") }},
	{"502", 0.02, false, func() openaitest.Reply { return openaitest.Raw(502, "text/html", "<html>bad gateway</html>") }},
	{"503", 0.02, false, func() openaitest.Reply { return openaitest.Status(503, "server_error", "", "overloaded") }},
	{"reset", 0.03, false, openaitest.Disconnect},
	{"hang", 0.02, false, openaitest.Hang},
	{"cut body", 0.02, false, func() openaitest.Reply {
		return openaitest.Raw(200, "application/json", `{"choices":[{"index":0,"message":{"role":"assist`)
	}},
	{"oversized", 0.02, false, func() openaitest.Reply { return openaitest.Content(strings.Repeat("x", 100<<10)) }},
	{"invalid JSON", 0.03, true, func() openaitest.Reply { return openaitest.Content("I think {the answer") }},
	{"schema", 0.03, true, func() openaitest.Reply { return openaitest.Content(`{"unexpected": true}`) }},
	{"refusal", 0.02, true, func() openaitest.Reply { return openaitest.Refusal("I cannot help with that") }},
	{"length", 0.02, true, func() openaitest.Reply { return openaitest.Truncated(`{"tick": 1, "locat`) }},
	{"auth echo", 0.02, false, func() openaitest.Reply {
		return openaitest.Status(500, "server_error", "", "upstream said: Authorization: Bearer "+leakKey)
	}},
}

// faultServer answers calls with faults at their rates (seeded) and valid
// answers otherwise, counting what it sent.
type faultServer struct {
	mu       sync.Mutex
	rng      *rand.Rand
	injected map[string]int
	prompt   int // prompt tokens of the answers the client can read
}

func (f *faultServer) handle(valid openaitest.Handler) openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		f.mu.Lock()
		x := f.rng.Float64()
		f.mu.Unlock()
		for _, ft := range faults {
			if x < ft.rate {
				f.mu.Lock()
				f.injected[ft.name]++
				if ft.usage {
					f.prompt += openaitest.DefaultUsage.PromptTokens
				}
				f.mu.Unlock()
				return ft.reply()
			}
			x -= ft.rate
		}
		f.mu.Lock()
		f.prompt += openaitest.DefaultUsage.PromptTokens
		f.mu.Unlock()
		return valid(c)
	}
}

// TestFaultSuite runs demo-sim for many ticks against a server injecting
// every fault above: no crash; every committed tick has an output for every
// location; every fallback is a call that failed; stored usage is what the
// server sent in readable answers; the key appears nowhere.
func TestFaultSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: not in -short")
	}
	cleanEnv(t)
	for k, v := range map[string]string{
		"OPENAI_API_KEY": leakKey, "ARBITER_LLM_MODEL": "test-model",
		"ARBITER_LLM_TIMEOUT": "300ms", "ARBITER_LLM_BACKOFF_BASE": "1ms", "ARBITER_LLM_BACKOFF_MAX": "20ms",
		"ARBITER_LLM_MAX_RESPONSE_BYTES": "65536", "ARBITER_LLM_CONCURRENCY": "8",
	} {
		t.Setenv(k, v)
	}
	const seeds, ticks = 4, 10
	var (
		committed, calls, failed, fallbacks, stops int
		injected                                   = map[string]int{}
	)
	for seed := range seeds {
		fs := &faultServer{rng: rand.New(rand.NewPCG(uint64(seed), 11)), injected: map[string]int{}}
		srv := openaitest.New(t, fs.handle(openaitest.FromSchema(nil)))
		t.Setenv("OPENAI_BASE_URL", srv.URL)
		sim := demoCopy(t)
		for run := 0; run < 2*ticks; run++ {
			code, out, errOut := arbiter(t, "run", sim, "--ticks", fmt.Sprint(ticks))
			assertNoLeak(t, "run", out+errOut)
			if code != 0 && code != ExitModel {
				t.Fatalf("seed %d: run exit %d\n%s%s", seed, code, out, errOut)
			}
			if code == 0 {
				break
			}
			stops++
		}
		db, err := sql.Open("sqlite", "file:"+filepath.Join(sim, "state.db")+"?mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		var last, badTicks, untraced, stored, n, nf int
		q := func(query string, dst ...any) {
			t.Helper()
			if err := db.QueryRow(query).Scan(dst...); err != nil {
				t.Fatalf("%s: %v", query, err)
			}
		}
		q("SELECT COALESCE(MAX(tick), 0) FROM ticks", &last)
		q(`SELECT COUNT(*) FROM ticks t WHERE (SELECT COUNT(*) FROM outputs o WHERE o.tick = t.tick) != 5`, &badTicks)
		q(`SELECT (SELECT COUNT(*) FROM outputs o WHERE fallback = 1 AND NOT EXISTS (SELECT 1 FROM calls c
				WHERE c.tick = o.tick AND c.entity_key = 'resolution:' || o.location_id AND c.error != ''))
			+ (SELECT COUNT(*) FROM intentions i WHERE fallback = 1 AND NOT EXISTS (SELECT 1 FROM calls c
				WHERE c.tick = i.tick AND c.entity_key = 'intention:' || i.character_id AND c.error != ''))`, &untraced)
		q("SELECT COALESCE(SUM(prompt_tokens), 0), COUNT(*), COALESCE(SUM(error != ''), 0) FROM calls", &stored, &n, &nf)
		var fb int
		q("SELECT (SELECT COUNT(*) FROM outputs WHERE fallback = 1) + (SELECT COUNT(*) FROM intentions WHERE fallback = 1)", &fb)
		db.Close()
		if last != ticks {
			t.Errorf("seed %d: %d ticks committed, want %d", seed, last, ticks)
		}
		if badTicks > 0 || untraced > 0 {
			t.Errorf("seed %d: %d ticks without an output per location, %d fallbacks without a failed call", seed, badTicks, untraced)
		}
		// A dropped tick stores none of its calls: equality holds only
		// when every tick committed on the first try.
		fs.mu.Lock()
		served := fs.prompt
		for k, v := range fs.injected {
			injected[k] += v
		}
		fs.mu.Unlock()
		if stops == 0 && stored != served || stored > served {
			t.Errorf("seed %d: stored prompt tokens %d, the server sent %d", seed, stored, served)
		}
		for _, f := range []string{"state.db", "state.db-wal"} {
			b, _ := os.ReadFile(filepath.Join(sim, f))
			if strings.Contains(string(b), leakKey) {
				t.Errorf("seed %d: %s holds the key", seed, f)
			}
		}
		committed, calls, failed, fallbacks = committed+last, calls+n, failed+nf, fallbacks+fb
	}
	names := make([]string, 0, len(injected))
	for k := range injected {
		names = append(names, fmt.Sprintf("%s %d", k, injected[k]))
	}
	sort.Strings(names)
	t.Logf("fault suite: %d runs of demo-sim, %d ticks committed, %d runs stopped (quorum), %d calls stored, %d failed, %d fallbacks; faults injected: %s",
		seeds, committed, stops, calls, failed, fallbacks, strings.Join(names, ", "))
}
