package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/store"
)

// arbiterWithin runs arbiter as arbiter does, failing the test when the
// command has not returned within limit: a hang is a failure, not a wait.
func arbiterWithin(t *testing.T, limit time.Duration, args ...string) (int, string, string) {
	t.Helper()
	io, out, errOut := TestStreams("")
	done := make(chan int, 1)
	go func() { done <- Execute(context.Background(), io, args) }()
	select {
	case code := <-done:
		return code, out.String(), errOut.String()
	case <-time.After(limit):
		t.Fatalf("arbiter %s still running after %v", strings.Join(args, " "), limit)
		return 0, "", ""
	}
}

// TestFaultHostileTemplateCannotHang: the two-line override, which
// spun validate, status, run and prompts render forever, is refused by each
// of them, exit 2, naming its file and line; its twin looping over computed
// counts, which no reading of the text can bound, is stopped while
// rendering and named too.
func TestFaultHostileTemplateCannotHang(t *testing.T) {
	cleanEnv(t)
	fakeModel(t, nil)
	sim := demoCopy(t)
	os.MkdirAll(filepath.Join(sim, "prompts"), 0o755)
	path := filepath.Join(sim, "prompts", "phase1_intention_user.md")
	os.WriteFile(path, []byte("{{range 100000}}{{range 100000}}{{end}}{{end}}x\n"), 0o644)
	commands := [][]string{{"validate", sim}, {"status", sim}, {"run", sim, "--ticks", "1"},
		{"prompts", "render", sim, "--phase", "intention", "--entity", "mara"}}
	for _, args := range commands {
		code, out, errOut := arbiterWithin(t, 2*time.Minute, args...)
		if code != ExitUsage || !strings.Contains(out+errOut, path+":1: {{range 100000}}") {
			t.Errorf("%v: exit %d, want %d naming %s:1\n%s%s", args[0], code, ExitUsage, path, out, errOut)
		}
	}
	os.WriteFile(path, []byte(`{{range len (printf "%0100000d" 0)}}{{range len (printf "%0100000d" 0)}}{{end}}{{end}}x`+"\n"), 0o644)
	code, out, errOut := arbiterWithin(t, 2*time.Minute, "validate", sim)
	if code != ExitUsage || !strings.Contains(out, path) || !strings.Contains(out, "stopped there") {
		t.Errorf("validate with a runaway over computed counts: exit %d, want %d naming %s and the bound\n%s%s", code, ExitUsage, path, out, errOut)
	}
	if exists(filepath.Join(sim, "state.db")) {
		t.Error("a command with a refused template left a state.db")
	}
}

// editState rewrites the state stored at tick in sim's state.db through
// edit, as a person with sqlite3 could: a whole state written into
// ticks.state_json is what the tick reads as.
func editState(t *testing.T, sim string, tick int, edit func(map[string]any)) {
	t.Helper()
	ro, err := store.OpenReadOnly(t.Context(), filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ro.State(t.Context(), tick)
	ro.Close()
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", filepath.Join(sim, "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var st map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		t.Fatal(err)
	}
	edit(st)
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE ticks SET state_json = ? WHERE tick = ?", string(b), tick); err != nil {
		t.Fatal(err)
	}
}

// TestFaultConquestStateLoadedChecked: a conquest state.db edited to send a
// fleet to star "ZZ" (which panicked) or to hold MaxInt64 ships (which spun
// in combat, deaf to Ctrl-C) is refused by status and run with exit 1,
// the tick and `arbiter reset`, and run plays nothing on it.
func TestFaultConquestStateLoadedChecked(t *testing.T) {
	cleanEnv(t)
	for _, tt := range []struct {
		name string
		edit func(map[string]any)
		want string
	}{
		{"fleet to ZZ", func(st map[string]any) {
			st["fleets"] = []any{map[string]any{"owner": "p1", "from": "A", "to": "ZZ", "ships": 5, "sent": 2, "arrives": 3}}
		}, "(p1 A -> ZZ, 5 ships)"},
		{"MaxInt64 ships", func(st map[string]any) {
			star := st["stars"].([]any)[0].(map[string]any)
			star["ships"] = map[string]any{"p1": math.MaxInt64, "p2": math.MaxInt64}
			star["garrison"] = math.MaxInt64
		}, "9223372036854775807"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			sim := gameCopy(t, "conquest-demo")
			if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
				t.Fatalf("run: exit %d\n%s", code, errOut)
			}
			editState(t, sim, 2, tt.edit)
			for _, args := range [][]string{{"status", sim}, {"run", sim, "--ticks", "1"}} {
				code, out, errOut := arbiterWithin(t, 2*time.Minute, args...)
				if code != ExitError || !strings.Contains(errOut, "state.db tick 2: ") || !strings.Contains(errOut, tt.want) ||
					!strings.Contains(errOut, "`arbiter reset` starts over") {
					t.Errorf("%v: exit %d, want %d with state.db tick 2, %q and `arbiter reset`\n%s%s", args[0], code, ExitError, tt.want, out, errOut)
				}
			}
		})
	}
}

// TestFaultOverflowDuelSettings: a duel with health 9223372036854775807
// (which healed to -9223372036854775806) is refused by validate and run,
// exit 2, naming simulation.yaml and the key; a stored board edited to that
// health is damaged run state, exit 1.
func TestFaultOverflowDuelSettings(t *testing.T) {
	cleanEnv(t)
	sim := gameCopy(t, "duel-demo")
	file := filepath.Join(sim, "simulation.yaml")
	orig, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(file, []byte(strings.Replace(string(orig), "health: 30", "health: 9223372036854775807", 1)), 0o644)
	for _, args := range [][]string{{"validate", sim}, {"run", sim, "--ticks", "1"}} {
		code, out, errOut := arbiter(t, args...)
		if code != ExitUsage || !strings.Contains(out+errOut, file+": settings.health: 9223372036854775807 must be a whole number from 1 to 1000000") {
			t.Errorf("%v: exit %d, want %d naming the file and the key\n%s%s", args[0], code, ExitUsage, out, errOut)
		}
	}
	os.WriteFile(file, orig, 0o644)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	editState(t, sim, 2, func(st map[string]any) {
		p1 := st["board"].(map[string]any)["players"].([]any)[0].(map[string]any)
		p1["health"], p1["max_health"] = math.MaxInt64, math.MaxInt64
	})
	code, out, errOut := arbiter(t, "run", sim, "--ticks", "1")
	if code != ExitError || !strings.Contains(errOut, "state.db tick 2: p1: health 9223372036854775807") || !strings.Contains(errOut, "`arbiter reset` starts over") {
		t.Errorf("run on an edited board: exit %d, want %d naming the tick, the health and `arbiter reset`\n%s%s", code, ExitError, out, errOut)
	}
}
