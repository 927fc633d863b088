package duel

import (
	"fmt"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
)

// narrator writes a turn's events as a player would say them, from the
// engine's steps: who hit whom for how much, health before → after, what
// was built, upgraded, destroyed or made by a power. It reads the board
// the steps change and keeps the health it last told of each player and
// ship, so that the effects the end of a turn applies together are told
// each, then the one move of health they make.
type narrator struct {
	b      *engine.State
	health map[string]int    // player → health as last told
	ships  map[string]int    // ship id → health as last told
	builds map[string]choice // seat → its build of this turn, until told
	kinds  map[string]string // seat → how it is played (person, bot, model)
	fired  string            // the ship whose power fired last in this phase
}

// choice is a seat's build of the turn and what it costs.
type choice struct {
	engine.BuildChoice
	cost int
}

func newNarrator(b *engine.State, kinds map[string]string) *narrator {
	n := &narrator{b: b, health: map[string]int{}, ships: map[string]int{}, builds: map[string]choice{}, kinds: kinds}
	for _, p := range b.Players {
		n.health[p.ID] = p.Health
	}
	return n
}

// built is told that seat chose to build c for cost lines. A nil narrator
// (a turn played without one, in tests) tells nothing.
func (n *narrator) built(seat string, c engine.BuildChoice, cost int) {
	if n != nil && c.Def != "" {
		n.builds[seat] = choice{c, cost}
	}
}

// phaseWords names the phases whose events a player needs placed in the
// turn: the charges, and the end of the turn where every continuous power
// works at once.
var phaseWords = map[engine.PowerPhase]string{
	engine.FirstStrike:             "first strike",
	engine.SimultaneousDeclaration: "charges",
	engine.ConditionalResponse:     "after the charges",
	engine.Automatic:               "end of turn",
}

// line is the turn log's line for a step of the engine, "" for a step not
// worth a line.
func (n *narrator) line(tr engine.Trace) string {
	text := n.say(tr)
	if w := phaseWords[tr.Phase]; w != "" && text != "" {
		return w + ": " + text
	}
	return text
}

func (n *narrator) say(tr engine.Trace) string {
	switch tr.Step {
	case engine.StepPhase:
		n.fired = ""
	case engine.StepRolled:
		return fmt.Sprintf("%s rolls a %d", tr.Player, tr.Amount)
	case engine.StepRerolled:
		return fmt.Sprintf("%s rolled a %d and rolls again (a ship of theirs rerolls low dice)", tr.Player, tr.Amount)
	case engine.StepFired:
		n.fired = tr.Ship
	case engine.StepApplied:
		return n.applied(tr)
	case engine.StepSettled:
		now := n.b.Player(tr.Player).Health
		before := now - tr.Amount
		n.health[tr.Player] = now
		if before == now {
			full := ""
			if now == n.b.Player(tr.Player).MaxHealth {
				full = ", its maximum"
			}
			return fmt.Sprintf("all together, %s's health stays at %d%s", tr.Player, now, full)
		}
		return fmt.Sprintf("all together, %s's health goes %d → %d", tr.Player, before, now)
	case engine.StepBuilt:
		return n.comes(tr)
	case engine.StepUpgraded:
		c := n.builds[tr.Player]
		delete(n.builds, tr.Player)
		return fmt.Sprintf("%s upgrades its %s %s into %s for %d lines, %d left: %s is now %s", n.who(tr.Player), tr.Def, tr.Ship, article(c.Def), c.cost,
			n.b.Player(tr.Player).Lines, tr.Ship, tr.Target)
	case engine.StepProtected:
		n.ships[tr.Ship] = 1
		return fmt.Sprintf("%s takes lethal damage but survives at 1 health (protected): a ship of %s's keeps their ships from destruction", n.ship(tr.Ship), tr.Player)
	case engine.StepDestroyed:
		return n.ship(tr.Ship) + " is destroyed"
	case engine.StepDropped:
		return fmt.Sprintf("%s was destroyed before its %s took effect", n.ship(tr.Ship), effectWords[tr.Effect])
	}
	return ""
}

var effectWords = map[engine.EffectType]string{
	engine.DealDamage: "damage",
	engine.Heal:       "healing",
	engine.GainLines:  "lines",
	engine.SetDice:    "die",
	engine.BuildShip:  "ships",
}

// applied tells what an effect did.
func (n *narrator) applied(tr engine.Trace) string {
	src := n.ship(tr.Ship)
	switch tr.Effect {
	case engine.GainLines:
		if tr.Ship == "" {
			lines := n.b.Player(tr.Player).Lines
			return fmt.Sprintf("%s gains %d lines from the die: %d → %d lines to spend", tr.Player, tr.Amount, lines-tr.Amount, lines)
		}
		return fmt.Sprintf("%s gives %s %s", src, tr.Player, plural(tr.Amount, "line"))
	case engine.Heal:
		return n.healthMove(tr, tr.Player, fmt.Sprintf("%s heals %s by %d", src, tr.Player, tr.Amount))
	case engine.DealDamage:
		if tr.Target != "" && tr.Target != engine.TargetOpponent {
			before, ok := n.ships[tr.Target]
			if sh := n.b.Ship(tr.Target); !ok && sh != nil {
				before = sh.Health
			}
			after := max(0, before-tr.Amount)
			n.ships[tr.Target] = after
			return fmt.Sprintf("%s hits %s for %d: %d → %d health", src, n.ship(tr.Target), tr.Amount, before, after)
		}
		them := n.b.Opponent(tr.Player).ID
		return n.healthMove(tr, them, fmt.Sprintf("%s hits %s for %d", src, them, tr.Amount))
	case engine.SetDice:
		return fmt.Sprintf("%s sets %s's die to %d", src, tr.Player, tr.Amount)
	}
	// BUILD_SHIP: each ship made is told as it comes into play.
	return ""
}

// healthMove tells what an effect on player's health did: before → after
// when the health moved now; at the end of the turn, where the effects
// move it together, what the effect adds (the move is told when it
// settles).
func (n *narrator) healthMove(tr engine.Trace, player, what string) string {
	now := n.b.Player(player).Health
	before := n.health[player]
	switch {
	case now != before:
		n.health[player] = now
		return fmt.Sprintf("%s: %s's health %d → %d", what, player, before, now)
	case tr.Phase == engine.Automatic:
		return what
	}
	return fmt.Sprintf("%s: %s's health stays at %d", what, player, now)
}

// comes tells a ship that came into play: a seat's build, the new ship of
// an upgrade (told by the upgrade), or a ship a power made.
func (n *narrator) comes(tr engine.Trace) string {
	if c, ok := n.builds[tr.Player]; ok && tr.Phase == engine.Drawing && c.Def == tr.Def {
		if c.Upgrade != "" {
			return ""
		}
		delete(n.builds, tr.Player)
		return fmt.Sprintf("%s builds %s (%s) for %d lines, %d left", n.who(tr.Player), article(tr.Def), tr.Ship, c.cost, n.b.Player(tr.Player).Lines)
	}
	if src := n.b.Ship(n.fired); src != nil && src.Owner == tr.Player {
		return fmt.Sprintf("%s makes %s (%s)", n.ship(n.fired), article(tr.Def), tr.Ship)
	}
	return fmt.Sprintf("%s (%s) comes into play for %s", article(tr.Def), tr.Ship, tr.Player)
}

// who names a seat with how it is played: "p1 (person)".
func (n *narrator) who(seat string) string {
	if n == nil {
		return seat
	}
	if k := n.kinds[seat]; k != "" {
		return fmt.Sprintf("%s (%s)", seat, k)
	}
	return seat
}

// ship names a ship as a player would: "p1's Fighter p1-3".
func (n *narrator) ship(id string) string {
	sh := n.b.Ship(id)
	if sh == nil {
		return id
	}
	return fmt.Sprintf("%s's %s %s", sh.Owner, sh.Def, sh.ID)
}

// article is "a Fighter", "an Orbital".
func article(name string) string {
	if name != "" && strings.ContainsRune("AEIOUaeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}
