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
	"time"

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
	readable map[int]bool // the calls (by number) whose answer the client can read
	eligible int          // arbiter answers with characters that ruleBreaker saw
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
					f.readable[c.N] = true
				}
				f.mu.Unlock()
				return ft.reply()
			}
			x -= ft.rate
		}
		f.mu.Lock()
		f.readable[c.N] = true
		f.mu.Unlock()
		return valid(c)
	}
}

// ruleBreaker answers with a valid instance of each request's schema, and
// breaks a world rule the schema cannot express in a share of the arbiter's
// answers (rate of them for each kind): an update for a character
// who does not exist, or a character sent to a location that is not
// reachable. Both must be skipped with an
// apply error while the rest of the location's answer applies.
func (f *faultServer) ruleBreaker(rate float64) openaitest.Handler {
	return func(c *openaitest.Call) openaitest.Reply {
		v, err := openaitest.Instance(c, nil)
		if err != nil {
			return openaitest.Status(400, "invalid_request_error", "", err.Error())
		}
		out, ok := v.(map[string]any)
		chars, _ := out["characters"].(map[string]any)
		if !ok || c.SchemaName() != "MasterOutput" || len(chars) == 0 {
			return openaitest.JSON(v)
		}
		// Every period-th answer breaks each rule, half a period apart, so
		// both are sent however the calls interleave.
		period := max(2, int(1/rate))
		f.mu.Lock()
		f.eligible++
		n := f.eligible
		f.mu.Unlock()
		var first string
		for id := range chars {
			if first == "" || id < first {
				first = id
			}
		}
		switch {
		case n%period == period/2:
			chars["nobody-"+first] = chars[first]
			f.count("unknown id")
		case n%period == 0:
			upd, _ := chars[first].(map[string]any)
			if upd != nil {
				upd["location"] = "nowhere"
				f.count("unreachable destination")
			}
		}
		return openaitest.JSON(out)
	}
}

func (f *faultServer) count(name string) {
	f.mu.Lock()
	f.injected[name]++
	f.mu.Unlock()
}

// ringWorld writes a narrative world of n locations in a ring (each connected
// to the next) and m characters spread over them, and returns its folder.
func ringWorld(t *testing.T, n, m int) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), fmt.Sprintf("ring-%d-%d", n, m))
	for _, d := range []string{"characters", "locations"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("simulation.yaml", fmt.Sprintf("id: ring-%d-%d\ntitle: A ring of rooms\npremise: Rooms in a ring, people walking them.\n", n, m))
	for i := range n {
		write(fmt.Sprintf("locations/l%d.yaml", i), fmt.Sprintf(
			"id: l%d\nname: Room %d\ndescription: a room\nstate: {moment: quiet, description: bare walls}\nconnections: [l%d]\n", i, i, (i+1)%n))
	}
	for i := range m {
		write(fmt.Sprintf("characters/c%d.yaml", i), fmt.Sprintf(
			"id: c%d\nname: Person %d\ndescription: a walker\nstate: {location: l%d, internal_state: calm, external_intent: walk}\n", i, i, i%n))
	}
	return dir
}

// runThroughFaults runs sim for ticks ticks, again after each run that
// stopped on the model (quorum), at most 2*ticks runs, and returns how many
// stopped; any other exit fails the test, as does the key in the output.
func runThroughFaults(t *testing.T, seed int, sim string, ticks int) (stops int) {
	t.Helper()
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
	return stops
}

// faultDB is what the state.db of a run through faults holds: the last
// tick, the ticks without an output for each of its locations, the
// fallbacks without a failed call, the prompt tokens stored, the calls and
// failed calls, the fallbacks and the apply errors.
type faultDB struct {
	last, badTicks, untraced, stored, calls, failed, fallbacks, skipped int
}

// readFaultDB reads the faultDB of sim, a world of locations locations.
func readFaultDB(t *testing.T, sim string, locations int) faultDB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(sim, "state.db")+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := func(query string, dst ...any) {
		t.Helper()
		if err := db.QueryRow(query).Scan(dst...); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
	}
	var f faultDB
	q("SELECT COALESCE(MAX(tick), 0) FROM ticks", &f.last)
	q(fmt.Sprintf(`SELECT COUNT(*) FROM ticks t WHERE (SELECT COUNT(*) FROM outputs o WHERE o.tick = t.tick) != %d`, locations), &f.badTicks)
	q("SELECT COUNT(*) FROM apply_errors", &f.skipped)
	q(`SELECT (SELECT COUNT(*) FROM outputs o WHERE fallback = 1 AND NOT EXISTS (SELECT 1 FROM calls c
			WHERE c.tick = o.tick AND c.entity_key = 'resolution:' || o.location_id AND c.error != ''))
		+ (SELECT COUNT(*) FROM intentions i WHERE fallback = 1 AND NOT EXISTS (SELECT 1 FROM calls c
			WHERE c.tick = i.tick AND c.entity_key = 'intention:' || i.character_id AND c.error != ''))`, &f.untraced)
	q("SELECT COALESCE(SUM(prompt_tokens), 0), COUNT(*), COALESCE(SUM(error != ''), 0) FROM calls", &f.stored, &f.calls, &f.failed)
	q("SELECT (SELECT COUNT(*) FROM outputs WHERE fallback = 1) + (SELECT COUNT(*) FROM intentions WHERE fallback = 1)", &f.fallbacks)
	return f
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
		"ARBITER_LLM_TIMEOUT": "1s", "ARBITER_LLM_BACKOFF_BASE": "1ms", "ARBITER_LLM_BACKOFF_MAX": "20ms",
		"ARBITER_LLM_MAX_RESPONSE_BYTES": "65536", "ARBITER_LLM_CONCURRENCY": "8",
	} {
		t.Setenv(k, v)
	}
	const ticks = 10
	// Worlds of several sizes: demo-sim (5 locations, 6 characters) twice,
	// a ring of 2 rooms and 3 people, a ring of 12 rooms and 30 people.
	worlds := []struct {
		sim       string
		locations int
	}{{demoCopy(t), 5}, {demoCopy(t), 5}, {ringWorld(t, 2, 3), 2}, {ringWorld(t, 12, 30), 12}}
	var (
		committed, calls, failed, fallbacks, stops, skipped int
		injected                                            = map[string]int{}
	)
	for seed, w := range worlds {
		fs := &faultServer{rng: rand.New(rand.NewPCG(uint64(seed), 11)), injected: map[string]int{}, readable: map[int]bool{}}
		srv := openaitest.New(t, fs.handle(fs.ruleBreaker(0.03)))
		t.Setenv("OPENAI_BASE_URL", srv.URL)
		sim := w.sim
		stops += runThroughFaults(t, seed, sim, ticks)
		db := readFaultDB(t, sim, w.locations)
		if db.last != ticks {
			t.Errorf("seed %d: %d ticks committed, want %d", seed, db.last, ticks)
		}
		if db.badTicks > 0 || db.untraced > 0 {
			t.Errorf("seed %d: %d ticks without an output per location, %d fallbacks without a failed call", seed, db.badTicks, db.untraced)
		}
		// A dropped tick stores none of its calls: equality holds only
		// when every tick committed on the first try.
		// The tokens of the readable answers the client still waited for
		// (under load an answer can come after its 1 s timeout).
		fs.mu.Lock()
		served := 0
		for _, c := range srv.Calls() {
			if fs.readable[c.N] && c.Delivered() {
				served += openaitest.DefaultUsage.PromptTokens
			}
		}
		for k, v := range fs.injected {
			injected[k] += v
		}
		fs.mu.Unlock()
		if stops == 0 && db.stored != served || db.stored > served {
			t.Errorf("seed %d: stored prompt tokens %d, the server sent %d", seed, db.stored, served)
		}
		for _, f := range []string{"state.db", "state.db-wal"} {
			b, _ := os.ReadFile(filepath.Join(sim, f))
			if strings.Contains(string(b), leakKey) {
				t.Errorf("seed %d: %s holds the key", seed, f)
			}
		}
		committed, calls, failed, fallbacks, skipped = committed+db.last, calls+db.calls, failed+db.failed, fallbacks+db.fallbacks, skipped+db.skipped
	}
	names := make([]string, 0, len(injected))
	for k := range injected {
		names = append(names, fmt.Sprintf("%s %d", k, injected[k]))
	}
	sort.Strings(names)
	t.Logf("fault suite: %d worlds (demo-sim twice, rings of 2 and 12 rooms), %d ticks committed, %d runs stopped (quorum), %d calls stored, %d failed, %d fallbacks, %d updates skipped; faults injected: %s",
		len(worlds), committed, stops, calls, failed, fallbacks, skipped, strings.Join(names, ", "))
	if injected["unknown id"] == 0 || injected["unreachable destination"] == 0 || skipped < injected["unknown id"]+injected["unreachable destination"] {
		t.Errorf("world-rule faults: %d unknown ids and %d unreachable destinations sent, %d apply errors stored; want each skipped with an apply error",
			injected["unknown id"], injected["unreachable destination"], skipped)
	}
}

// garbage200 are answers of HTTP 200 that are not what a model wrote: a
// web page, a body cut or broken, JSON of another shape, a chat completion
// without choices, bytes; and, once in a while, a chat completion whose
// content is broken JSON (a broken model behind the server).
var garbage200 = []openaitest.Reply{
	openaitest.Raw(200, "text/html", "<html><body>It works!</body></html>"),
	openaitest.Raw(200, "application/json", `{"choices": [}`),
	openaitest.Raw(200, "application/json", `[{"message": "hello"}]`),
	openaitest.Raw(200, "application/json", `{"id": "x", "object": "chat.completion", "choices": []}`),
	openaitest.Raw(200, "application/octet-stream", "\x00\x01\x02\xff"),
	openaitest.Content("I think {the answer"),
}

// TestFaultGarbage200Endpoint runs worlds for many ticks on two endpoints,
// one answering HTTP 200 with garbage (garbage200, in turn) and faster, so
// that it has the more free slots, beside a healthy one: no call falls
// back or fails. An answer that is not an OpenAI-compatible response is
// the endpoint's failure (the call goes to the other at once, the breaker
// takes it out, and its short cooldown lets it fail again and again); a
// broken answer is repaired by the other endpoint. The garbage endpoint
// kept about 70 % of the calls, and 250 of 360 calls fell back.
func TestFaultGarbage200Endpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("fault suite: not in -short")
	}
	cleanEnv(t)
	for k, v := range map[string]string{
		"ARBITER_LLM_MODEL": "test-model", "ARBITER_LLM_TIMEOUT": "5s", "ARBITER_LLM_BACKOFF_BASE": "1ms",
		"ARBITER_LLM_BACKOFF_MAX": "20ms", "ARBITER_LLM_BREAKER_COOLDOWN": "20ms",
	} {
		t.Setenv(k, v)
	}
	const ticks = 10
	worlds := []struct {
		sim       string
		locations int
	}{{demoCopy(t), 5}, {ringWorld(t, 12, 30), 12}}
	for _, w := range worlds {
		var mu sync.Mutex
		sent := 0
		garbage := openaitest.New(t, func(*openaitest.Call) openaitest.Reply {
			mu.Lock()
			defer mu.Unlock()
			sent++
			return garbage200[sent%len(garbage200)]
		})
		healthy := openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
			return openaitest.FromSchema(nil)(c).WithDelay(2 * time.Millisecond)
		})
		t.Setenv("ARBITER_CONFIG", writeConfig(t, fmt.Sprintf("llm:\n  endpoints:\n    - {name: garbage, base_url: %q, concurrency: 8}\n    - {name: healthy, base_url: %q, concurrency: 4}\n", garbage.URL, healthy.URL)))
		if code, out, errOut := arbiter(t, "run", w.sim, "--ticks", fmt.Sprint(ticks)); code != 0 {
			t.Fatalf("%s: run: exit %d\n%s%s", w.sim, code, out, errOut)
		}
		db := readFaultDB(t, w.sim, w.locations)
		if db.last != ticks || db.badTicks != 0 || db.fallbacks != 0 || db.failed != 0 {
			t.Errorf("%s: %d ticks committed, %d without an output per location, %d fallbacks, %d failed calls of %d; want %d ticks, no fallback, no failed call",
				w.sim, db.last, db.badTicks, db.fallbacks, db.failed, db.calls, ticks)
		}
		// Each kind of garbage answered at least once (the breaker may take
		// the endpoint out sooner on a loaded machine: its cooldowns are
		// shorter than a tick there).
		if garbage.CallCount() < len(garbage200) {
			t.Errorf("%s: the garbage endpoint was sent %d calls, fewer than its %d kinds of garbage: the test shows little", w.sim, garbage.CallCount(), len(garbage200))
		}
		t.Logf("%s: %d calls stored, %d fallbacks; the garbage endpoint was sent %d attempts, the healthy one %d",
			filepath.Base(w.sim), db.calls, db.fallbacks, garbage.CallCount(), healthy.CallCount())
	}
}
