package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRunStopsWhenInterrupted cancels Run's context (what Ctrl-C and
// SIGTERM do to `arbiter bench`) as each phase begins: Run returns with what
// was measured before, the worlds after the interrupted one are not run,
// and neither a world's folder nor a stand-in server outlives it.
func TestRunStopsWhenInterrupted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, at string // at: the progress line whose start cancels
		check    func(t *testing.T, rep *Report, err error)
	}{
		{"generating the main world", "main world, ", func(t *testing.T, rep *Report, err error) {
			if !errors.Is(err, context.Canceled) || rep != nil {
				t.Errorf("Run = %v, %v; want context.Canceled and no report (nothing measured)", rep, err)
			}
		}},
		{"opening the main world", "main world: opening", func(t *testing.T, rep *Report, err error) {
			m := mainOf(t, rep, err)
			if m.Ticks != 0 || m.Error != "interrupted as the world was opened" || rep.Sequential != nil {
				t.Errorf("main world: %d ticks, error %q, sequential %+v; want no tick and the interrupt said", m.Ticks, m.Error, rep.Sequential)
			}
		}},
		{"ticks", "main world: tick 1/3 committed", func(t *testing.T, rep *Report, err error) {
			m := mainOf(t, rep, err)
			if m.Ticks < 1 || m.Ticks == 3 || m.CPUPerCall <= 0 || !strings.Contains(m.Error, "interrupted with the tick in flight rolled back") {
				t.Errorf("main world: %d ticks, CPU per call %s, error %q; want tick 1's figures and the interrupt said", m.Ticks, m.CPUPerCall, m.Error)
			}
			if m.Server.Answered == 0 {
				t.Errorf("the stand-in's count was not read after the interrupt: %+v", m.Server)
			}
		}},
		{"read-back", "main world: reading its 3 ticks back", func(t *testing.T, rep *Report, err error) {
			m := mainOf(t, rep, err)
			if m.Ticks != 3 || m.Ratio <= 0 || m.ExportMax != 0 || !strings.Contains(m.Error, "interrupted while its ticks were read back") {
				t.Errorf("main world: %d ticks, T/T* %.3f, export %s, error %q; want 3 ticks measured and the read-back cut", m.Ticks, m.Ratio, m.ExportMax, m.Error)
			}
			var md bytes.Buffer
			if err := WriteMarkdown(&md, rep); err != nil || !strings.Contains(md.String(), "interrupted while its ticks were read back") {
				t.Errorf("the report does not say the read-back was cut (%v):\n%s", err, md.String())
			}
		}},
		{"generating the sequential loop", "sequential world, ", func(t *testing.T, rep *Report, err error) {
			m := mainOf(t, rep, err)
			if m.Ticks != 3 || m.Error != "" || m.ExportMax <= 0 || rep.Sequential != nil {
				t.Errorf("main world: %d ticks, error %q, export %s; sequential %+v; want the main world whole and no loop", m.Ticks, m.Error, m.ExportMax, rep.Sequential)
			}
		}},
		{"the sequential loop's ticks", "sequential world: opened", func(t *testing.T, rep *Report, err error) {
			m := mainOf(t, rep, err)
			if s := rep.Sequential; m.Ticks != 3 || s == nil || s.World.Ticks != 0 || !strings.Contains(s.World.Error, "interrupted") {
				t.Errorf("main world: %d ticks; sequential %+v; want the loop stopped before its tick committed", m.Ticks, s)
			}
			if len(rep.Sizes) != 0 {
				t.Errorf("sizes run after the interrupt: %d", len(rep.Sizes))
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			o := testOptions(t, Shape{Characters: 20, Locations: 4}, 3)
			o.SeqTicks, o.Sizes, o.SizeTicks = 2, []Shape{{Characters: 10, Locations: 2}}, 1
			mark := fmt.Sprintf("ARBITER_BENCH_TEST_MARK=%s-%d", t.Name(), os.Getpid())
			o.Launcher.Env = append(o.Launcher.Env, mark)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o.Progress = func(s string) {
				if strings.HasPrefix(s, tc.at) {
					cancel()
				}
			}
			rep, err := Run(ctx, o)
			if ctx.Err() == nil {
				t.Fatalf("no progress line began %q: the test cancelled nothing", tc.at)
			}
			tc.check(t, rep, err)
			if entries, err := os.ReadDir(o.TempDir); err != nil || len(entries) > 0 {
				t.Errorf("left in the temp folder: %v %v", entries, err)
			}
			if pids := processesWith(t, mark); len(pids) > 0 {
				t.Errorf("stand-in servers still running: pids %v", pids)
			}
		})
	}
}

// mainOf is rep's main world, failing the test when Run failed.
func mainOf(t *testing.T, rep *Report, err error) *World {
	t.Helper()
	if err != nil || rep == nil || rep.Main == nil {
		t.Fatalf("Run = %v, %v; want the report of what was measured", rep, err)
	}
	return rep.Main
}

// processesWith lists the processes whose environment holds the variable
// kv (Linux: /proc; elsewhere the test skips).
func processesWith(t *testing.T, kv string) []string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("looks for child processes in /proc")
	}
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	var pids []string
	for _, p := range envs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone, or not ours
		}
		for _, v := range bytes.Split(b, []byte{0}) {
			if string(v) == kv {
				pids = append(pids, filepath.Base(filepath.Dir(p)))
			}
		}
	}
	return pids
}
