package duel

import (
	"context"

	"github.com/arbiter-sim/arbiter/engine"
)

// Chooser makes the choices of a person's seat: the Table's asks at the
// terminal through session.Person, and checks each answer with the view's
// Check, so a choice the rules refuse is said and asked again in the same
// step. A choice that still reaches the rules refused makes Step return an
// error wrapping runner.ErrRefused (nothing is recorded), so the turn can
// be played again with a better choice.
type Chooser interface {
	// Build is asked in DRAWING when the seat can afford a ship.
	Build(ctx context.Context, v BuildView) (BuildChoice, error)
	// Charges is asked in FIRST_STRIKE when the seat has a ship that can
	// strike first, and in SIMULTANEOUS_DECLARATION when it has any charge.
	Charges(ctx context.Context, v ChargeView) (ChargeChoice, error)
}

// Seats is Step's move: the Chooser of each person seat, by seat (p1, p2).
type Seats map[string]Chooser

// PlayerView is one side as a seat sees it.
type PlayerView struct {
	ID        string     `json:"id"`
	Health    int        `json:"health"`
	MaxHealth int        `json:"max_health"`
	Lines     int        `json:"lines"`
	Dice      int        `json:"dice"`
	Fleet     []ShipView `json:"fleet"`
}

// ShipView is a ship in play.
type ShipView struct {
	ID      string `json:"id"`
	Ship    string `json:"ship"`
	Health  int    `json:"health"`
	Charges int    `json:"charges,omitempty"`
	Built   int    `json:"built"`
}

// ShipOption is a ship the seat can build now, or upgrade one of its ships
// into.
type ShipOption struct {
	Ship   string `json:"ship"`
	Cost   int    `json:"cost"` // what it costs this seat now
	Health int    `json:"health"`
	Text   string `json:"text"`
	// Upgrade is the id of the seat's ship this option upgrades into Ship
	// (it leaves play into the new one); "" for a new ship.
	Upgrade string `json:"upgrade,omitempty"`
	// An upgrade's Cost is what Ship costs this seat new (Full) less what
	// the ship it replaces cost (Credit), at least 1.
	Full   int `json:"full_cost,omitempty"`
	Credit int `json:"credit,omitempty"`
}

// BuildView is what a seat sees when it builds.
type BuildView struct {
	Seat     string       `json:"seat"`
	Turn     int          `json:"turn"`
	MaxTurns int          `json:"max_turns"`
	You      PlayerView   `json:"you"`
	Opponent PlayerView   `json:"opponent"`
	Options  []ShipOption `json:"options"` // affordable builds and upgrades; building none is always allowed

	check func(BuildChoice) error
}

// Check is the rules' answer to c in this step: nil, or why they refuse
// it, so that a person is asked again in the same step. A view the game
// did not make refuses nothing.
func (v BuildView) Check(c BuildChoice) error {
	if v.check == nil {
		return nil
	}
	return v.check(c)
}

// BuildChoice is a build or an upgrade: Ship is one of the options' ships,
// or "" for none; Upgrade is the option's Upgrade when it is an upgrade
// (the seat's ship upgraded into Ship), "" to build Ship new.
type BuildChoice struct {
	Ship    string `json:"ship"`
	Upgrade string `json:"upgrade,omitempty"`
}

// ChargeOption is a ship that can spend a charge now.
type ChargeOption struct {
	Ship    string   `json:"ship"` // its id, e.g. p1-3
	Name    string   `json:"name"` // its kind, e.g. Guardian
	Damage  int      `json:"damage"`
	Charges int      `json:"charges"`
	Targets []string `json:"targets"` // "opponent" and the enemy ship ids
}

// ChargeView is what a seat sees when it declares charges. The other
// side's declarations of the same phase are secret until both are ready.
type ChargeView struct {
	Seat     string            `json:"seat"`
	Turn     int               `json:"turn"`
	Phase    engine.PowerPhase `json:"phase"`
	You      PlayerView        `json:"you"`
	Opponent PlayerView        `json:"opponent"`
	Options  []ChargeOption    `json:"options"`

	check func(ChargeChoice) error
}

// Check is the rules' answer to c in this step, as BuildView.Check.
func (v ChargeView) Check(c ChargeChoice) error {
	if v.check == nil {
		return nil
	}
	return v.check(c)
}

// ChargeChoice is the charges a seat spends: at most one per ship.
type ChargeChoice struct {
	Fire []engine.Declaration `json:"fire"`
}

func shipView(sh *engine.Ship) ShipView {
	return ShipView{ID: sh.ID, Ship: sh.Def, Health: sh.Health, Charges: sh.Charges, Built: sh.Built}
}

func playerView(b *engine.State, id string) PlayerView {
	p := b.Player(id)
	v := PlayerView{ID: p.ID, Health: p.Health, MaxHealth: p.MaxHealth, Lines: p.Lines, Dice: p.Dice, Fleet: []ShipView{}}
	for _, sh := range b.Fleet(id) {
		v.Fleet = append(v.Fleet, shipView(sh))
	}
	return v
}

func (g *Game) buildView(eng *engine.Engine, b *engine.State, seat string, opts []engine.BuildOption) BuildView {
	v := BuildView{Seat: seat, Turn: b.Turn, MaxTurns: g.MaxTurns, You: playerView(b, seat), Opponent: playerView(b, b.Opponent(seat).ID), Options: []ShipOption{}}
	for _, o := range opts {
		d, _ := g.cat.Get(o.Def)
		so := ShipOption{Ship: o.Def, Cost: o.Cost, Health: d.Health, Text: d.Text, Upgrade: o.Upgrade}
		if old := b.Ship(o.Upgrade); old != nil {
			od, _ := g.cat.Get(old.Def)
			so.Full, so.Credit = eng.Cost(b, seat, o.Def), od.Cost
		}
		v.Options = append(v.Options, so)
	}
	return v
}

func chargeView(b *engine.State, phase engine.PowerPhase, seat string, opts []engine.ChargeOption) ChargeView {
	v := ChargeView{Seat: seat, Turn: b.Turn, Phase: phase, You: playerView(b, seat), Opponent: playerView(b, b.Opponent(seat).ID), Options: []ChargeOption{}}
	for _, o := range opts {
		v.Options = append(v.Options, ChargeOption{Ship: o.Ship, Name: o.Def, Damage: o.Amount, Charges: o.Charges, Targets: o.Targets})
	}
	return v
}
