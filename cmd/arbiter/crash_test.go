package main

import (
	"bufio"
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// TestCrashSuite kills `arbiter run`, a separate process, with SIGKILL at
// random moments, then checks state.db: integrity_check ok, ticks 1..N with
// none missing or doubled, and every tick the process reported committed
// still there. Each resume goes on from the last tick. The runs play out
// of order, the default: some calls of a tick arrive before the tick
// before has all its answers.
func TestCrashSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("crash suite: not in -short")
	}
	bin := buildArbiter(t)
	cleanEnv(t)
	var spans tickSpans
	srv := openaitest.New(t, slowWharf(&spans))
	sim := demoCopy(t)
	env := append(os.Environ(), "OPENAI_BASE_URL="+srv.URL, "ARBITER_LLM_MODEL=test-model")
	rng := rand.New(rand.NewPCG(7, 7))
	const kills = 25
	reported := 0
	for i := range kills {
		spans.start(strconv.Itoa(i))
		cmd := exec.CommandContext(context.Background(), bin, "run", sim, "--ticks", "1000")
		cmd.Dir = sim
		cmd.Env = env
		reported = max(reported, killAfter(t, cmd, time.Duration(20+rng.IntN(400))*time.Millisecond))
		integrity, rows, last := checkState(t, filepath.Join(sim, "state.db"))
		if integrity != "ok" || rows != last || last < reported {
			t.Fatalf("kill %d: integrity %q, %d tick rows up to %d, %d reported committed", i, integrity, rows, last, reported)
		}
	}
	checkOutOfOrder(t, &spans)
	t.Logf("crash suite: %d SIGKILLs of arbiter run, %d ticks committed and kept, integrity ok after each", kills, reported)
}

// committedLine is what `arbiter run` prints once a tick is stored.
var committedLine = regexp.MustCompile(`tick (\d+) committed`)

// killAfter starts cmd, an `arbiter run`, kills it with SIGKILL after wait
// and returns the last tick it reported committed (0: none).
func killAfter(t *testing.T, cmd *exec.Cmd, wait time.Duration) int {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	reported := 0
	wg.Go(func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := committedLine.FindStringSubmatch(sc.Text()); m != nil {
				n, _ := strconv.Atoi(m[1])
				reported = max(reported, n)
			}
		}
	})
	time.Sleep(wait)
	cmd.Process.Signal(syscall.SIGKILL)
	wg.Wait()
	cmd.Wait()
	return reported
}

// checkState opens the database at path as SQLite alone would and returns
// its integrity_check ("ok", what is wrong, or SQLite's error when the file
// cannot be read), its number of tick rows and its last tick (-1 when
// unreadable).
func checkState(t *testing.T, path string) (integrity string, rows, last int) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA integrity_check").Scan(&integrity); err != nil {
		return err.Error(), -1, -1
	}
	if err := db.QueryRow("SELECT COUNT(*), COALESCE(MAX(tick), 0) FROM ticks").Scan(&rows, &last); err != nil {
		return err.Error(), -1, -1
	}
	return integrity, rows, last
}

// buildArbiter builds this package's binary into a temporary folder, for
// the tests that kill a real process. Call it before cleanEnv, which
// moves the test out of the package's folder.
func buildArbiter(t *testing.T) string {
	t.Helper()
	pkg, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "arbiter")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = pkg
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

// slowWharf answers valid JSON after 3 ms, wharf's arbiter after 15 ms, the
// slowest call, so that ticks overlap when they play out of order; spans
// records when each call of each run arrived (checkOutOfOrder).
func slowWharf(spans *tickSpans) openaitest.Handler {
	valid := openaitest.FromSchema(nil)
	return func(c *openaitest.Call) openaitest.Reply {
		delay := 3 * time.Millisecond
		if c.SchemaName() == "MasterOutput" && strings.Contains(c.LastUserMessage(), `(id "wharf")`) {
			delay = 15 * time.Millisecond
		}
		spans.arrived(c, delay)
		return valid(c).WithDelay(delay)
	}
}
