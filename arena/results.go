package arena

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/internal/atomicfile"
)

// ResultsFormat names the format of a results file, in its "format" key.
const ResultsFormat = "arbiter arena results 1"

// Identity is what an arena is: the shards of one arena merge, the shards
// of two arenas do not.
type Identity struct {
	Kind       string `json:"kind"`
	Simulation string `json:"simulation"` // the simulation's id, as the table's header names it
	// Settings is a digest of what else decides how a game plays (the
	// simulation's settings; with a model seat, the model's and the
	// prompts'), Build the arbiter build that played: the same seed played
	// by another build or with other settings is another game.
	Settings string `json:"settings"`
	Build    string `json:"build"`
	Seats    []Seat `json:"seats"` // every player, in the kind's order
	Seed     uint64 `json:"seed"`
	Games    int    `json:"games"`
	MaxTurns int    `json:"max_turns"` // 0: 10,000
}

// Seat is how one player sits: its seat configuration, bot, model (the
// simulation's own model seat) or model:<name> (a model seat with a
// configuration of its own).
type Seat struct {
	Player string `json:"player"`
	Seat   string `json:"seat"`
}

// Results is what one shard of an arena played: the arena, the shard and
// its games in game order. WriteResults writes it, Merge merges the
// results files of every shard of an arena into the arena's table.
type Results struct {
	Format  string       `json:"format"` // ResultsFormat
	Arena   Identity     `json:"arena"`
	Shard   Shard        `json:"shard"`
	Results []GameResult `json:"results"`
}

// MaxResultsBytes bounds a results file: 10,000 games (the most an arena
// plays) take a few MiB; merge refuses a larger file, or a stream (a FIFO,
// /dev/zero) that runs past it, without reading further.
const MaxResultsBytes = 64 << 20

// WriteResults writes r to path whole, or leaves path as it was: a shard
// killed while writing leaves no half file for merge to read.
func WriteResults(path string, r *Results) (int, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return 0, err
	}
	b = append(b, '\n')
	return len(b), atomicfile.Write(path, b)
}

// ParseResults reads a results file: one JSON document of ResultsFormat,
// with no unknown keys, whose games are those of its shard (their seeds),
// each with a result for every player and no other.
func ParseResults(b []byte) (*Results, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var r Results
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("damaged, or not an arena results file: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("damaged, or not an arena results file: more after its JSON document")
	}
	if r.Format != ResultsFormat {
		return nil, fmt.Errorf("not an arena results file: format %q, want %q", r.Format, ResultsFormat)
	}
	if err := r.check(); err != nil {
		return nil, fmt.Errorf("damaged arena results file: %w", err)
	}
	return &r, nil
}

func (r *Results) check() error {
	a := r.Arena
	switch {
	case a.Kind == "":
		return errors.New("no kind")
	case a.Games < 1:
		return fmt.Errorf("games %d", a.Games)
	case a.MaxTurns < 0:
		return fmt.Errorf("max_turns %d", a.MaxTurns)
	case len(a.Seats) == 0:
		return errors.New("no seats")
	}
	players := make([]string, 0, len(a.Seats))
	for _, s := range a.Seats {
		if s.Player == "" || slices.Contains(players, s.Player) {
			return fmt.Errorf("seats: player %q empty or twice", s.Player)
		}
		if name, ok := strings.CutPrefix(s.Seat, "model:"); s.Seat != "model" && s.Seat != "bot" && (!ok || !ValidConfigName(name)) {
			return fmt.Errorf("seat %s is %q, not bot, model or model:<name>", s.Player, s.Seat)
		}
		players = append(players, s.Player)
	}
	if err := r.Shard.Check(a.Games); err != nil {
		return err
	}
	if n := r.Shard.size(a.Games); len(r.Results) != n {
		return fmt.Errorf("shard %s of %d games holds %d results, want %d", r.Shard, a.Games, len(r.Results), n)
	}
	for j, res := range r.Results {
		k := r.Shard.game(j)
		if want := a.Seed + uint64(k); res.Seed != want {
			return fmt.Errorf("result %d: seed %d, want %d (game %d)", j+1, res.Seed, want, k+1)
		}
		if res.Turns < 0 {
			return fmt.Errorf("game with seed %d: %d turns", res.Seed, res.Turns)
		}
		if res.Winner != "" && !slices.Contains(players, res.Winner) {
			return fmt.Errorf("game with seed %d: winner %q is not a player", res.Seed, res.Winner)
		}
		if len(res.Players) != len(players) {
			return fmt.Errorf("game with seed %d: %d players, want %s", res.Seed, len(res.Players), strings.Join(players, ", "))
		}
		for _, p := range players {
			ps, ok := res.Players[p]
			if !ok {
				return fmt.Errorf("game with seed %d: no result for %s", res.Seed, p)
			}
			if ps.Errors < 0 || ps.Calls < 0 || ps.FailedCalls < 0 || ps.Tokens < 0 {
				return fmt.Errorf("game with seed %d: %s has a negative count", res.Seed, p)
			}
		}
	}
	return nil
}

// Merge reads the results files of an arena's shards, one file for each
// shard of one split, and returns the arena's table as one run of the
// whole arena with the same seed returns it, and the arena. It refuses,
// naming the file, a file it cannot read or that is damaged, a file of
// another arena (kind, simulation, seats, seed, games, turn cap, settings
// or build), a shard of another split, a shard given twice, and it names
// the shards that are missing.
func Merge(paths ...string) (*Table, *Identity, error) {
	if len(paths) == 0 {
		return nil, nil, errors.New("no results files to merge")
	}
	files := make([]*Results, len(paths))
	for i, path := range paths {
		b, err := readResults(path)
		if err != nil {
			return nil, nil, err
		}
		if files[i], err = ParseResults(b); err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	first := files[0]
	byIndex := make([]int, first.Shard.Count) // shard index-1 -> position in paths, +1
	for i, f := range files {
		if d := first.Arena.differs(f.Arena); d != "" {
			return nil, nil, fmt.Errorf("%s is another arena than %s: %s", paths[i], paths[0], d)
		}
		if f.Shard.Count != first.Shard.Count {
			return nil, nil, fmt.Errorf("%s is shard %s, %s shard %s: a split is --shard i/n with the same n", paths[i], f.Shard, paths[0], first.Shard)
		}
		if j := byIndex[f.Shard.Index-1]; j != 0 && paths[j-1] == paths[i] {
			return nil, nil, fmt.Errorf("%s is given twice", paths[i])
		} else if j != 0 {
			return nil, nil, fmt.Errorf("%s is shard %s, as %s is: give each shard once", paths[i], f.Shard, paths[j-1])
		}
		byIndex[f.Shard.Index-1] = i + 1
	}
	var missing []string
	for i, j := range byIndex {
		if j == 0 {
			missing = append(missing, Shard{i + 1, first.Shard.Count}.String())
		}
	}
	if len(missing) > 0 {
		return nil, nil, fmt.Errorf("shard %s missing: merge needs every shard of the split (%d files given)", strings.Join(missing, ", "), len(paths))
	}
	id := first.Arena
	results := make([]GameResult, id.Games)
	for _, f := range files {
		for j, res := range f.Results {
			results[f.Shard.game(j)] = res
		}
	}
	return summarize(id, results), &id, nil
}

// readResults reads the results file at path, at most MaxResultsBytes of
// it: a larger file is refused, naming it, before it is read, and a stream
// that runs past the bound is refused once it has.
func readResults(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tooLarge := fmt.Errorf("%s: more than %d MiB, the most an arena results file may be", path, MaxResultsBytes>>20)
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxResultsBytes {
		return nil, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxResultsBytes+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", path, err)
	case len(b) > MaxResultsBytes:
		return nil, tooLarge
	}
	return b, nil
}

// differs says how b is another arena than a, "" when it is the same one.
func (a Identity) differs(b Identity) string {
	seats := func(ss []Seat) string {
		out := make([]string, len(ss))
		for i, s := range ss {
			out[i] = s.Player + "=" + s.Seat
		}
		return strings.Join(out, ",")
	}
	for _, f := range []struct{ name, a, b string }{
		{"kind", a.Kind, b.Kind},
		{"simulation", a.Simulation, b.Simulation},
		{"seats", seats(a.Seats), seats(b.Seats)},
		{"seed", fmt.Sprint(a.Seed), fmt.Sprint(b.Seed)},
		{"games", fmt.Sprint(a.Games), fmt.Sprint(b.Games)},
		{"max turns", fmt.Sprint(a.MaxTurns), fmt.Sprint(b.MaxTurns)},
		{"settings digest", a.Settings, b.Settings},
		{"arbiter build", a.Build, b.Build},
	} {
		if f.a != f.b {
			return fmt.Sprintf("%s %s, not %s", f.name, f.b, f.a)
		}
	}
	return ""
}
