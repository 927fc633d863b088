package main

import (
	"bytes"
	"errors"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestFaultDamagedDatabaseRefused (issue 24 item 5): random bytes written
// into state.db's pages make status and run stop with exit 1, saying the
// run state is damaged and what to do; run pays for no call and writes
// nothing onto the file.
func TestFaultDamagedDatabaseRefused(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	sim := demoCopy(t)
	if code, _, errOut := arbiter(t, "run", sim, "--ticks", "5"); code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errOut)
	}
	path := filepath.Join(sim, "state.db")
	damage(t, path)
	before, _ := os.ReadFile(path)
	calls := srv.CallCount()
	for _, args := range [][]string{{"status", sim}, {"run", sim, "--ticks", "1"}} {
		code, out, errOut := arbiter(t, args...)
		if code != ExitError || !strings.Contains(errOut, path+": the run state is damaged") || !strings.Contains(errOut, "`arbiter reset` deletes the run state") {
			t.Errorf("%v: exit %d, want %d with the damage and the way out:\n%s%s", args, code, ExitError, out, errOut)
		}
	}
	if n := srv.CallCount() - calls; n != 0 {
		t.Errorf("run on a malformed state.db made %d model calls", n)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("run wrote onto the malformed state.db")
	}
	// The way out works: reset, then a run from tick 1.
	if code, _, errOut := arbiter(t, "reset", sim); code != 0 {
		t.Fatalf("reset: exit %d\n%s", code, errOut)
	}
	if code, out, errOut := arbiter(t, "run", sim, "--ticks", "1"); code != 0 || !strings.Contains(out, "tick 1 committed") {
		t.Errorf("run after reset: exit %d\n%s%s", code, out, errOut)
	}
}

// damage writes seeded random bytes over the start of the pages in the
// middle third of the database at path (16 KiB pages), as a disk or a
// careless tool would: the header is whole, so SQLite opens the file.
func damage(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	const page = 16 << 10
	rng := rand.New(rand.NewPCG(24, 5))
	junk := make([]byte, 256)
	for off := info.Size() / 3 / page * page; off < 2*info.Size()/3; off += page {
		for i := range junk {
			junk[i] = byte(rng.UintN(256))
		}
		if _, err := f.WriteAt(junk, off); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCrashDeletedWALLosesAtMostTickInFlight (issue 24 item 6): `arbiter
// run`, a real process, is killed with SIGKILL at random moments and its
// state.db-wal deleted each time. Every tick the process reported
// committed is still in state.db, intact and without a gap: at most the
// tick being committed lived only in the WAL, and each run resumes from the
// last tick in state.db. A kill that lands while a tick is being copied
// from the WAL into state.db leaves state.db half old, half new: without
// its WAL that file is damaged, and status refuses it (exit 1, `arbiter
// reset` or a copy) rather than reading it; the copy taken with its WAL is
// whole, and the run goes on from it. The runs play out of order, the
// default: some calls of a tick arrive before the tick before has all its
// answers.
func TestCrashDeletedWALLosesAtMostTickInFlight(t *testing.T) {
	if testing.Short() {
		t.Skip("crash suite: not in -short")
	}
	cleanEnv(t)
	var spans tickSpans
	srv := fakeModel(t, slowWharf(&spans))
	sim := demoCopy(t)
	path := filepath.Join(sim, "state.db")
	backup := t.TempDir()
	rng := rand.New(rand.NewPCG(24, 6))
	const kills = 20
	reported, deleted, midCopy := 0, 0, 0
	// A kill comes 100-500 ms after the start; on a machine so loaded that
	// it lands before the first commit, the next waits twice as long.
	wait := 100 * time.Millisecond
	for i := range kills {
		spans.start(strconv.Itoa(i))
		cmd := exec.Command(os.Args[0], "run", sim, "--ticks", "1000")
		cmd.Env = append(os.Environ(), "ARBITER_TEST_MAIN=1", "OPENAI_BASE_URL="+srv.URL, "ARBITER_LLM_MODEL=test-model")
		reported = max(reported, killAfter(t, cmd, wait+time.Duration(rng.IntN(400))*time.Millisecond))
		copyFiles(t, sim, backup, "state.db", "state.db-wal", "state.db-shm")
		if err := os.Remove(path + "-wal"); err == nil {
			deleted++
		}
		integrity, rows, last := checkState(t, path)
		code, out, errOut := arbiter(t, "status", sim)
		if reported == 0 && strings.Contains(integrity, "no such table: ticks") {
			// Killed before its first commit (on a loaded machine, before
			// the schema left the WAL, or before state.db existed): there
			// was nothing to lose, and status says so.
			if code != 0 || !strings.Contains(out, "no tick committed yet") {
				t.Fatalf("kill %d before any commit: status exit %d\n%s%s", i, code, out, errOut)
			}
			wait = min(2*wait, 5*time.Second)
			continue
		}
		if integrity != "ok" {
			if code != ExitError || !strings.Contains(errOut, "the run state is damaged") || !strings.Contains(errOut, "`arbiter reset`") {
				t.Fatalf("kill %d: state.db without its WAL is %q, yet status: exit %d\n%s%s", i, integrity, code, out, errOut)
			}
			midCopy++
			copyFiles(t, backup, sim, "state.db", "state.db-wal", "state.db-shm")
			integrity, rows, last = checkState(t, path)
		}
		if integrity != "ok" || rows != last || last < reported {
			t.Fatalf("kill %d, WAL deleted: integrity %q, %d tick rows up to %d, %d reported committed", i, integrity, rows, last, reported)
		}
		reported = last // a tick in flight that was lost is played again
	}
	if deleted == 0 || reported == 0 {
		t.Fatalf("%d WALs deleted, %d ticks committed: the test tested nothing", deleted, reported)
	}
	checkOutOfOrder(t, &spans)
	t.Logf("%d SIGKILLs of arbiter run, state.db-wal deleted after %d; %d ticks committed, every reported tick kept; %d kills landed in a copy into state.db (refused by status, resumed from the copy with its WAL)",
		kills, deleted, reported, midCopy)
}

// copyFiles copies the named files that exist from one folder to another,
// deleting in to those that do not.
func copyFiles(t *testing.T, from, to string, names ...string) {
	t.Helper()
	for _, name := range names {
		b, err := os.ReadFile(filepath.Join(from, name))
		if errors.Is(err, fs.ErrNotExist) {
			os.Remove(filepath.Join(to, name))
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFaultLostLastPhaseIsQuorumFailure (issue 24 item 7): a phase whose
// every call finds the endpoint unusable (401) is quorum_failure, exit 3,
// nothing committed, whichever phase it is and whichever kind: demo-sim's
// resolution (its last phase, after every intention was answered), and a
// conquest and a duel whose model seat's every call gets a 401.
func TestFaultLostLastPhaseIsQuorumFailure(t *testing.T) {
	cleanEnv(t)
	unauthorized := func(*openaitest.Call) openaitest.Reply {
		return openaitest.Status(401, "invalid_request_error", "invalid_api_key", "Incorrect API key provided")
	}
	for _, tc := range []struct {
		name, sim string
		handler   openaitest.Handler
		reason    string
	}{
		{"narrative resolution", "demo-sim", openaitest.Match(openaitest.FromSchema(nil), openaitest.Route{
			If: func(c *openaitest.Call) bool { return c.SchemaName() == "MasterOutput" }, Then: unauthorized,
		}), "every resolution call failed and the endpoint is unusable"},
		{"conquest model seat", "conquest-demo", unauthorized, "quorum_failure"},
		{"duel model seat", "duel-demo", unauthorized, "quorum_failure"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fakeModel(t, tc.handler)
			sim := gameCopy(t, tc.sim)
			if tc.sim != "demo-sim" {
				yaml := filepath.Join(sim, "simulation.yaml")
				b, err := os.ReadFile(yaml)
				if err != nil || !bytes.Contains(b, []byte("p1: bot")) {
					t.Fatalf("%s: %v; want a p1 bot seat to make a model", yaml, err)
				}
				if err := os.WriteFile(yaml, bytes.Replace(b, []byte("p1: bot"), []byte("p1: model"), 1), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := arbiter(t, "run", sim, "--ticks", "2")
			if code != ExitModel || !strings.Contains(errOut, tc.reason) || !strings.Contains(errOut, "401") {
				t.Errorf("run: exit %d, want %d naming %q and the 401:\n%s%s", code, ExitModel, tc.reason, out, errOut)
			}
			if strings.Contains(out, "committed:") {
				t.Errorf("a tick committed:\n%s", out)
			}
			if code, out, _ := arbiter(t, "status", sim); code != 0 || !strings.Contains(out, "no tick committed yet") {
				t.Errorf("status: exit %d, want no tick committed:\n%s", code, out)
			}
		})
	}
}

// TestFaultStateDBSymlinkRefused (issue 24 item 8): a state.db, or its
// -wal, that is not a regular file inside the folder is refused with exit 2
// and one message naming it and what to do: nothing is created or written
// where a link points, and /dev/zero is not read as an empty run.
// `arbiter reset` removes the link, and the next run starts in a regular
// file.
func TestFaultStateDBSymlinkRefused(t *testing.T) {
	cleanEnv(t)
	srv := fakeModel(t, nil)
	outside := filepath.Join(t.TempDir(), "x.db")
	for _, tc := range []struct {
		name, file, target string
		args               []string
	}{
		{"state.db linked out, run", "state.db", outside, []string{"run"}},
		{"state.db linked to /dev/zero, status", "state.db", "/dev/zero", []string{"status"}},
		{"state.db linked to /dev/zero, run", "state.db", "/dev/zero", []string{"run"}},
		{"state.db-wal linked out, run", "state.db-wal", outside, []string{"run"}},
		{"state.db-wal linked out, export", "state.db-wal", outside, []string{"export"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim := demoCopy(t)
			if tc.file == "state.db-wal" { // a run state to link beside
				if code, _, errOut := arbiter(t, "run", sim, "--ticks", "1"); code != 0 {
					t.Fatalf("run: exit %d\n%s", code, errOut)
				}
			}
			link := filepath.Join(sim, tc.file)
			if err := os.Symlink(tc.target, link); err != nil {
				t.Fatal(err)
			}
			calls := srv.CallCount()
			code, out, errOut := arbiter(t, append(tc.args, sim)...)
			if code != ExitUsage || !strings.Contains(errOut, link+" is a symbolic link to "+tc.target) || !strings.Contains(errOut, "`arbiter reset` removes the link") ||
				strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("exit %d, want %d and one line naming %s and what to do:\n%s%s", code, ExitUsage, link, out, errOut)
			}
			if strings.Contains(out, "no tick committed yet") || srv.CallCount() != calls {
				t.Errorf("read as an empty run, or calls made:\n%s", out)
			}
			if _, err := os.Lstat(outside); err == nil {
				t.Fatalf("%s was created outside the folder", outside)
			}
			if code, _, errOut := arbiter(t, "reset", sim); code != 0 {
				t.Fatalf("reset: exit %d\n%s", code, errOut)
			}
			if _, err := os.Lstat(link); err == nil && tc.file == "state.db" {
				t.Errorf("reset left %s", link)
			}
		})
	}
}
