package store

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// compactRun writes ticks ticks of longRecord at path, as one run.
func compactRun(t *testing.T, path string, ticks int) {
	t.Helper()
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.now = fixedNow
	if err := s.StartRun(json.RawMessage(`{"run":1}`)); err != nil {
		t.Fatal(err)
	}
	for tick := 1; tick <= ticks; tick++ {
		commit(t, s, longRecord(tick))
	}
}

// TestCompact: compacting a run of 12 ticks to its last 3 drops the
// requests and answers of ticks 1..9 and the past exchanges a resumed run
// no longer sends, and keeps everything else as it was; the run goes on.
func TestCompact(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), FileName)
	compactRun(t, path, 12)
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	before := map[int][]CallRecord{}
	for tick := 1; tick <= 12; tick++ {
		if before[tick], err = s.Calls(ctx, tick); err != nil {
			t.Fatal(err)
		}
	}
	sumBefore, _ := s.Summary(ctx)
	usageBefore, _ := s.UsageRows(ctx)
	storyBefore, _ := s.Story(ctx, 1, 12)
	histBefore, _ := s.History(ctx, 1, 12)
	var textsBefore, blocksBefore int
	s.db.QueryRowContext(ctx, "SELECT COUNT(*), (SELECT COUNT(*) FROM blocks) FROM texts").Scan(&textsBefore, &blocksBefore)

	c, err := s.Compact(ctx, 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if c.DroppedThrough != 9 || c.Calls != 9*len(before[1]) || c.BytesAfter > c.BytesBefore || c.BytesAfter == 0 {
		t.Errorf("Compact = %+v; want ticks 1..9 dropped, %d calls, a file no larger", c, 9*len(before[1]))
	}
	for tick := 1; tick <= 12; tick++ {
		calls, err := s.Calls(ctx, tick)
		if err != nil {
			t.Fatal(err)
		}
		for i, call := range calls {
			want := before[tick][i]
			if tick <= 9 {
				want.Request, want.Raw, want.Output = "[]", "", ""
			}
			if !reflect.DeepEqual(call, want) {
				t.Errorf("tick %d call %d after compact:\n got %+v\nwant %+v", tick, i, call, want)
			}
		}
	}
	sum, _ := s.Summary(ctx)
	sumBefore.TextsDroppedThrough = 9
	if !reflect.DeepEqual(sum, sumBefore) {
		t.Errorf("summary after compact:\n got %+v\nwant %+v", sum, sumBefore)
	}
	usage, _ := s.UsageRows(ctx)
	story, _ := s.Story(ctx, 1, 12)
	hist, err := s.History(ctx, 1, 12)
	if !reflect.DeepEqual(usage, usageBefore) || !reflect.DeepEqual(story, storyBefore) || err != nil || !reflect.DeepEqual(hist, histBefore) {
		t.Errorf("usage, story or the history a resumed run sends changed (%v)", err)
	}
	var texts, blocks int
	s.db.QueryRowContext(ctx, "SELECT COUNT(*), (SELECT COUNT(*) FROM blocks) FROM texts").Scan(&texts, &blocks)
	if texts >= textsBefore || blocks >= blocksBefore {
		t.Errorf("%d texts and %d blocks after compact, %d and %d before", texts, blocks, textsBefore, blocksBefore)
	}
	commit(t, s, longRecord(13))
	if calls, err := s.Calls(ctx, 13); err != nil || len(calls) == 0 || calls[0].Request == "[]" {
		t.Errorf("tick 13 after compact: %v", err)
	}
	if n, err := s.TextsDroppedThrough(ctx); n != 9 || err != nil {
		t.Errorf("TextsDroppedThrough = %d, %v", n, err)
	}
}

// TestCompactErrors: a negative count is refused, and nothing is dropped.
func TestCompactErrors(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	commit(t, s, longRecord(1))
	if _, err := s.Compact(t.Context(), -1, 1); err == nil || !strings.Contains(err.Error(), "0 or more") {
		t.Errorf("Compact(-1) = %v", err)
	}
	if n, _ := s.TextsDroppedThrough(t.Context()); n != 0 {
		t.Errorf("a refused compaction dropped ticks 1..%d", n)
	}
}

// TestCompactKilled: a compaction killed (SIGKILL) at any point leaves the
// run as it was or as a finished compaction leaves it, never in between.
func TestCompactKilled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	orig := filepath.Join(dir, "orig.db")
	compactRun(t, orig, 40)
	beforeSnap := readSnapshot(t, orig, false)
	done := filepath.Join(dir, "done.db")
	copyFile(t, orig, done)
	if err := helper(t, "compact", done, "").Wait(); err != nil {
		t.Fatalf("the compaction helper: %v", err)
	}
	afterSnap := readSnapshot(t, done, false)
	if afterSnap == beforeSnap {
		t.Fatal("compaction changed nothing the snapshot shows")
	}
	rng := rand.New(rand.NewPCG(36, 4))
	seen := map[string]int{}
	for i := range 6 {
		path := filepath.Join(dir, "killed.db")
		for _, p := range append([]string{path}, suffixed(path)...) {
			os.Remove(p)
		}
		copyFile(t, orig, path)
		// Killed as soon as it is inside the transaction (i even), or
		// after a random while (which may be after it finished).
		pause := ""
		if i%2 == 0 {
			pause = "1"
		}
		cmd := helper(t, "compact", path, pause)
		if pause == "" {
			select {
			case <-time.After(time.Duration(rng.IntN(400)) * time.Millisecond):
			case <-t.Context().Done():
			}
		}
		cmd.Process.Kill()
		cmd.Wait()
		switch readSnapshot(t, path, true) {
		case beforeSnap:
			seen["before"]++
		case afterSnap:
			seen["after"]++
		default:
			t.Fatalf("kill %d: the run is neither as before nor as after the compaction", i)
		}
	}
	if seen["before"] < 3 {
		t.Errorf("killed inside its transaction, a compaction left the run as before only %d times in 3", seen["before"])
	}
}

// helper starts this test binary as a process that opens path and does
// what (TestStoreHelper); with pause set it stops inside its transaction,
// once it has said so, until killed.
func helper(t *testing.T, what, path, pause string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestStoreHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), "STORE_HELPER="+what, "STORE_HELPER_DB="+path, "STORE_HELPER_PAUSE="+pause)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if pause == "" {
		go io.Copy(io.Discard, out)
		return cmd
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if !strings.HasPrefix(line, "paused") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper did not pause: %q", line)
	}
	return cmd
}

// TestStoreHelper is the process helper starts: it compacts or upgrades
// the database STORE_HELPER_DB, pausing inside the transaction when asked.
func TestStoreHelper(t *testing.T) {
	what, path := os.Getenv("STORE_HELPER"), os.Getenv("STORE_HELPER_DB")
	if what == "" {
		t.Skip("run by the tests that kill a process (helper)")
	}
	hook := func() {}
	if os.Getenv("STORE_HELPER_PAUSE") != "" {
		hook = func() {
			os.Stdout.WriteString("paused\n")
			select {} // until killed
		}
	}
	switch what {
	case "compact":
		compactHook = hook
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Compact(context.Background(), 3, 1); err != nil {
			t.Fatal(err)
		}
		s.Close()
	case "upgrade":
		migrateHook = hook
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
