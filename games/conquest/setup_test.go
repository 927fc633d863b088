package conquest

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestReadSetupDefaults(t *testing.T) {
	t.Parallel()
	set, err := ReadSetup(simulation(map[string]any{"seats": map[string]any{"p2": SeatBot, "p1": SeatModel}}))
	if err != nil {
		t.Fatal(err)
	}
	want := Setup{Seed: 1, MaxTurns: 50, Stars: 10, Width: 10, Height: 10, Seats: map[string]string{"p1": SeatModel, "p2": SeatBot}, Players: []string{"p1", "p2"}}
	if fmt.Sprint(set) != fmt.Sprint(want) {
		t.Errorf("setup %+v, want %+v", set, want)
	}
}

// Every settings error names simulation.yaml and the key.
func TestReadSetupErrors(t *testing.T) {
	t.Parallel()
	two := map[string]any{"p1": SeatBot, "p2": SeatBot}
	with := func(kv ...any) map[string]any {
		m := map[string]any{"seats": two}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name     string
		settings map[string]any
		want     string
	}{
		{"unknown key", with("speed", 3), "settings.speed: unknown setting (a conquest reads seed, max_turns, stars, width, height, seats)"},
		{"no seats", map[string]any{}, "settings.seats: want a map of player id to model, bot or person"},
		{"seats not a map", with("seats", []any{"p1", "p2"}), "settings.seats: want a map"},
		{"bad seat", with("seats", map[string]any{"p1": "wizard", "p2": SeatBot}), "settings.seats.p1: want model, bot or person, got wizard"},
		{"seat not a string", with("seats", map[string]any{"p1": 3, "p2": SeatBot}), "settings.seats.p1: want model, bot or person, got 3"},
		{"bad player id", with("seats", map[string]any{"Player 1": SeatBot, "p2": SeatBot}), `settings.seats: player id "Player 1" must match [a-z][a-z0-9_-]*`},
		{"too few players", with("seats", map[string]any{"p1": SeatBot}), "settings.seats: a game has 2 to 6 players, got 1"},
		{"too many players", with("seats", map[string]any{"a": "bot", "b": "bot", "c": "bot", "d": "bot", "e": "bot", "f": "bot", "g": "bot"}),
			"settings.seats: a game has 2 to 6 players, got 7"},
		{"max_turns zero", with("max_turns", 0), "settings.max_turns: want a whole number from 1 to 10000, got 0"},
		{"max_turns a word", with("max_turns", "many"), "settings.max_turns: want a whole number from 1 to 10000, got many"},
		{"stars a fraction", with("stars", 4.5), "settings.stars: want a whole number from 2 to 26, got 4.5"},
		{"stars 27", with("stars", 27), "settings.stars: want a whole number from 2 to 26, got 27"},
		{"width 1", with("width", 1), "settings.width: want a whole number from 2 to 100, got 1"},
		{"height negative", with("height", -4), "settings.height: want a whole number from 2 to 100, got -4"},
		{"seed negative", with("seed", -1), "settings.seed: want a whole number from 0 to 2147483647, got -1"},
		{"seed a word", with("seed", "lucky"), "settings.seed: want a whole number from 0 to 2147483647, got lucky"},
		{"fewer stars than players", with("stars", 2, "seats", map[string]any{"p1": "bot", "p2": "bot", "p3": "bot"}), "settings.stars: 2 stars cannot give 3 players a home each"},
		{"no room on the map", with("stars", 26), "settings.stars: 26 stars do not fit a 10x10 map two units apart (at most 25)"},
		{"no room on a small map", with("stars", 5, "width", 3, "height", 3), "settings.stars: 5 stars do not fit a 3x3 map two units apart (at most 4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadSetup(simulation(tt.settings))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if !strings.Contains(err.Error(), "sims/c/simulation.yaml: "+tt.want) {
				t.Errorf("error:\n%v\nwant it to contain\nsims/c/simulation.yaml: %s", err, tt.want)
			}
		})
	}
}

// Every map ReadSetup allows is dealt: the stars fit at least two units
// apart, each player has a home, and the same seed deals the same map.
func TestNewGame(t *testing.T) {
	t.Parallel()
	type size struct{ stars, w, h, players int }
	sizes := []size{{10, 10, 10, 2}, {25, 10, 10, 6}, {4, 3, 3, 2}, {2, 2, 3, 2}, {26, 11, 9, 3}, {6, 2, 12, 2}, {8, 5, 5, 4}}
	for _, sz := range sizes {
		for seed := range uint64(8) {
			t.Run(fmt.Sprintf("%d stars %dx%d %d players seed %d", sz.stars, sz.w, sz.h, sz.players, seed), func(t *testing.T) {
				t.Parallel()
				seats := map[string]any{}
				for i := range sz.players {
					seats[fmt.Sprintf("p%d", i+1)] = SeatBot
				}
				set, err := ReadSetup(simulation(map[string]any{"seed": int(seed), "stars": sz.stars, "width": sz.w, "height": sz.h, "seats": seats}))
				if err != nil {
					t.Fatal(err)
				}
				s := NewGame(set)
				if len(s.Stars) != sz.stars {
					t.Fatalf("%d stars, want %d", len(s.Stars), sz.stars)
				}
				homes := map[string]int{}
				for i, st := range s.Stars {
					if st.ID != string(rune('A'+i)) || st.X < 0 || st.X >= sz.w || st.Y < 0 || st.Y >= sz.h {
						t.Errorf("star %d: %+v", i, st)
					}
					for _, o := range s.Stars[:i] {
						if d := math.Hypot(float64(o.X-st.X), float64(o.Y-st.Y)); d < 2 {
							t.Errorf("%s and %s are %.2f apart", o.ID, st.ID, d)
						}
					}
					switch {
					case st.Owner != "":
						homes[st.Owner]++
						if st.Production != HomeProduction || st.Ships[st.Owner] != HomeShips || st.Garrison != 0 {
							t.Errorf("home %+v", st)
						}
					case st.Production < 1 || st.Production > 3 || st.Garrison < st.Production || st.Garrison > st.Production+2 || len(st.Ships) != 0:
						t.Errorf("neutral star %+v", st)
					}
				}
				for _, p := range set.Players {
					if homes[p] != 1 {
						t.Errorf("%s has %d homes", p, homes[p])
					}
				}
				if again := NewGame(set); jsonOf(t, again) != jsonOf(t, s) {
					t.Error("the same seed dealt another map")
				}
			})
		}
	}
	// A Setup ReadSetup would refuse still ends (with the stars that fit).
	s := NewGame(Setup{Seed: 1, Stars: 9, Width: 2, Height: 2, Players: []string{"p1", "p2"}, MaxTurns: 5})
	if len(s.Stars) != 1 {
		t.Errorf("a 2x2 map holds %d stars two units apart, want 1", len(s.Stars))
	}
}

// ReadState reads what check-orders is given: a file with only turn,
// players and stars works; each problem names its star.
func TestReadState(t *testing.T) {
	t.Parallel()
	minimal := `{"turn": 2, "players": ["p1", "p2"], "stars": [
		{"id": "B", "owner": null, "x": 3, "y": 0, "production": 1, "ships": {}},
		{"id": "A", "owner": "p1", "x": 0, "y": 0, "production": 4, "ships": {"p1": 10}}]}`
	s, err := ReadState([]byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if s.Turn != 2 || len(s.Stars) != 2 || s.Stars[0].ID != "A" || s.Star("B").Ships == nil || s.Fleets == nil || s.Errors == nil {
		t.Fatalf("state %+v", s)
	}
	got := Propose(s, "p1", orders(t, `[{"from":"A","to":"B","ships":7},{"from":"A","to":"B","ships":5}]`))
	if jsonOf(t, got) != `{"ok":false,"errors":["Order 0: Total ships from A (12) exceeds available (10)"]}` {
		t.Errorf("propose on the read state: %s", jsonOf(t, got))
	}
	// A state read without "rand" plays from its seed (0), the same every
	// time: here a battle at B needs dice.
	play := func() string {
		s, err := ReadState([]byte(minimal))
		if err != nil {
			t.Fatal(err)
		}
		s.Star("B").Garrison = 6
		s.Fleets = []Fleet{{Owner: "p1", From: "A", To: "B", Ships: 8, Sent: 2, Arrives: 3}}
		return jsonOf(t, next(t, s, nil))
	}
	if a, b := play(), play(); a != b || !strings.Contains(a, "Battle at B") {
		t.Errorf("a read state played twice:\n%s\n%s", a, b)
	}
	// What export writes reads back the same.
	full := next(t, board(), map[string][]Order{"p1": orders(t, `[{"from":"A","to":"B","ships":"x"},{"from":"A","to":"G","ships":3}]`)})
	back, err := ReadState([]byte(jsonOf(t, full)))
	if err != nil || jsonOf(t, back) != jsonOf(t, full) {
		t.Errorf("export read back: %v\n%s\nwant\n%s", err, jsonOf(t, back), jsonOf(t, full))
	}

	star := func(extra string) string {
		return `{"turn": 1, "players": ["p1", "p2"], "stars": [{"id": "A", "owner": "p1", "x": 0, "y": 0, "production": 4, "ships": {"p1": 1}}, ` + extra + `]}`
	}
	tests := []struct{ name, file, want string }{
		{"bad owner", star(`{"id": "C", "owner": "p3", "x": 1, "y": 1, "production": 1, "ships": {}}`), `stars[1] (C): owner "p3" is not one of the players (p1, p2)`},
		{"repeated id", star(`{"id": "A", "owner": null, "x": 1, "y": 1, "production": 1, "ships": {}}`), `stars[1]: id "A" is empty or repeated`},
		{"empty id", star(`{"id": "", "x": 1, "y": 1, "production": 1}`), `stars[1]: id "" is empty or repeated`},
		{"negative ships", star(`{"id": "C", "owner": "p2", "x": 1, "y": 1, "production": 1, "ships": {"p2": -3}}`), `stars[1] (C): ships["p2"] = -3: want a player id and a count of at least 0`},
		{"ships of a stranger", star(`{"id": "C", "x": 1, "y": 1, "production": 1, "ships": {"p9": 3}}`), `stars[1] (C): ships["p9"] = 3`},
		{"negative production", star(`{"id": "C", "x": 1, "y": 1, "production": -1}`), `stars[1] (C): production -1 and garrison 0 must be at least 0`},
		{"fleet to nowhere", `{"turn": 1, "players": ["p1"], "stars": [{"id": "A", "owner": "p1"}], "fleets": [{"owner": "p1", "from": "A", "to": "Z", "ships": 2}]}`,
			`fleets[0] (p1 A -> Z, 2 ships): want a player's fleet`},
		{"no players", `{"turn": 1, "stars": []}`, `"players" lists no player ids`},
		{"not JSON", `turn: 1`, "not a conquest game state"},
		{"ships not a number", star(`{"id": "C", "ships": {"p1": "7"}}`), "not a conquest game state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := ReadState([]byte(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestBotOrders(t *testing.T) {
	t.Parallel()
	s := board()
	got := BotOrders(s, "p1")
	// A keeps 4 of 10 and sends 6 to the nearest star it outnumbers (B, 3
	// away, empty); D keeps 2 of 5 and sends 3 to B as well (3 away; C has
	// 2 defenders, also 3 away, and B comes first).
	want := []Order{{From: "A", To: "B", Ships: N(6)}, {From: "D", To: "B", Ships: N(3)}}
	if jsonOf(t, got) != jsonOf(t, want) {
		t.Errorf("BotOrders = %s, want %s", jsonOf(t, got), jsonOf(t, want))
	}
	if errs := Check(s, "p1", got); len(errs) != 0 {
		t.Errorf("bot orders invalid: %q", errs)
	}
	if got := BotOrders(s, "p3"); got == nil || len(got) != 0 {
		t.Errorf("a player with no stars: %#v, want an empty list", got)
	}
	// Bot orders are always valid when given, whatever the map.
	for seed := range 30 {
		g := NewGame(Setup{Seed: uint64(seed), MaxTurns: 30, Stars: 10, Width: 10, Height: 10, Players: []string{"a", "b", "c"}})
		for g.Result == nil {
			o := map[string][]Order{}
			for _, p := range g.Players {
				o[p] = BotOrders(g, p)
				if errs := Check(g, p, o[p]); len(errs) != 0 {
					t.Fatalf("seed %d turn %d: %s's bot orders invalid: %q", seed, g.Turn, p, errs)
				}
			}
			g = next(t, g, o)
		}
		if !slices.Contains(g.Players, g.Result.Winner) && !strings.Contains(g.Result.Reason, "draw") && g.Result.Reason != "no player holds stars or ships" {
			t.Errorf("seed %d: result %+v", seed, g.Result)
		}
	}
}
