package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/bench"
	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestOutOfOrderTicksAreLockstepTicks runs one world with movement three
// ways, in lockstep, out of order (the default) and out of order in two
// runs, against a stand-in model whose every answer (and latency) is a
// function of the whole request, history included: any prompt, history or
// schema that differed would change the answers from there on. The exports
// of every tick are the same byte for byte, and the out-of-order runs did
// start ticks before the one before had ended, so the comparison is not
// between two lockstep runs.
func TestOutOfOrderTicksAreLockstepTicks(t *testing.T) {
	cleanEnv(t)
	lockstepAgainstOutOfOrder(t)
}

// TestOutOfOrderSplitCrowdsAreLockstepTicks is the same comparison with
// phases.resolution.max_characters 2, so a location's crowd is resolved
// in several calls (three characters a location on average, more where
// they gather): out of order, a split location's calls, their merge and
// call 1's update of the location are those of lockstep. Every run did
// split crowds.
func TestOutOfOrderSplitCrowdsAreLockstepTicks(t *testing.T) {
	cleanEnv(t)
	t.Setenv("ARBITER_PHASES_RESOLUTION_MAX_CHARACTERS", "2")
	m := lockstepAgainstOutOfOrder(t)
	for _, name := range []string{"lockstep", "ooo", "ooo-resumed"} {
		if m.later[name] == 0 {
			t.Errorf("%s: no resolution call was a location's second or later: no crowd was split", name)
		} else {
			t.Logf("%s: %d resolution calls were a location's second or later", name, m.later[name])
		}
	}
}

// lockstepAgainstOutOfOrder plays the comparison of
// TestOutOfOrderTicksAreLockstepTicks with the environment the test set,
// and returns the model, which counted the calls.
func lockstepAgainstOutOfOrder(t *testing.T) *determinedModel {
	t.Helper()
	m := &determinedModel{}
	fakeModel(t, m.answer)
	const ticks = 6
	worlds := map[string]string{}
	for _, name := range []string{"lockstep", "ooo", "ooo-resumed"} {
		dir := filepath.Join(t.TempDir(), name)
		if err := bench.Generate(context.Background(), dir, bench.Shape{Characters: 48, Locations: 16}, 3); err != nil {
			t.Fatal(err)
		}
		worlds[name] = dir
	}
	run := func(name string, args ...string) {
		t.Helper()
		m.start(name)
		code, _, errOut := arbiter(t, append([]string{"run", worlds[name], "--concurrency", "6"}, args...)...)
		if code != 0 {
			t.Fatalf("%s: run %v: exit %d\n%s", name, args, code, errOut)
		}
	}
	run("lockstep", "--ticks", strconv.Itoa(ticks), "--lockstep")
	run("ooo", "--ticks", strconv.Itoa(ticks))
	run("ooo-resumed", "--ticks", "2")
	run("ooo-resumed", "--ticks", strconv.Itoa(ticks-2))

	moved := false
	for tick := 1; tick <= ticks; tick++ {
		var want string
		for _, name := range []string{"lockstep", "ooo", "ooo-resumed"} {
			code, out, errOut := arbiter(t, "export", worlds[name], "--format", "json", "--tick", strconv.Itoa(tick))
			if code != 0 {
				t.Fatalf("%s: export --tick %d: exit %d\n%s", name, tick, code, errOut)
			}
			if name == "lockstep" {
				want = out
				moved = moved || movedAt(t, out)
				continue
			}
			if out != want {
				t.Errorf("tick %d: %s export differs from lockstep's:\n%s\nlockstep:\n%s", tick, name, out, want)
			}
		}
	}
	if !moved {
		t.Error("no character moved: the comparison says nothing about moves")
	}
	if n := m.aheadOf("lockstep"); n != 0 {
		t.Errorf("lockstep: %d calls of a tick arrived before the tick before had all its calls made", n)
	}
	if n := m.aheadOf("ooo"); n == 0 {
		t.Error("out of order: no call of a tick arrived before the tick before was over; nothing ran out of order")
	} else {
		t.Logf("out of order: %d calls arrived before the tick before had all its calls answered", n)
	}
	return m
}

// movedAt reports whether some character of an exported state is not where
// it started, by its generated start (character i starts in location i mod
// 16).
func movedAt(t *testing.T, export string) bool {
	t.Helper()
	var st struct {
		Characters map[string]struct {
			Location string `json:"location"`
		} `json:"characters"`
	}
	if err := json.Unmarshal([]byte(export), &st); err != nil {
		t.Fatal(err)
	}
	for id, c := range st.Characters {
		i, _ := strconv.Atoi(strings.TrimPrefix(id, "c"))
		if c.Location != fmt.Sprintf("l%02d", i%16) {
			return true
		}
	}
	return false
}

// determinedModel answers each call from a hash of its whole request (every
// message, the schema) and takes a latency drawn from that hash, 1-12 ms,
// one call in eight 40 ms, so that ticks overlap out of order. It notes,
// per run, when each tick's calls arrive and are answered.
type determinedModel struct {
	tickSpans
	later map[string]int // run -> its resolution calls that were not a location's first
}

func (m *determinedModel) start(run string) {
	m.tickSpans.start(run)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.later == nil {
		m.later = map[string]int{}
	}
}

// tickSpans notes, per run, when each tick's calls (by the tick their
// prompt names) arrive and are answered, to tell whether a run's ticks
// overlapped: out of order they do, in lockstep never.
type tickSpans struct {
	mu    sync.Mutex
	run   string
	spans map[string]map[int]*span // run -> tick -> its calls
}

type span struct {
	firstArrival, lastAnswer time.Time
	calls                    int
}

// start makes run the run whose calls arrive from now on.
func (m *tickSpans) start(run string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.run = run
	if m.spans == nil {
		m.spans = map[string]map[int]*span{}
	}
	if m.spans[run] == nil {
		m.spans[run] = map[int]*span{}
	}
}

// arrived notes call c of the current run, answered after delay.
func (m *tickSpans) arrived(c *openaitest.Call, delay time.Duration) {
	tick := promptTick(c)
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spans[m.run][tick]
	if s == nil {
		s = &span{firstArrival: time.Now()}
		m.spans[m.run][tick] = s
	}
	s.calls++
	if end := time.Now().Add(delay); end.After(s.lastAnswer) {
		s.lastAnswer = end
	}
}

// aheadOf counts the calls of a run that arrived while a call of the tick
// before was still to be answered: the run's ticks overlapped.
func (m *tickSpans) aheadOf(run string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for tick, s := range m.spans[run] {
		if before := m.spans[run][tick-1]; before != nil && s.firstArrival.Before(before.lastAnswer) {
			n += s.calls
		}
	}
	return n
}

// overlaps counts, over every run, the ticks that followed another in the
// same run (pairs) and those of them whose first call arrived before the
// tick before had its last answer (over).
func (m *tickSpans) overlaps() (over, pairs int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ticks := range m.spans {
		for tick, s := range ticks {
			if before := ticks[tick-1]; before != nil {
				pairs++
				if s.firstArrival.Before(before.lastAnswer) {
					over++
				}
			}
		}
	}
	return over, pairs
}

// checkOutOfOrder fails t when no tick spans saw began before the tick
// before had its answers: the runs did not play out of order, the default.
// With demo-sim's wharf arbiter the slowest call, apothecary and
// undercroft, whose neighbourhoods do not hold wharf, start their next
// tick before wharf has resolved whenever someone is in them: most ticks.
// Under 10 ticks that followed another in the same run (a loaded machine,
// every kill early) it only says so.
func checkOutOfOrder(t *testing.T, spans *tickSpans) {
	t.Helper()
	over, pairs := spans.overlaps()
	switch {
	case pairs < 10:
		t.Logf("out of order: only %d ticks followed another in the same run, too few to tell whether they overlapped", pairs)
	case over == 0:
		t.Errorf("no tick of %d began before the tick before had its answers: the runs did not play out of order", pairs)
	default:
		t.Logf("out of order: %d of %d ticks began before the tick before had its answers", over, pairs)
	}
}

var tickLine = regexp.MustCompile(`(?m)^(?:Tick|Resolve tick) (\d+)`)

// promptTick is the tick a narrative call is for, as its prompt says
// (both default user prompts begin "Tick N"); 0 when it says none.
func promptTick(c *openaitest.Call) int {
	m := tickLine.FindStringSubmatch(c.LastUserMessage())
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func (m *determinedModel) answer(c *openaitest.Call) openaitest.Reply {
	h := sha256.New()
	for _, msg := range c.Messages() {
		fmt.Fprintf(h, "%s\x00%s\x00", msg.Role, msg.Content)
	}
	h.Write(c.Schema())
	sum := h.Sum(nil)
	pick := func(salt, n int) int {
		return int(binary.BigEndian.Uint64(sum[(salt%4)*8:]) >> (salt / 4) % uint64(n))
	}
	delay := time.Duration(1+pick(0, 12)) * time.Millisecond
	if pick(1, 8) == 0 {
		delay = 40 * time.Millisecond
	}
	m.arrived(c, delay)
	tag := fmt.Sprintf("%x", sum[:6])
	if c.SchemaName() == "IntentionResponse" {
		return openaitest.JSON(map[string]string{"intention": "I try the plan marked " + tag + "."}).WithDelay(delay)
	}
	answer, later, err := resolutionAnswer(c.Schema(), tag, pick)
	if err != nil {
		return openaitest.Status(400, "invalid_request_error", "", err.Error())
	}
	if later {
		m.mu.Lock()
		m.later[m.run]++
		m.mu.Unlock()
	}
	return openaitest.JSON(answer).WithDelay(delay)
}

// resolutionAnswer is an arbiter's answer under schema raw: every
// character goes to a location of its enum that pick chooses, each text
// marked with tag. later says the call is not its location's first, whose
// schema leaves the location's update to call 1 (it allows only null
// there). A schema without a character's location enum is an error.
func resolutionAnswer(raw json.RawMessage, tag string, pick func(salt, n int) int) (answer any, later bool, err error) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Defs       map[string]json.RawMessage `json:"$defs"`
	}
	if err := json.Unmarshal(raw, &schema); err != nil {
		return nil, false, err
	}
	var chars struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	json.Unmarshal(schema.Properties["characters"], &chars)
	updates := map[string]any{}
	i := 2
	for _, id := range sortedIDs(chars.Properties) {
		var node struct {
			Ref        string                     `json:"$ref"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		json.Unmarshal(chars.Properties[id], &node)
		if node.Ref != "" {
			json.Unmarshal(schema.Defs[strings.TrimPrefix(node.Ref, "#/$defs/")], &node)
		}
		var where struct {
			Enum []string `json:"enum"`
		}
		json.Unmarshal(node.Properties["location"], &where)
		if len(where.Enum) == 0 {
			return nil, false, errors.New("characters." + id + " has no location enum")
		}
		i++
		dest := where.Enum[pick(i, len(where.Enum))]
		updates[id] = map[string]any{
			"location":        dest,
			"internal_state":  "Thinking over " + tag + ".",
			"external_intent": "Off to " + dest + " (" + tag + ").",
			"memory_entry":    fmt.Sprintf("In %v at tick %v: %s.", schemaValue(schema.Properties["location_id"]), schemaValue(schema.Properties["tick"]), tag),
		}
	}
	var place struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	json.Unmarshal(schema.Properties["location"], &place)
	var moment any = "The hour of " + tag + "."
	if later = place.Properties["moment"].Type == "null"; later {
		moment = nil
	}
	return map[string]any{
		"tick":        schemaValue(schema.Properties["tick"]),
		"location_id": schemaValue(schema.Properties["location_id"]),
		"characters":  updates,
		"location":    map[string]any{"moment": moment, "description": nil},
	}, later, nil
}

// schemaValue is the one value a property's schema allows: its const, or
// the first of its enum; nil when it has neither.
func schemaValue(raw json.RawMessage) any {
	var p struct {
		Const any   `json:"const"`
		Enum  []any `json:"enum"`
	}
	json.Unmarshal(raw, &p)
	if p.Const != nil {
		return p.Const
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	return nil
}

func sortedIDs(m map[string]json.RawMessage) []string {
	return slices.Sorted(maps.Keys(m))
}
