package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/session"
)

// storyModel complies with every request, except that Pip's intention call
// is refused (so it falls back) and the arbiter walks Pip from the wharf to
// the lock.
func storyModel(t *testing.T) {
	t.Helper()
	comply := openaitest.FromSchema(func(ptr string, enum []any) any {
		if ptr == "/characters/pip/location" {
			for _, v := range enum {
				if v == "lock" {
					return v
				}
			}
		}
		return nil
	})
	fakeModel(t, openaitest.Match(comply, openaitest.Route{
		If: func(c *openaitest.Call) bool {
			return c.SchemaName() == "IntentionResponse" && strings.Contains(c.SystemMessage(), "Pip")
		},
		Then: openaitest.Always(openaitest.Refusal("I won't play Pip.")),
	}))
}

func TestStory(t *testing.T) {
	cleanEnv(t)
	storyModel(t)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}

	code, out, errOut := arbiter(t, "story", sim)
	if code != 0 {
		t.Fatalf("story: exit %d\n%s", code, errOut)
	}
	for _, want := range []string{
		"tick 1\n", "tick 2\n",
		"Sallow Wharf (wharf): ",
		"    Pip (pip)\n      intends:    [fallback: the call failed, the earlier intent stood] Trade what was seen",
		"      moved:      wharf -> lock\n",
		"      remembers:  characters/pip/memory_entry",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("story lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "moved:"); n != 1 {
		t.Errorf("story shows %d moves, want 1 (Pip at tick 1; at tick 2 Pip starts at the lock):\n%s", n, out)
	}

	code, out, errOut = arbiter(t, "story", sim, "--tick", "2", "--character", "pip", "--json")
	if code != 0 {
		t.Fatalf("story --json: exit %d\n%s", code, errOut)
	}
	var st session.Story
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("story --json: %v\n%s", err, out)
	}
	if st.From != 2 || st.To != 2 || len(st.Ticks) != 1 || len(st.Ticks[0].Locations) != 1 {
		t.Fatalf("story --tick 2 --character pip: %+v", st)
	}
	loc := st.Ticks[0].Locations[0]
	if loc.ID != "lock" || len(loc.Characters) != 1 {
		t.Fatalf("pip at tick 2: %+v", loc)
	}
	pip := loc.Characters[0]
	if pip.ID != "pip" || !pip.IntentionFallback || pip.From != "lock" || pip.To != "lock" || len(pip.Memory) != 1 || loc.Moment == "" {
		t.Errorf("pip at tick 2: %+v (moment %q)", pip, loc.Moment)
	}

	code, out, _ = arbiter(t, "story", sim, "--from", "1", "--to", "1", "--location", "wharf", "--json")
	if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil || len(st.Ticks) != 1 || len(st.Ticks[0].Locations) != 1 || st.Ticks[0].Locations[0].ID != "wharf" {
		t.Errorf("story --location wharf: exit %d, %v: %s", code, err, out)
	}
}

func TestStoryUsageErrors(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "story", sim, "--tick", "1"); code != ExitUsage || !strings.Contains(errOut, "no tick committed yet") {
		t.Errorf("story --tick 1 before a run: exit %d\n%s", code, errOut)
	}
	if code, out, _ := arbiter(t, "story", sim); code != 0 || !strings.Contains(out, "no tick committed yet") {
		t.Errorf("story before a run: exit %d\n%s", code, out)
	}
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tick", "3"}, "ticks 3: not committed (committed ticks: 1..2)"},
		{[]string{"--from", "2", "--to", "5"}, "ticks 2..5: not committed (committed ticks: 1..2)"},
		{[]string{"--from", "2", "--to", "1"}, "committed ticks: 1..2"},
		{[]string{"--tick", "0"}, "--tick 0: ticks start at 1"},
		{[]string{"--tick", "1", "--from", "1"}, "not both"},
		{[]string{"--location", "moon"}, "--location moon: no such location in demo-sim (locations: "},
		{[]string{"--character", "zed"}, "(characters: "},
	} {
		code, out, errOut := arbiter(t, append([]string{"story", sim}, tc.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("story %v: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestStoryGames(t *testing.T) {
	cleanEnv(t)
	for _, demo := range []string{"conquest-demo", "duel-demo"} {
		sim := gameCopy(t, demo)
		if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
			t.Fatalf("%s run: exit %d\n%s", demo, code, errOut)
		}
		code, out, errOut := arbiter(t, "story", sim, "--json")
		var st session.Story
		if err := json.Unmarshal([]byte(out), &st); code != 0 || err != nil {
			t.Fatalf("%s story: exit %d, %v\n%s%s", demo, code, err, out, errOut)
		}
		if len(st.Turns) != 2 || st.Turns[0].Turn != 1 || st.Turns[1].Turn != 2 || len(st.Turns[0].Lines)+len(st.Turns[1].Lines) == 0 {
			t.Errorf("%s story: %+v", demo, st)
		}
		if code, _, errOut := arbiter(t, "story", sim, "--character", "p1"); code != ExitUsage || !strings.Contains(errOut, "arbiter status") {
			t.Errorf("%s story --character: exit %d\n%s", demo, code, errOut)
		}
	}
	sim := gameCopy(t, "chronicle-demo")
	if code, _, errOut := arbiter(t, "story", sim); code != ExitUsage || !strings.Contains(errOut, "arbiter chronicle show") {
		t.Errorf("story of a chronicle: exit %d\n%s", code, errOut)
	}
}

// TestWriteStoryMarks: a fallen-back location and a skipped update are
// marked in the text.
func TestWriteStoryMarks(t *testing.T) {
	t.Parallel()
	ios, out, _ := TestStreams("")
	writeStory(ios, &session.Story{Simulation: "s", From: 4, To: 4, Ticks: []session.StoryTick{{Tick: 4, Locations: []session.StoryLocation{{
		ID: "hall", Name: "Hall", Moment: "Rain\non the roof.", Fallback: true,
		Characters: []session.StoryCharacter{{ID: "ada", Name: "Ada", Intention: "Wait.", Memory: []string{}, From: "hall", To: "hall"}},
		Skipped:    []session.SkippedUpdate{{Character: "ada", Reason: `destination "yard" is not reachable`}},
	}}}}})
	want := "tick 4\n  Hall (hall): Rain on the roof.\n    [fallback] the game master's call failed: nothing changed here\n" +
		"    Ada (ada)\n      intends:    Wait.\n    [skipped] update of ada: destination \"yard\" is not reachable\n"
	if out.String() != want {
		t.Errorf("writeStory =\n%s\nwant\n%s", out, want)
	}
}

// TestStoryFlags: the flags reach the options.
func TestStoryFlags(t *testing.T) {
	t.Parallel()
	var got *StoryOptions
	ios, _, _ := TestStreams("")
	cmd := newStoryCmd(ios, &globals{}, func(_ context.Context, o *StoryOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"sim", "--tick", "3", "--location", "hall", "--character", "ada"})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "sim" || got.Query != (session.StoryQuery{From: 3, To: 3, Location: "hall", Character: "ada"}) {
		t.Errorf("options = %+v", got)
	}
}

// TestStoryLast: --last tells the latest committed tick alone, of a
// narrative and of a game; before any tick it says none is committed;
// with --tick, --from or --to it is a usage error.
func TestStoryLast(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	code, out, errOut := arbiter(t, "story", sim, "--last")
	if code != 0 || !strings.Contains(out, "no tick committed yet") {
		t.Errorf("story --last before a run: exit %d\n%s%s", code, out, errOut)
	}
	arbiter(t, "run", sim, "-n", "3")
	code, out, errOut = arbiter(t, "story", sim, "--last")
	if code != 0 || !strings.HasPrefix(out, "tick 3\n") || strings.Contains(out, "tick 2") || !strings.Contains(out, "Sallow Wharf (wharf): ") {
		t.Errorf("story --last after 3 ticks: exit %d, want tick 3 alone\n%s%s", code, out, errOut)
	}
	game := gameCopy(t, "duel-demo")
	arbiter(t, "run", game, "-n", "2")
	if code, out, errOut := arbiter(t, "story", game, "--last"); code != 0 || !strings.HasPrefix(out, "turn 2\n") || strings.Contains(out, "turn 1\n") {
		t.Errorf("story --last of a duel: exit %d, want turn 2 alone\n%s%s", code, out, errOut)
	}
	for _, flag := range [][]string{{"--tick", "1"}, {"--from", "1"}, {"--to", "2"}} {
		code, out, errOut := arbiter(t, append([]string{"story", sim, "--last"}, flag...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, "--last and --tick/--from/--to") {
			t.Errorf("story --last %v: exit %d, want %d\n%s%s", flag, code, ExitUsage, out, errOut)
		}
	}
}
