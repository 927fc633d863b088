package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/arbiter-sim/arbiter/arena"
)

// arenaShards runs `arena <args> --shard i/n -o <dir>/<i>.json` for every
// shard of an n-way split and returns the files, last shard first.
func arenaShards(t *testing.T, n int, dir string, args ...string) []string {
	t.Helper()
	var files []string
	for i := n; i >= 1; i-- {
		file := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		code, out, errOut := arbiter(t, append(args, "--shard", fmt.Sprintf("%d/%d", i, n), "-o", file)...)
		if code != 0 || out != "" || !strings.HasPrefix(errOut, "wrote "+file+": shard "+fmt.Sprintf("%d/%d", i, n)) {
			t.Fatalf("shard %d/%d: exit %d\nstdout: %s\nstderr: %s", i, n, code, out, errOut)
		}
		files = append(files, file)
	}
	return files
}

// TestArenaShardsMergeAsOneRun: an arena of bots played in 4 shards (the
// built-in demos, offline) and merged prints the table of one run of the
// whole arena with the same seed, as text and as JSON, byte for byte.
func TestArenaShardsMergeAsOneRun(t *testing.T) {
	cleanEnv(t)
	t.Chdir(t.TempDir())
	for _, kind := range []string{"conquest", "duel"} {
		t.Run(kind, func(t *testing.T) {
			args := []string{"arena", kind, "--games", "5", "--seed", "7", "--seats", "bot,bot", "--parallel", "2"}
			code, whole, errOut := arbiter(t, args...)
			if code != 0 {
				t.Fatalf("whole arena: exit %d\n%s", code, errOut)
			}
			_, wholeJSON, _ := arbiter(t, append(args, "--json")...)
			files := arenaShards(t, 4, t.TempDir(), args...)
			code, merged, errOut := arbiter(t, append([]string{"arena", "merge"}, files...)...)
			if code != 0 || merged != whole {
				t.Errorf("merged: exit %d %s\n%s\nwhole arena:\n%s", code, errOut, merged, whole)
			}
			_, mergedJSON, _ := arbiter(t, append([]string{"arena", "merge", "--json"}, files...)...)
			if mergedJSON != wholeJSON || !strings.Contains(wholeJSON, `"results"`) {
				t.Errorf("merged --json:\n%s\nwhole arena --json:\n%s", mergedJSON, wholeJSON)
			}
		})
	}
	// Without -o, shard i of n is arena-<i>-of-<n>.json in the working folder.
	if code, _, errOut := arbiter(t, "arena", "duel", "--games", "2", "--seats", "bot,bot", "--shard", "2/2"); code != 0 {
		t.Fatalf("--shard 2/2 without -o: exit %d %s", code, errOut)
	}
	if _, err := os.Stat("arena-2-of-2.json"); err != nil {
		t.Errorf("the default results file: %v", err)
	}
}

// TestArenaMergeRefuses: merge refuses the files of two arenas (arena's
// TestMergeRefuses has every field of an arena), a shard
// twice, a missing shard and a damaged file, naming the file, exit 2.
func TestArenaMergeRefuses(t *testing.T) {
	cleanEnv(t)
	dir := t.TempDir()
	args := []string{"arena", "conquest", "--games", "2", "--seats", "bot,bot", "--max-turns", "4"}
	files := arenaShards(t, 2, dir, args...) // 2.json, 1.json
	other := arenaShards(t, 2, t.TempDir(), append(args, "--seed", "9")...)
	duel := arenaShards(t, 2, t.TempDir(), "arena", "duel", "--games", "2", "--seats", "bot,bot", "--max-turns", "4")
	damaged := filepath.Join(dir, "damaged.json")
	b, _ := os.ReadFile(files[0])
	os.WriteFile(damaged, b[:len(b)-40], 0o644)
	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"another seed", []string{files[1], other[0]}, other[0] + " is another arena than " + files[1] + ": seed 9, not 1"},
		{"another kind", []string{files[1], duel[0]}, duel[0] + " is another arena than " + files[1] + ": kind duel, not conquest"},
		{"overlapping shard", []string{files[1], files[1]}, files[1] + " is given twice"},
		{"missing shard", []string{files[1]}, "shard 2/2 missing"},
		{"damaged file", []string{files[1], damaged}, damaged + ": damaged, or not an arena results file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := arbiter(t, append([]string{"arena", "merge"}, tc.files...)...)
			if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
				t.Errorf("merge %v: exit %d\nstdout: %s\nstderr: %s\nwant exit %d and %q", tc.files, code, out, errOut, ExitUsage, tc.want)
			}
		})
	}
}

// TestArenaShardFlags: --shard and --out reach the options, and a shard
// that is no shard of the arena is a usage error naming the flag.
func TestArenaShardFlags(t *testing.T) {
	var got *ArenaOptions
	build := func(io *IOStreams, g *globals) *cobra.Command {
		return newArenaCmd(io, g, func(_ context.Context, o *ArenaOptions) error { got = o; return nil })
	}
	for _, tc := range []struct {
		args  []string
		shard arena.Shard
		out   string
	}{
		{[]string{"conquest", "--games", "8", "--shard", "3/4"}, arena.Shard{Index: 3, Count: 4}, "arena-3-of-4.json"},
		{[]string{"conquest", "--games", "8", "--shard", "1/1", "-o", "all.json"}, arena.Shard{Index: 1, Count: 1}, "all.json"},
		{[]string{"conquest", "--games", "8"}, arena.Shard{}, ""},
	} {
		got = nil
		if err := runCmd(t, build, tc.args...); err != nil || got == nil || got.Shard != tc.shard || got.Out != tc.out {
			t.Errorf("%v: %v, options %+v", tc.args, err, got)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shard", "0/4"}, "--shard 0/4: shard index 0: want 1 to 4"},
		{[]string{"--shard", "5/4"}, "--shard 5/4: shard index 5: want 1 to 4"},
		{[]string{"--shard", "1/0"}, "--shard 1/0: shard count 0"},
		{[]string{"--shard", "2"}, "--shard 2: want i/n"},
		{[]string{"--shard", "x/4"}, `--shard x/4: shard index "x" is not a whole number`},
		{[]string{"--shard", "1/9"}, "--shard 1/9: 9 shards of 8 games"},
		{[]string{"-o", "r.json"}, "--out names the results file of a --shard run"},
		{[]string{"--shard", "1/2", "-o", ""}, "--out is empty"},
	} {
		err := runCmd(t, func(io *IOStreams, g *globals) *cobra.Command {
			return newArenaCmd(io, g, func(context.Context, *ArenaOptions) error { t.Errorf("ran with %v", tc.args); return nil })
		}, append([]string{"conquest", "--games", "8"}, tc.args...)...)
		if exitCode(err) != ExitUsage || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a usage error %q", tc.args, err, tc.want)
		}
	}
	if code, _, errOut := arbiter(t, "arena", "merge"); code != ExitUsage || !strings.Contains(errOut, "takes the results files of every shard") {
		t.Errorf("merge of no file: exit %d %s", code, errOut)
	}
}
