package conquest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/world"
)

// Seats: who plays a player.
const (
	SeatModel  = "model"  // a model agent with tools
	SeatBot    = "bot"    // the built-in deterministic strategy
	SeatPerson = "person" // a person at the terminal (arbiter play)
)

// Setup is a game as simulation.yaml's settings describe it.
type Setup struct {
	Seed     uint64
	MaxTurns int
	Stars    int // stars on a generated map
	Width    int
	Height   int
	Seats    map[string]string // player id -> seat
	Players  []string          // sorted
}

var playerID = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)

// setupKeys are the settings a conquest simulation reads.
var setupKeys = []string{"seed", "max_turns", "stars", "width", "height", "seats"}

// ReadSetup reads the settings of a conquest simulation: seed (default 1),
// max_turns (default 50), stars (default 10), width and height of the map
// (default 10), and seats, a map of player id to model, bot or person
// (2 to 6 players). Every problem names simulation.yaml and the key.
func ReadSetup(sim *world.Simulation) (Setup, error) {
	file := filepath.Join(sim.Dir, "simulation.yaml")
	set := Setup{Seed: 1, MaxTurns: 50, Stars: 10, Width: 10, Height: 10}
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: settings.%s: %s", file, key, fmt.Sprintf(format, args...)))
	}
	for k := range sim.Settings {
		if !slices.Contains(setupKeys, k) {
			bad(k, "unknown setting (a conquest reads %s)", strings.Join(setupKeys, ", "))
		}
	}
	whole := func(key string, lo, hi int, dst *int) {
		v, ok := sim.Settings[key]
		if !ok {
			return
		}
		n, isInt := v.(int)
		if !isInt || n < lo || n > hi {
			bad(key, "want a whole number from %d to %d, got %v", lo, hi, v)
			return
		}
		*dst = n
	}
	var seed int
	whole("seed", 0, math.MaxInt32, &seed)
	if _, ok := sim.Settings["seed"]; ok {
		set.Seed = uint64(seed)
	}
	whole("max_turns", 1, 10000, &set.MaxTurns)
	whole("stars", 2, 26, &set.Stars)
	whole("width", 2, 100, &set.Width)
	whole("height", 2, 100, &set.Height)
	seats, ok := sim.Settings["seats"].(map[string]any)
	if !ok {
		bad("seats", "want a map of player id to model, bot or person, e.g. {p1: model, p2: bot}")
	}
	set.Seats = map[string]string{}
	for p, v := range seats {
		seat, _ := v.(string)
		switch {
		case !playerID.MatchString(p):
			bad("seats", "player id %q must match [a-z][a-z0-9_-]*", p)
		case seat != SeatModel && seat != SeatBot && seat != SeatPerson:
			bad("seats."+p, "want model, bot or person, got %v", v)
		default:
			set.Seats[p] = seat
			set.Players = append(set.Players, p)
		}
	}
	slices.Sort(set.Players)
	if ok && (len(seats) < 2 || len(seats) > 6) {
		bad("seats", "a game has 2 to 6 players, got %d", len(seats))
	}
	if set.Stars < len(set.Players) {
		bad("stars", "%d stars cannot give %d players a home each", set.Stars, len(set.Players))
	}
	if room := ((set.Width + 1) / 2) * ((set.Height + 1) / 2); set.Stars > room {
		bad("stars", "%d stars do not fit a %dx%d map two units apart (at most %d)", set.Stars, set.Width, set.Height, room)
	}
	return set, errors.Join(errs...)
}

// NewGame deals the start of a game: Stars stars with ids A, B, C, ... at
// distinct points of the map at least two units apart, the players' homes
// as far apart as can be (production HomeProduction, HomeShips ships each),
// the other stars neutral with production 1 to 3 and as many defenders
// plus 0 to 2. Everything is drawn from the seed.
func NewGame(set Setup) *State {
	s := &State{MaxTurns: set.MaxTurns, Players: slices.Clone(set.Players), Width: set.Width, Height: set.Height, Fleets: []Fleet{}, Errors: []OrderError{}, Passed: []Pass{}, Rand: newRand(set.Seed)}
	for i, p := range place(&s.Rand, set.Stars, set.Width, set.Height) {
		prod := 1 + s.Rand.IntN(3)
		s.Stars = append(s.Stars, Star{ID: string(rune('A' + i)), X: p[0], Y: p[1], Production: prod, Ships: map[string]int{}, Garrison: prod + s.Rand.IntN(3)})
	}
	for i, h := range homes(s.Stars, len(s.Players)) {
		st := &s.Stars[h]
		st.Owner, st.Production, st.Garrison = s.Players[i], HomeProduction, 0
		st.Ships[s.Players[i]] = HomeShips
	}
	return s
}

// place draws n points of a w x h map at least two units apart: each one
// among the points still free. Random placement can block the map before n
// fit (a star in the middle of a 3x3 map leaves no room), so a blocked
// placement starts over, up to 20 times; then the points are drawn from the
// even lattice, where ((w+1)/2)*((h+1)/2) always fit (ReadSetup allows no
// more). It always ends, with at most n points.
func place(r *Rand, n, w, h int) [][2]int {
	far := func(pts [][2]int, x, y int) bool {
		for _, p := range pts {
			if math.Hypot(float64(p[0]-x), float64(p[1]-y)) < 2 {
				return false
			}
		}
		return true
	}
	for range 20 {
		var pts [][2]int
		for len(pts) < n {
			var free [][2]int
			for x := range w {
				for y := range h {
					if far(pts, x, y) {
						free = append(free, [2]int{x, y})
					}
				}
			}
			if len(free) == 0 {
				break
			}
			pts = append(pts, free[r.IntN(len(free))])
		}
		if len(pts) == n {
			return pts
		}
	}
	var lattice [][2]int
	for x := 0; x < w; x += 2 {
		for y := 0; y < h; y += 2 {
			lattice = append(lattice, [2]int{x, y})
		}
	}
	for i := len(lattice) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		lattice[i], lattice[j] = lattice[j], lattice[i]
	}
	return lattice[:min(n, len(lattice))]
}

// homes picks n stars spread out: the two farthest apart, then each next
// the star farthest from those already picked.
func homes(stars []Star, n int) []int {
	dist := func(i, j int) float64 {
		return math.Hypot(float64(stars[i].X-stars[j].X), float64(stars[i].Y-stars[j].Y))
	}
	var picked []int
	best := -1.0
	for i := range stars {
		for j := i + 1; j < len(stars); j++ {
			if d := dist(i, j); d > best {
				best, picked = d, []int{i, j}
			}
		}
	}
	for len(picked) < n {
		far, farD := -1, -1.0
		for i := range stars {
			if slices.Contains(picked, i) {
				continue
			}
			d := math.Inf(1)
			for _, p := range picked {
				d = min(d, dist(i, p))
			}
			if d > farD {
				far, farD = i, d
			}
		}
		if far < 0 {
			break // fewer stars than players: only a Setup ReadSetup refused
		}
		picked = append(picked, far)
	}
	return picked[:min(n, len(picked))]
}

// ReadState reads a game state as `arbiter export` writes it for a
// conquest. A file with only turn, players and stars (id, owner, x, y,
// production, ships) is enough: the rest defaults. Star ids must be unique,
// owners must be players, ship counts, production and garrisons whole
// numbers from 0 to MaxShips, and fleets a player's, between stars of the
// map (State.check). Every problem names the star or fleet.
func ReadState(data []byte) (*State, error) {
	var s State
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("not a conquest game state: %w", err)
	}
	if err := s.check(); err != nil {
		if len(s.Players) == 0 {
			return nil, fmt.Errorf("not a conquest game state: %w", err)
		}
		return nil, err
	}
	for i := range s.Stars {
		if s.Stars[i].Ships == nil {
			s.Stars[i].Ships = map[string]int{}
		}
	}
	if s.Fleets == nil {
		s.Fleets = []Fleet{}
	}
	if s.Errors == nil {
		s.Errors = []OrderError{}
	}
	if s.Passed == nil {
		s.Passed = []Pass{}
	}
	sortStars(s.Stars)
	return &s, nil
}
