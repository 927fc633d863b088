package conquest

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// next plays turn s.Turn+1 of s with orders and returns the new state.
func next(t *testing.T, s *State, orders map[string][]Order) *State {
	t.Helper()
	n := s.clone()
	n.Turn = s.Turn + 1
	n.resolve(orders)
	return n
}

func TestTravelTurns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		x, y, want int
	}{
		{1, 0, 1}, {3, 0, 1}, {3, 3, 2}, {4, 0, 2}, {6, 0, 2}, {7, 0, 3}, {9, 9, 5}, {0, 10, 4},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("(0,0)-(%d,%d)", tt.x, tt.y), func(t *testing.T) {
			t.Parallel()
			a, b := &Star{}, &Star{X: tt.x, Y: tt.y}
			if got := travelTurns(a, b); got != tt.want {
				t.Errorf("travelTurns = %d, want %d (ceil(distance / %v))", got, tt.want, Speed)
			}
		})
	}
}

// A fleet lands at the movement step of its arrival turn: on an empty star
// it takes it, and production adds to it the same turn.
func TestFleetArrivesAndTakesStar(t *testing.T) {
	t.Parallel()
	s := board()
	s1 := next(t, s, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"G","ships":6}]`)})
	if f := s1.Fleets; len(f) != 1 || f[0].Arrives != 4+travelTurns(s.Star("A"), s.Star("G")) {
		t.Fatalf("fleets %+v", f)
	}
	arrives := s1.Fleets[0].Arrives
	for s1.Turn < arrives-1 {
		s1 = next(t, s1, nil)
		if len(s1.Fleets) != 1 || s1.Star("G").Owner != "" {
			t.Fatalf("turn %d: fleet landed early: %+v, G %+v", s1.Turn, s1.Fleets, s1.Star("G"))
		}
	}
	s1 = next(t, s1, nil)
	g := s1.Star("G")
	if len(s1.Fleets) != 0 || g.Owner != "p1" || g.Ships["p1"] != 6+g.Production {
		t.Fatalf("turn %d: fleets %+v, G %+v: want p1 holding G with 6 + production", s1.Turn, s1.Fleets, g)
	}
	if !slices.Contains(s1.Log, "p1's fleet of 6 from A arrived at G") || !slices.Contains(s1.Log, "p1 took G") {
		t.Errorf("log %q", s1.Log)
	}
}

// refBattle fights a battle by the rules as RULES.md says them, drawing
// from r in the same order: every round each party in turn rolls a die per
// ship (hits on need[i] or more), each party's hits fall on its strongest
// enemy as the round began (first in order on a tie), all at once.
func refBattle(r *Rand, forces, need []int) []int {
	f := slices.Clone(forces)
	alive := func() int {
		n := 0
		for _, x := range f {
			if x > 0 {
				n++
			}
		}
		return n
	}
	for alive() > 1 {
		hits := make([]int, len(f))
		for i := range f {
			for range f[i] {
				if r.d6() >= need[i] {
					hits[i]++
				}
			}
		}
		target := make([]int, len(f))
		for i := range f {
			target[i] = -1
			for j := range f {
				if j != i && f[j] > 0 && (target[i] < 0 || f[j] > f[target[i]]) {
					target[i] = j
				}
			}
		}
		shot := slices.Clone(f)
		for i := range f {
			if shot[i] > 0 {
				f[target[i]] = max(0, f[target[i]]-hits[i])
			}
		}
	}
	return f
}

// Combat: the star's owner hits on 3 or more, everyone else on 4 or more
// (neutral defenders of a neutral star are its owner); each party's hits
// fall on its strongest enemy.
func TestCombat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		owner    string
		p1, p2   int
		garrison int
		need     []int // per party: p1, p2, neutral (parties with no ships left out)
	}{
		{"attacker p2 at p1's star", "p1", 6, 7, 0, []int{3, 4}},
		{"attacker p1 at p2's star", "p2", 6, 7, 0, []int{4, 3}},
		{"p1 against neutral defenders", "", 5, 0, 4, []int{4, 3}},
		{"three parties at a neutral star", "", 9, 3, 6, []int{4, 4, 3}},
		{"three parties at p2's star", "p2", 12, 4, 7, []int{4, 3, 4}},
	}
	for _, tt := range tests {
		for seed := range uint64(20) {
			t.Run(fmt.Sprintf("%s/seed %d", tt.name, seed), func(t *testing.T) {
				t.Parallel()
				st := Star{ID: "X", Owner: tt.owner, Production: 1, Garrison: tt.garrison, Ships: map[string]int{"p1": tt.p1, "p2": tt.p2}}
				s := &State{Turn: 1, Players: []string{"p1", "p2"}, Stars: []Star{st}, Rand: newRand(seed)}
				var forces []int
				for _, n := range []int{tt.p1, tt.p2, tt.garrison} {
					if n > 0 {
						forces = append(forces, n)
					}
				}
				ref := newRand(seed)
				want := refBattle(&ref, forces, tt.need)
				s.combat()
				x := s.Stars[0]
				var got []int
				for i, n := range []int{x.Ships["p1"], x.Ships["p2"], x.Garrison} {
					if []int{tt.p1, tt.p2, tt.garrison}[i] > 0 {
						got = append(got, n)
					}
				}
				if !slices.Equal(got, want) {
					t.Fatalf("after battle %v, want %v", got, want)
				}
				survivors := 0
				for _, n := range got {
					if n > 0 {
						survivors++
					}
				}
				if survivors > 1 {
					t.Errorf("%d parties survived", survivors)
				}
				switch {
				case x.Ships["p1"] > 0 && x.Owner != "p1", x.Ships["p2"] > 0 && x.Owner != "p2":
					t.Errorf("survivor %v does not own the star (owner %q)", got, x.Owner)
				case x.Garrison > 0 && x.Owner != "":
					t.Errorf("neutral defenders won but owner is %q", x.Owner)
				}
				if len(s.Log) == 0 || !strings.HasPrefix(s.Log[0], "Battle at X (") {
					t.Errorf("log %q", s.Log)
				}
			})
		}
	}
}

// §6.2.3: both players submit invalid orders on the same turn: both get
// their errors, the valid orders execute and the game goes on.
func TestBothPlayersInvalidSameTurn(t *testing.T) {
	t.Parallel()
	s := board()
	s1 := next(t, s, map[string][]Order{
		"p1": orders(t, `[{"from":"A","to":"B","ships":7},{"from":"A","to":"C","ships":5}]`),
		"p2": orders(t, `[{"from":"A","to":"G","ships":1},{"from":"F","to":"G","ships":"all"},{"from":"F","to":"G","ships":2}]`),
	})
	p1 := errorTexts(s1.ErrorsOf("p1", 4))
	p2 := errorTexts(s1.ErrorsOf("p2", 4))
	if want := []string{"Invalid orders: Total ships from A (12) exceeds available (10). Orders from A: [7 to B, 5 to C]"}; !slices.Equal(p1, want) {
		t.Errorf("p1 errors %q, want %q", p1, want)
	}
	if want := []string{
		"Order 0: A -> G with 1 ships: Player p2 does not control origin star A",
		`Order 1: F -> G with "all" ships: Ships must be a whole number, got "all"`,
	}; !slices.Equal(p2, want) {
		t.Errorf("p2 errors %q, want %q", p2, want)
	}
	if s1.Over() || len(fleetsOf(s1, "p1")) != 0 || len(fleetsOf(s1, "p2")) != 1 {
		t.Fatalf("result %v, fleets %+v", s1.Result, s1.Fleets)
	}
	// The next turn plays on, and its view shows no stale errors.
	s2 := next(t, s1, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":7}]`)})
	if len(s2.ErrorsOf("p1", 5)) != 0 || len(fleetsOf(s2, "p1")) != 1 || len(s2.Errors) != 3 {
		t.Errorf("turn 5: errors %+v, fleets %+v", s2.Errors, s2.Fleets)
	}
	if v := ViewOf(s2, "p1"); len(v.Errors) != 0 || v.Turn != 6 {
		t.Errorf("view of turn 6: %+v", v.Errors)
	}
	if v := ViewOf(s1, "p2"); !slices.Equal(v.Errors, p2) {
		t.Errorf("p2's view after turn 4 shows %q, want %q", v.Errors, p2)
	}
}

// §6.2.4: a star lost in combat before its orders execute: the order is
// skipped with the ownership error, the player's other orders execute.
func TestStarLostInCombatBeforeOrdersExecute(t *testing.T) {
	t.Parallel()
	s := board()
	s.Fleets = []Fleet{{Owner: "p2", From: "F", To: "D", Ships: 30, Sent: 2, Arrives: 4}}
	o := orders(t, `[{"from":"D","to":"B","ships":3},{"from":"A","to":"B","ships":2}]`)
	if errs := Check(s, "p1", o); len(errs) != 0 {
		t.Fatalf("orders invalid when planned: %q", errs)
	}
	s1 := next(t, s, map[string][]Order{"p1": o})
	if d := s1.Star("D"); d.Owner != "p2" || d.Ships["p1"] != 0 {
		t.Fatalf("D after the battle: %+v (log %q)", d, s1.Log)
	}
	want := "Order 0: D -> B with 3 ships: Player p1 does not control origin star D"
	if got := errorTexts(s1.ErrorsOf("p1", 4)); !slices.Equal(got, []string{want}) {
		t.Fatalf("errors %q, want [%q]", got, want)
	}
	if f := fleetsOf(s1, "p1"); len(f) != 1 || f[0].From != "A" {
		t.Errorf("p1 fleets %+v, want A -> B", f)
	}
	if !slices.ContainsFunc(s1.Log, func(l string) bool { return strings.HasPrefix(l, "Battle at D (p1 5 vs p2 30): p2 survived with ") }) ||
		!slices.Contains(s1.Log, "p2 took D from p1") {
		t.Errorf("log %q", s1.Log)
	}
	block := ErrorBlock(s1, "p1", false)
	wantBlock := "\n" + strings.Repeat("=", 60) + "\nORDER ERRORS FROM LAST TURN\n" + strings.Repeat("=", 60) + "\n" +
		"\nOrder skipped: 3 ships from D to B\n  Reason: Player p1 does not control origin star D\n" +
		"  Suggestion: Send fleets only from stars you control: A\n\n"
	if block != wantBlock {
		t.Errorf("ErrorBlock:\n%q\nwant\n%q", block, wantBlock)
	}
}

// Rebellion: a star whose owner keeps fewer ships there than it produces
// rebels on a roll of 1; it turns neutral before the orders execute, so an
// order from it is skipped (the seed's "lost star mid-turn"). The roll is
// the turn's only draw here, so whether it happens is known from the seed.
func TestRebellionLosesStar(t *testing.T) {
	t.Parallel()
	rebelled, held := 0, 0
	for seed := range uint64(200) {
		s := board()
		s.Star("A").Ships["p1"] = 3 // production 4: A may rebel; D and F may not
		s.Rand = newRand(seed)
		roll := newRand(seed)
		rebels := roll.d6() == 1
		s1 := next(t, s, map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":2},{"from":"D","to":"B","ships":1}]`)})
		a := s1.Star("A")
		errs := errorTexts(s1.ErrorsOf("p1", 4))
		if rebels {
			rebelled++
			want := "Order 0: A -> B with 2 ships: Player p1 does not control origin star A"
			if a.Owner != "" || a.Garrison != 3+4 || a.Ships["p1"] != 0 || !slices.Equal(errs, []string{want}) ||
				!slices.Contains(s1.Log, "Rebellion at A: p1 lost it; 7 rebels hold it") {
				t.Fatalf("seed %d rolled 1: A %+v, errors %q, log %q", seed, a, errs, s1.Log)
			}
			if f := fleetsOf(s1, "p1"); len(f) != 1 || f[0].From != "D" {
				t.Fatalf("seed %d: fleets %+v, want D's only", seed, f)
			}
			continue
		}
		held++
		if a.Owner != "p1" || a.Ships["p1"] != 3-2+4 || len(errs) != 0 || len(fleetsOf(s1, "p1")) != 2 {
			t.Fatalf("seed %d rolled no 1: A %+v, errors %q", seed, a, errs)
		}
	}
	if rebelled < 10 || held < 100 {
		t.Errorf("over 200 seeds %d rebellions and %d held: want about 1 in 6", rebelled, held)
	}
	// A star with as many ships as it produces never rebels.
	for seed := range uint64(50) {
		s := board()
		s.Star("A").Ships["p1"] = 4
		s.Rand = newRand(seed)
		if s1 := next(t, s, nil); s1.Star("A").Owner != "p1" {
			t.Fatalf("seed %d: A rebelled with 4 ships and production 4", seed)
		}
	}
}

func TestProduction(t *testing.T) {
	t.Parallel()
	s := board()
	s1 := next(t, s, nil)
	for _, tt := range []struct {
		id, player string
		want       int
	}{{"A", "p1", 14}, {"D", "p1", 7}, {"F", "p2", 10}} {
		if got := s1.Star(tt.id).Ships[tt.player]; got != tt.want {
			t.Errorf("%s: %d ships, want %d", tt.id, got, tt.want)
		}
	}
	if c := s1.Star("C"); c.Garrison != 2 || len(c.Ships) != 0 {
		t.Errorf("a neutral star grew: %+v", c)
	}
}

func TestVictory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		max      int
		change   func(s *State)
		winner   string
		reason   string // prefix; "" for a game that goes on
		drawOver bool
	}{
		{"p2 holds nothing", 0, func(s *State) { f := s.Star("F"); f.Owner, f.Ships = "", map[string]int{} }, "p1", "last player holding stars or ships", false},
		{"p2 has only a fleet in flight", 0, func(s *State) {
			f := s.Star("F")
			f.Owner, f.Ships = "", map[string]int{}
			s.Fleets = []Fleet{{Owner: "p2", From: "F", To: "G", Ships: 1, Sent: 3, Arrives: 9}}
		}, "", "", false},
		{"nobody holds anything", 0, func(s *State) {
			for i := range s.Stars {
				s.Stars[i].Owner, s.Stars[i].Ships = "", map[string]int{}
			}
		}, "", "no player holds stars or ships", true},
		{"turn limit: most stars", 4, func(*State) {}, "p1", "turn limit 4 reached: most stars, then ships (2 stars, 21 ships)", false},
		{"turn limit: equal stars, most ships", 4, func(s *State) {
			s.Star("G").Owner, s.Star("G").Ships = "p2", map[string]int{"p2": 5}
			s.Star("F").Ships["p2"] = 20
		}, "p2", "turn limit 4 reached: most stars, then ships (2 stars, 30 ships)", false},
		{"turn limit: equal stars and ships", 4, func(s *State) {
			s.Star("G").Owner, s.Star("G").Ships = "p2", map[string]int{"p2": 10}
		}, "", "turn limit 4 reached: equal stars and ships, a draw", true},
		{"before the turn limit", 5, func(*State) {}, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := board()
			s.MaxTurns = tt.max
			tt.change(s)
			s1 := next(t, s, nil)
			if tt.reason == "" {
				if s1.Over() {
					t.Fatalf("game over: %+v", s1.Result)
				}
				return
			}
			want := Result{Turn: 4, Winner: tt.winner, Reason: tt.reason}
			if s1.Result == nil || *s1.Result != want {
				t.Fatalf("result %+v, want %+v", s1.Result, want)
			}
			over, how := (&Game{}).Over(s1)
			if !over || how != want.String() || (tt.drawOver != strings.HasPrefix(how, "draw")) {
				t.Errorf("Over = %v %q", over, how)
			}
		})
	}
}
