package conquest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/store"
)

// loadEdited plays one bot turn in a new folder, stores edit's change to
// it in place of the turn, and returns what Load makes of it.
func loadEdited(t *testing.T, edit func(*State)) error {
	t.Helper()
	dir := t.TempDir()
	g := newGame(t, botSettings(1))
	r, st := openRunner(t, dir, g, nil)
	if _, err := r.Run(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	raw, err := st.State(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	var row stored
	if err := json.Unmarshal(raw, &row); err != nil {
		t.Fatal(err)
	}
	edit(&row.State)
	path := filepath.Join(dir, store.FileName)
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE ticks SET state_json = ? WHERE tick = 1", jsonOf(t, row)); err != nil {
		t.Fatal(err)
	}
	db.Close()
	ro, err := store.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = g.Load(ctx, ro, 1)
	return err
}

// TestConquestStateLoadedChecked: a stored turn no game could reach (a
// fleet bound for a star the map lacks, a count past MaxShips or below 0,
// an owner not playing, a repeated star) is damaged run state, named with the
// tick and the way out, never played (a missing star panicked in move, a
// count of MaxInt64 spun in battle).
func TestConquestStateLoadedChecked(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		edit func(*State)
		want string
	}{
		{"fleet to ZZ", func(s *State) {
			s.Fleets = append(s.Fleets, Fleet{Owner: "p1", From: s.Stars[0].ID, To: "ZZ", Ships: 5, Sent: 1, Arrives: 2})
		}, "-> ZZ, 5 ships): want a player's fleet of 1 to 2147483647 ships between stars of the map"},
		{"ships MaxInt64", func(s *State) { s.Stars[1].Ships["p2"] = math.MaxInt64 }, `ships["p2"] = 9223372036854775807`},
		{"negative garrison", func(s *State) { s.Stars[2].Garrison = -1 }, "garrison -1 must be at least 0, at most 2147483647"},
		{"owner not playing", func(s *State) { s.Stars[0].Owner = "p9" }, `owner "p9" is not one of the players`},
		{"repeated star", func(s *State) { s.Stars[1].ID = s.Stars[0].ID }, "is empty or repeated"},
		{"fleet MaxInt64", func(s *State) {
			s.Fleets = append(s.Fleets, Fleet{Owner: "p2", From: "A", To: "B", Ships: math.MaxInt64, Sent: 1, Arrives: 2})
		}, "9223372036854775807 ships"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := loadEdited(t, tt.edit)
			if !errors.Is(err, store.ErrDamaged) || !strings.Contains(err.Error(), "state.db tick 1: ") ||
				!strings.Contains(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), "; `arbiter reset` starts over") {
				t.Errorf("Load = %v\nwant ErrDamaged, state.db tick 1, %q and `arbiter reset`", err, tt.want)
			}
		})
	}
	if err := loadEdited(t, func(*State) {}); err != nil {
		t.Errorf("Load of the turn as played = %v", err)
	}
}

// TestConquestCombatBounded: a battle ends, soon, whatever the counts: six
// parties of MaxInt64 ships, MaxInt64 against one ship, MaxShips against
// MaxShips. The test's deadline, not a timing assertion, fails a spin.
func TestConquestCombatBounded(t *testing.T) {
	t.Parallel()
	players := []string{"p1", "p2", "p3", "p4", "p5"}
	for _, tt := range []struct {
		name     string
		ships    map[string]int
		garrison int
	}{
		{"six MaxInt64", map[string]int{"p1": math.MaxInt64, "p2": math.MaxInt64, "p3": math.MaxInt64, "p4": math.MaxInt64, "p5": math.MaxInt64}, math.MaxInt64},
		{"MaxInt64 vs 1", map[string]int{"p1": 1, "p2": math.MaxInt64}, 0},
		{"MaxShips vs MaxShips", map[string]int{"p1": MaxShips, "p2": MaxShips}, MaxShips},
		{"just past exact", map[string]int{"p1": exactDice + 1, "p2": exactDice}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &State{Turn: 1, Players: players, Rand: newRand(3),
				Stars: []Star{{ID: "A", Owner: "p1", Production: 4, Ships: tt.ships, Garrison: tt.garrison}}}
			done := make(chan struct{})
			go func() { s.combat(); close(done) }()
			select {
			case <-done:
			case <-time.After(time.Minute):
				t.Fatal("combat still running after a minute")
			}
			st := s.Stars[0]
			if parties := s.parties(&st); len(parties) > 1 || st.Garrison < 0 {
				t.Errorf("after the battle: %v, garrison %d, ships %v", parties, st.Garrison, st.Ships)
			}
			for p, n := range st.Ships {
				if n < 0 || n > tt.ships[p] {
					t.Errorf("%s has %d ships, had %d", p, n, tt.ships[p])
				}
			}
		})
	}
}

// TestConquestHitsApproximation: above exactDice the hits drawn at once
// keep the dice's mean, within a fraction of a percent, and stay within
// 0..n for any n.
func TestConquestHitsApproximation(t *testing.T) {
	t.Parallel()
	r := newRand(5)
	for _, n := range []int{exactDice + 1, 1 << 20, MaxShips, math.MaxInt64} {
		for _, need := range []int{3, 4} {
			p := float64(7-need) / 6
			sum := 0.0
			for range 100 {
				h := r.hits(n, need)
				if h < 0 || h > n {
					t.Fatalf("hits(%d, %d) = %d", n, need, h)
				}
				sum += float64(h)
			}
			if mean := sum / 100; math.Abs(mean/(float64(n)*p)-1) > 0.005 {
				t.Errorf("hits(%d, %d): mean %.0f, want about %.0f", n, need, mean, float64(n)*p)
			}
		}
	}
}

// numberedFromZero renumbers the orders of a turn's log from 0, as the log
// numbered them when the digests below were taken (it counts from 1 since,
// as people read it): the digests still prove the games unchanged.
func numberedFromZero(log []string) []string {
	re := regexp.MustCompile(`^Order (\d+)( of |: )`)
	out := make([]string, len(log))
	for i, l := range log {
		out[i] = re.ReplaceAllStringFunc(l, func(m string) string {
			g := re.FindStringSubmatch(m)
			n, _ := strconv.Atoi(g[1])
			return fmt.Sprintf("Order %d%s", n-1, g[2])
		})
	}
	return out
}

// TestConquestCombatOutcomeUnchanged: bot games of realistic size play as
// they did before big parties drew their hits at once, to the log line (the
// digests were taken from the die-by-die code), and ship counts that would
// pass MaxShips stop there.
func TestConquestCombatOutcomeUnchanged(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		seed         uint64
		result, logs string
	}{
		{0, "p3 won at turn 39 (last player holding stars or ships)", "bd1a89ca2ae647604ac7a3d14480f3a2397867cc7bdbc98f2024f1c5b7eb0402"},
		{1, "p2 won at turn 36 (last player holding stars or ships)", "0fa23a02bfbc18aa69e081a180a5b1adb0aaadb2110307ec1d60df1461fdb3a9"},
		{3, "p2 won at turn 30 (last player holding stars or ships)", "a02301ddb506b1581d713ffbeb41c03bfdcc153bab9f43970d009402af06346a"},
	} {
		set := Setup{Seed: tt.seed, MaxTurns: 200, Stars: 20, Width: 14, Height: 14, Players: []string{"p1", "p2", "p3"}}
		s := NewGame(set)
		h := sha256.New()
		for turn := 1; !s.Over(); turn++ {
			orders := map[string][]Order{}
			for _, p := range s.Players {
				orders[p] = BotOrders(s, p)
			}
			next := s.clone()
			next.Turn = turn
			next.resolve(orders)
			h.Write([]byte(strings.Join(numberedFromZero(next.Log), "\n")))
			s = next
		}
		if got, logs := s.Result.String(), hex.EncodeToString(h.Sum(nil)); got != tt.result || logs != tt.logs {
			t.Errorf("seed %d: %s, logs %s; want %s, logs %s", tt.seed, got, logs, tt.result, tt.logs)
		}
	}
	s := board()
	s.Stars[0].Ships["p1"] = MaxShips
	s.Fleets = []Fleet{{Owner: "p1", From: "D", To: "A", Ships: MaxShips, Sent: 3, Arrives: 4}}
	s.Turn = 4
	s.resolve(nil)
	if n := s.Stars[0].Ships["p1"]; n != MaxShips {
		t.Errorf("MaxShips landing on MaxShips, then production: %d ships, want %d", n, MaxShips)
	}
	if err := s.check(); err != nil {
		t.Errorf("the state after the turn: %v", err)
	}
}

// FuzzConquestState: any text ReadState takes is a state a turn plays on
// without a panic, a spin or a count out of 0..MaxShips, and what the turn
// leaves passes the same check; extreme counts are refused, never wrapped.
func FuzzConquestState(f *testing.F) {
	f.Add(jsonOf(f, board()))
	b := board()
	b.Fleets = []Fleet{{Owner: "p2", From: "F", To: "A", Ships: MaxShips, Sent: 3, Arrives: 4}}
	b.Stars[0].Ships["p1"], b.Stars[0].Garrison = MaxShips, MaxShips
	f.Add(jsonOf(f, b))
	f.Add(`{"turn": 3, "players": ["p1", "p2"], "stars": [{"id": "A", "owner": "p1", "x": -9223372036854775808, "y": 9223372036854775807, "production": 2147483647, "ships": {"p1": 2147483647, "p2": 9223372036854775807}}], "fleets": [{"owner": "p1", "from": "A", "to": "ZZ", "ships": 9223372036854775807}]}`)
	f.Add(`{"turn": 1, "players": ["p1"], "stars": [{"id": "A", "owner": "p1", "production": -1, "garrison": 2147483648}]}`)
	f.Fuzz(func(t *testing.T, text string) {
		s, err := ReadState([]byte(text))
		if err != nil {
			return
		}
		if len(s.Stars) > 64 || len(s.Fleets) > 64 || len(s.Players) > 8 {
			return // a turn's work grows with the map, not what is fuzzed here
		}
		orders := map[string][]Order{}
		for _, p := range s.Players {
			orders[p] = BotOrders(s, p)
		}
		next := s.clone()
		next.Turn = s.Turn + 1
		next.resolve(orders)
		if err := next.check(); err != nil {
			t.Fatalf("after a turn: %v\nfrom %s", err, text)
		}
	})
}
