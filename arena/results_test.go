package arena_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/arena"
)

// playShards plays every shard of an n-way split of cfg's arena and writes
// their results files in dir, returning their paths in shard order.
func playShards(t *testing.T, g arena.Game, cfg arena.Config, n int, dir string) []string {
	t.Helper()
	var paths []string
	for i := 1; i <= n; i++ {
		cfg.Shard = arena.Shard{Index: i, Count: n}
		r, err := arena.Play(context.Background(), g, cfg)
		if err != nil {
			t.Fatal(err)
		}
		r.Arena.Simulation, r.Arena.Settings, r.Arena.Build = "demo", "digest", "test build"
		path := filepath.Join(dir, fmt.Sprintf("s%d-%d-of-%d.json", cfg.Seed, i, n))
		if _, err := arena.WriteResults(path, r); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	return paths
}

// TestShardsMergeToTheWholeArena: the shards of a split, merged in any
// order, give the table of the whole arena, to the byte in JSON, and the
// shards play every game once between them.
func TestShardsMergeToTheWholeArena(t *testing.T) {
	for _, g := range demoGames(t) {
		t.Run(g.Kind(), func(t *testing.T) {
			cfg := arena.Config{Games: 6, Seed: 11, Parallel: 2}
			whole, err := arena.Run(context.Background(), g, cfg)
			if err != nil {
				t.Fatal(err)
			}
			wantJSON, _ := json.Marshal(whole)
			for _, n := range []int{4, 6} {
				paths := playShards(t, g, cfg, n, t.TempDir())
				slices.Reverse(paths)
				merged, id, err := arena.Merge(paths...)
				if err != nil {
					t.Fatalf("%d shards: %v", n, err)
				}
				if id.Simulation != "demo" || id.Games != 6 || id.Seed != 11 || id.Kind != g.Kind() {
					t.Errorf("%d shards: arena %+v", n, id)
				}
				if got, _ := json.Marshal(merged); !bytes.Equal(got, wantJSON) {
					t.Errorf("%d shards merged:\n%s\nwhole arena:\n%s", n, got, wantJSON)
				}
			}
		})
	}
}

// TestMergeRefuses: merge takes the shards of one arena, each once, every
// one of them, from files it can read whole; each refusal names the file
// (or the shard that is missing) and why.
func TestMergeRefuses(t *testing.T) {
	g := conquestDemo(t)
	dir := t.TempDir()
	cfg := arena.Config{Games: 3, Seed: 1, MaxTurns: 3}
	three := playShards(t, g, cfg, 3, dir)
	two := playShards(t, g, cfg, 2, dir)
	cfg.Seed = 2
	otherSeed := playShards(t, g, cfg, 3, dir)

	// rewrite writes a copy of three[i] changed by edit, as another
	// arena's file would say it.
	rewrite := func(i int, name string, edit func(*arena.Results)) string {
		b, err := os.ReadFile(three[i])
		if err != nil {
			t.Fatal(err)
		}
		r, err := arena.ParseResults(b)
		if err != nil {
			t.Fatal(err)
		}
		edit(r)
		path := filepath.Join(dir, name)
		if _, err := arena.WriteResults(path, r); err != nil {
			t.Fatal(err)
		}
		return path
	}
	otherKind := rewrite(1, "kind.json", func(r *arena.Results) { r.Arena.Kind = "duel" })
	otherSeats := rewrite(1, "seats.json", func(r *arena.Results) { r.Arena.Seats[0].Seat = "model" })
	otherConfig := rewrite(1, "config.json", func(r *arena.Results) { r.Arena.Seats[0].Seat = "model:terse" })
	noName := rewrite(1, "noname.json", func(r *arena.Results) { r.Arena.Seats[0].Seat = "model:" })
	robot := rewrite(1, "robot.json", func(r *arena.Results) { r.Arena.Seats[1].Seat = "robot" })
	otherBuild := rewrite(1, "build.json", func(r *arena.Results) { r.Arena.Build = "another build" })
	otherSettings := rewrite(1, "settings.json", func(r *arena.Results) { r.Arena.Settings = "other" })
	copyOf1 := rewrite(0, "copy.json", func(*arena.Results) {})
	b, _ := os.ReadFile(three[2])
	truncated := filepath.Join(dir, "truncated.json")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	wrongSeed := filepath.Join(dir, "wrongseed.json")
	os.WriteFile(wrongSeed, bytes.Replace(b, []byte(`"seed": 3,`), []byte(`"seed": 4,`), 1), 0o644)

	for _, tc := range []struct {
		name  string
		files []string
		want  string
	}{
		{"another seed", []string{three[0], otherSeed[1], three[2]}, otherSeed[1] + " is another arena than " + three[0] + ": seed 2, not 1"},
		{"another kind", []string{three[0], otherKind, three[2]}, otherKind + " is another arena than " + three[0] + ": kind duel, not conquest"},
		{"other seats", []string{three[0], otherSeats, three[2]}, otherSeats + " is another arena than " + three[0] + ": seats p1=model,p2=bot, not p1=bot,p2=bot"},
		{"another seat configuration", []string{three[0], otherConfig, three[2]}, otherConfig + " is another arena than " + three[0] + ": seats p1=model:terse,p2=bot, not p1=bot,p2=bot"},
		{"a configuration without a name", []string{three[0], noName, three[2]}, noName + `: damaged arena results file: seat p1 is "model:", not bot, model or model:<name>`},
		{"no seat", []string{three[0], robot, three[2]}, robot + `: damaged arena results file: seat p2 is "robot"`},
		{"another build", []string{three[0], otherBuild, three[2]}, otherBuild + " is another arena than " + three[0] + ": arbiter build another build, not test build"},
		{"other settings", []string{three[0], otherSettings, three[2]}, otherSettings + " is another arena than " + three[0] + ": settings digest other, not digest"},
		{"another split", []string{three[0], two[1], three[2]}, two[1] + " is shard 2/2, " + three[0] + " shard 1/3"},
		{"overlapping shard", []string{three[0], three[1], copyOf1}, copyOf1 + " is shard 1/3, as " + three[0] + " is: give each shard once"},
		{"a file twice", []string{three[0], three[1], three[1]}, three[1] + " is given twice"},
		{"missing shards", []string{three[1]}, "shard 1/3, 3/3 missing"},
		{"truncated file", []string{three[0], three[1], truncated}, truncated + ": damaged, or not an arena results file: unexpected EOF"},
		{"a game's seed changed", []string{three[0], three[1], wrongSeed}, wrongSeed + ": damaged arena results file: result 1: seed 4, want 3"},
		{"no file", []string{three[0], filepath.Join(dir, "none.json")}, "none.json: no such file"},
		{"no files at all", nil, "no results files"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, _, err := arena.Merge(tc.files...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("merge %v: %v (table %v), want %q", tc.files, err, tab != nil, tc.want)
			}
		})
	}
	if _, _, err := arena.Merge(three[2], three[0], three[1]); err != nil {
		t.Errorf("the three shards themselves: %v", err)
	}
}

func TestShardSpec(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		games int
		want  string // "" when it is a shard of games
	}{
		{"1/4", 10, ""},
		{" 4/4 ", 10, ""},
		{"1/1", 1, ""},
		{"10/10", 10, ""},
		{"0/4", 10, "shard index 0: want 1 to 4"},
		{"5/4", 10, "shard index 5: want 1 to 4"},
		{"-1/4", 10, "shard index -1"},
		{"1/0", 10, "shard count 0: want at least 1"},
		{"1/11", 10, "11 shards of 10 games"},
		{"4", 10, "want i/n"},
		{"a/4", 10, `shard index "a" is not a whole number`},
		{"1/b", 10, `shard count "b" is not a whole number`},
		{"1/4/2", 10, `shard count "4/2"`},
		{"", 10, "want i/n"},
	} {
		s, err := arena.ParseShard(tc.spec)
		if err == nil {
			err = s.Check(tc.games)
		}
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("shard %q of %d games: %v, want %q", tc.spec, tc.games, err, tc.want)
		}
	}
}

// TestRunPlaysEveryGame: Run is the whole arena; a shard is Play's.
func TestRunPlaysEveryGame(t *testing.T) {
	g := conquestDemo(t)
	if _, err := arena.Run(context.Background(), g, arena.Config{Games: 2, Shard: arena.Shard{Index: 1, Count: 2}}); err == nil {
		t.Error("Run played a shard as if it were the arena")
	}
	if _, err := arena.Play(context.Background(), g, arena.Config{Games: 2, Shard: arena.Shard{Index: 3, Count: 2}}); err == nil || !strings.Contains(err.Error(), "shard index 3") {
		t.Errorf("Play of shard 3/2: %v", err)
	}
}

// FuzzParseResults: whatever a results file holds, the reader does not
// panic, and what it accepts writes back to a file it reads the same and
// merges (a one-shard split) into a table.
func FuzzParseResults(f *testing.F) {
	r := &arena.Results{Format: arena.ResultsFormat, Arena: arena.Identity{Kind: "conquest", Simulation: "s", Settings: "d", Build: "b",
		Seats: []arena.Seat{{Player: "p1", Seat: "bot"}, {Player: "p2", Seat: "model"}}, Seed: 5, Games: 3},
		Shard: arena.Shard{Index: 2, Count: 2},
		Results: []arena.GameResult{{Seed: 6, Turns: 4, Winner: "p2", Ended: "p1 lost", Stop: "game_over",
			Players: map[string]arena.PlayerStats{"p1": {Errors: 1}, "p2": {Calls: 4, Tokens: 80}}}}}
	valid, _ := json.MarshalIndent(r, "", "  ")
	f.Add(valid)
	f.Add(valid[:len(valid)-3])
	f.Add(bytes.Replace(valid, []byte(`"index": 2`), []byte(`"index": 1`), 1))
	f.Add([]byte(`{"format":"arbiter arena results 1","arena":{"games":1e3}}`))
	f.Add(bytes.Replace(valid, []byte(`"seat": "bot"`), []byte(`"seat": "model:terse"`), 1))
	f.Add([]byte(`{"format":"arbiter arena results 1","arena":{"kind":"k","seats":[{"player":"a","seat":"bot"}],"games":9223372036854775807},"shard":{"index":1,"count":1},"results":[]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := arena.ParseResults(b)
		if err != nil {
			if r != nil {
				t.Fatal("results and an error")
			}
			return
		}
		path := filepath.Join(dir, "r.json")
		if _, err := arena.WriteResults(path, r); err != nil {
			t.Fatal(err)
		}
		again, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r2, err := arena.ParseResults(again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("written back and read: %v\n%+v\n%+v", err, r, r2)
		}
		if r.Shard.Count == 1 {
			tab, _, err := arena.Merge(path)
			if err != nil || tab.Games != r.Arena.Games || len(tab.Results) != tab.Games || len(tab.Rows) != len(r.Arena.Seats) {
				t.Fatalf("one shard of %d games merged: %v %+v", r.Arena.Games, err, tab)
			}
			for _, c := range tab.Configurations {
				if c.WinLow > c.WinRate || c.WinRate > c.WinHigh || c.Rating != nil && (math.IsNaN(*c.Rating) || math.IsInf(*c.Rating, 0)) {
					t.Fatalf("configuration %+v", c)
				}
			}
		}
	})
}

// A results file is bounded: merge refuses, naming the file, one larger
// than MaxResultsBytes before reading it, and a stream that runs past the
// bound (arena merge FILE /dev/zero read 2.1 GB in 6 s and hung).
func TestMergeRefusesEndlessFile(t *testing.T) {
	g := conquestDemo(t)
	dir := t.TempDir()
	one := playShards(t, g, arena.Config{Games: 2, Seed: 1, MaxTurns: 3}, 2, dir)
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(arena.MaxResultsBytes + 1); err != nil { // sparse: no disk spent
		t.Fatal(err)
	}
	f.Close()
	want := ": more than 64 MiB, the most an arena results file may be"
	if _, _, err := arena.Merge(one[0], huge); err == nil || err.Error() != huge+want {
		t.Errorf("merge of a file past the bound: %v, want %q", err, huge+want)
	}
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero here")
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := arena.Merge(one[0], "/dev/zero")
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || err.Error() != "/dev/zero"+want {
			t.Errorf("merge of /dev/zero: %v, want %q", err, "/dev/zero"+want)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a measure
		t.Fatal("merge of /dev/zero still reading after a minute")
	}
}
