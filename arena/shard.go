package arena

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Shard is the part of an arena's games one run plays, so that an arena
// can be spread over machines: shard Index of Count (from 1) plays the
// games k (from 0) with k mod Count = Index-1, each with seed Seed+k as in
// the whole arena. The Count shards of a split play every game once, and
// game k plays the same whichever shard plays it. The zero Shard is the
// whole arena.
type Shard struct {
	Index int `json:"index"`
	Count int `json:"count"`
}

func (s Shard) String() string { return fmt.Sprintf("%d/%d", s.Index, s.Count) }

// whole is s, or 1/1 for the zero Shard.
func (s Shard) whole() Shard {
	if s == (Shard{}) {
		return Shard{1, 1}
	}
	return s
}

// ParseShard reads i/n (3/4: the third of four shards). Check tells
// whether it fits an arena.
func ParseShard(spec string) (Shard, error) {
	i, n, ok := strings.Cut(strings.TrimSpace(spec), "/")
	if !ok {
		return Shard{}, errors.New("want i/n, such as 1/4 (this run plays the first of 4 shards)")
	}
	var s Shard
	var err error
	if s.Index, err = strconv.Atoi(strings.TrimSpace(i)); err != nil {
		return Shard{}, fmt.Errorf("shard index %q is not a whole number (want i/n, such as 1/4)", i)
	}
	if s.Count, err = strconv.Atoi(strings.TrimSpace(n)); err != nil {
		return Shard{}, fmt.Errorf("shard count %q is not a whole number (want i/n, such as 1/4)", n)
	}
	return s, nil
}

// Check says why s cannot be a shard of an arena of games games: its
// index must be from 1 to its count, and every shard must have a game to
// play (count at most games).
func (s Shard) Check(games int) error {
	switch {
	case s.Count < 1:
		return fmt.Errorf("shard count %d: want at least 1", s.Count)
	case s.Index < 1 || s.Index > s.Count:
		return fmt.Errorf("shard index %d: want 1 to %d (the count)", s.Index, s.Count)
	case s.Count > games:
		return fmt.Errorf("%d shards of %d games: every shard needs a game, so at most %d shards", s.Count, games, games)
	}
	return nil
}

// size is how many games s (checked) plays of games.
func (s Shard) size(games int) int {
	return (games-s.Index)/s.Count + 1
}

// game is the index (from 0) of the j-th game s plays.
func (s Shard) game(j int) int { return s.Index - 1 + j*s.Count }
