package engine

import "slices"

// State is what the engine plays on: the turn, the players and every ship
// ever put in play. Destroyed ships stay in Ships (marked Destroyed) so that
// their usage history survives them. It is plain data, saved as JSON.
type State struct {
	Turn    int       `json:"turn"` // the turn being played, or the last one played
	Players []*Player `json:"players"`
	Ships   []*Ship   `json:"ships"`
	Seq     int       `json:"seq"`     // ships made so far; the next id is owner-(Seq+1)
	Charged bool      `json:"charged"` // a charge was spent this turn

	doomed map[string]bool // ships between marked and destroyed
}

// Player is one side of the game.
type Player struct {
	ID        string `json:"id"`
	Health    int    `json:"health"`
	MaxHealth int    `json:"max_health"`
	Lines     int    `json:"lines"` // the build currency
	Dice      int    `json:"dice"`  // this turn's die, after modifiers
}

// Ship is one instance of a definition in play.
type Ship struct {
	ID          string `json:"id"`
	Def         string `json:"def"`
	Owner       string `json:"owner"`
	Built       int    `json:"built"` // the turn it was made
	Health      int    `json:"health"`
	Charges     int    `json:"charges,omitempty"`
	Destroyed   bool   `json:"destroyed,omitempty"`
	DestroyedOn int    `json:"destroyed_on,omitempty"`
	// UpgradedInto is the ship this one was upgraded into, in DRAWING: it
	// left play then (not destroyed: no UPON_DESTRUCTION) and is part of
	// that upgrade.
	UpgradedInto string  `json:"upgraded_into,omitempty"`
	Usage        []Usage `json:"usage,omitempty"`
}

// InPlay reports whether the ship is in play: neither destroyed nor
// upgraded into another.
func (sh *Ship) InPlay() bool { return !sh.Destroyed && sh.UpgradedInto == "" }

// Usage records one firing of a power of a ship instance (Rule 7); it is
// never reset.
type Usage struct {
	Turn   int        `json:"turn"`
	Power  int        `json:"power"`
	Phase  PowerPhase `json:"phase"`
	Effect EffectType `json:"effect"`
	Amount int        `json:"amount,omitempty"`
}

// Used reports whether power (an index) of the ship has fired before.
func (sh *Ship) Used(power int) bool {
	return slices.ContainsFunc(sh.Usage, func(u Usage) bool { return u.Power == power })
}

// NewState starts a game: the players, in seat order, each with health.
func NewState(health int, players ...string) *State {
	s := &State{Players: make([]*Player, len(players)), Ships: []*Ship{}}
	for i, id := range players {
		s.Players[i] = &Player{ID: id, Health: health, MaxHealth: health}
	}
	return s
}

// Clone returns a deep copy that a turn may change.
func (s *State) Clone() *State {
	c := &State{Turn: s.Turn, Seq: s.Seq, Charged: s.Charged,
		Players: make([]*Player, len(s.Players)), Ships: make([]*Ship, len(s.Ships))}
	for i, p := range s.Players {
		cp := *p
		c.Players[i] = &cp
	}
	for i, sh := range s.Ships {
		cs := *sh
		cs.Usage = slices.Clone(sh.Usage)
		c.Ships[i] = &cs
	}
	return c
}

// Player returns player id, nil if there is none.
func (s *State) Player(id string) *Player {
	for _, p := range s.Players {
		if p.ID == id {
			return p
		}
	}
	return nil
}

// Opponent returns the other player of a two-player game.
func (s *State) Opponent(id string) *Player {
	for _, p := range s.Players {
		if p.ID != id {
			return p
		}
	}
	return nil
}

// Ship returns ship id, nil if there is none.
func (s *State) Ship(id string) *Ship {
	for _, sh := range s.Ships {
		if sh.ID == id {
			return sh
		}
	}
	return nil
}

// Fleet returns the ships of player that are in play (not destroyed, not
// upgraded into another), in the order they were made.
func (s *State) Fleet(player string) []*Ship {
	var out []*Ship
	for _, sh := range s.Ships {
		if sh.Owner == player && sh.InPlay() {
			out = append(out, sh)
		}
	}
	return out
}

// InUpgrades returns the ships of player that are in an upgrade in play:
// upgraded into a ship that is in play, or into one that is itself in such
// an upgrade. A destroyed upgrade takes its ships with it.
func (s *State) InUpgrades(player string) []*Ship {
	var out []*Ship
	for _, sh := range s.Ships {
		if sh.Owner != player || sh.UpgradedInto == "" {
			continue
		}
		top := sh
		for range len(s.Ships) { // no chain is longer
			next := s.Ship(top.UpgradedInto)
			if next == nil {
				break
			}
			top = next
			if top.UpgradedInto == "" {
				break
			}
		}
		if top.InPlay() {
			out = append(out, sh)
		}
	}
	return out
}

// Count is how many ships player has: their fleet, and when upgrades count
// (a Hive), the ships in their upgrades in play too.
func (s *State) Count(player string, upgradesCount bool) int {
	n := len(s.Fleet(player))
	if upgradesCount {
		n += len(s.InUpgrades(player))
	}
	return n
}
