package duel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/schemas"
	"github.com/invopop/jsonschema"
)

// The templates of a model seat's prompts (prompts/duel_*.md).
const (
	SystemPrompt  = "duel_system.md"
	BuildPrompt   = "duel_build.md"
	ChargesPrompt = "duel_charges.md"
)

// The phases of model calls, and their schema names.
const (
	PhaseBuild   = "build"
	PhaseCharges = "charges"
)

// BuildAnswer is a model's build.
type BuildAnswer struct {
	Ship    string `json:"ship" jsonschema_description:"The ship to build: one of the ships you can afford, or none."`
	Upgrade string `json:"upgrade" jsonschema_description:"To upgrade one of your ships into that ship instead of building it new: the id of your ship, as the options list it; none to build new."`
	Reason  string `json:"reason" jsonschema:"maxLength=200" jsonschema_description:"Why, in one short sentence."`
}

// ChargeAnswer is a model's charge declaration.
type ChargeAnswer struct {
	Charges []Fire `json:"charges" jsonschema_description:"The charges you spend: at most one per ship; empty to spend none."`
}

// Fire spends one charge of a ship.
type Fire struct {
	Ship   string `json:"ship" jsonschema_description:"Id of your ship that spends a charge."`
	Target string `json:"target" jsonschema_description:"opponent, or the id of an enemy ship."`
}

// Schemas lists the generated schema files of a model seat's answers.
func Schemas() []schemas.Named {
	return []schemas.Named{{Name: "DuelBuild", Value: BuildAnswer{}}, {Name: "DuelCharges", Value: ChargeAnswer{}}}
}

// BuildSchema is the strict schema of a build, its ship an enum of the
// affordable ships and "none", its upgrade an enum of the ships that can
// be upgraded and "none".
func BuildSchema(ships, upgrades []string) (json.RawMessage, error) {
	root, err := schemas.Reflect(BuildAnswer{})
	if err != nil {
		return nil, err
	}
	enum := func(values []string) []any {
		out := []any{}
		for _, v := range values {
			if !slices.Contains(out, any(v)) {
				out = append(out, v)
			}
		}
		return append(out, "none")
	}
	prop(root, "ship").Enum = enum(ships)
	prop(root, "upgrade").Enum = enum(upgrades)
	return schemas.Marshal(root)
}

// ChargesSchema is the strict schema of a declaration: ship an enum of the
// ships with a charge, target an enum of the targets, at most one item per
// ship.
func ChargesSchema(opts []engine.ChargeOption) (json.RawMessage, error) {
	root, err := schemas.Reflect(ChargeAnswer{})
	if err != nil {
		return nil, err
	}
	list := prop(root, "charges")
	ships, targets := []any{}, []any{}
	for _, o := range opts {
		ships = append(ships, o.Ship)
		for _, t := range o.Targets {
			if !slices.Contains(targets, any(t)) {
				targets = append(targets, t)
			}
		}
	}
	prop(list.Items, "ship").Enum = ships
	prop(list.Items, "target").Enum = targets
	n := uint64(len(opts))
	list.MaxItems = &n
	return schemas.Marshal(root)
}

func prop(s *jsonschema.Schema, name string) *jsonschema.Schema {
	p, ok := s.Properties.Get(name)
	if !ok {
		panic("duel: schema has no property " + name) // fixed types: the tests catch it
	}
	return p
}

// ParseBuild reads a model's build answer and checks it against the rules
// in state b: the ship built or upgraded into (Def "" for none), or an
// error saying why the answer is refused. An upgrade of "none" or "" builds
// the ship new.
func (g *Game) ParseBuild(eng *engine.Engine, b *engine.State, seat string, raw []byte) (engine.BuildChoice, error) {
	var a BuildAnswer
	if err := decode(raw, &a); err != nil {
		return engine.BuildChoice{}, fmt.Errorf("build choice: %w", err)
	}
	c := engine.BuildChoice{Def: normalShip(a.Ship), Upgrade: normalShip(a.Upgrade)}
	if c.Def == "" {
		c.Upgrade = "" // nothing built: nothing upgraded
	}
	if err := g.checkBuild(eng, b, seat, c); err != nil {
		return engine.BuildChoice{}, err
	}
	return c, nil
}

// ParseCharges reads a model's charge declaration and checks it against
// the rules in state b.
func ParseCharges(eng *engine.Engine, b *engine.State, phase engine.PowerPhase, seat string, raw []byte) ([]engine.Declaration, error) {
	var a ChargeAnswer
	if err := decode(raw, &a); err != nil {
		return nil, fmt.Errorf("charge declaration: %w", err)
	}
	decls := make([]engine.Declaration, len(a.Charges))
	for i, f := range a.Charges {
		decls[i] = engine.Declaration{Ship: f.Ship, Target: f.Target}
	}
	if err := checkCharges(eng, b, phase, seat, decls); err != nil {
		return nil, err
	}
	return decls, nil
}

func decode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("not a JSON answer of the schema: %w", err)
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON answer")
	}
	return nil
}

// promptData is what the duel templates see.
type promptData struct {
	Seat, Opponent string
	Turn, MaxTurns int
	Phase          string
	You, Them      PlayerView
	Ships          []shipLine // the catalog
	Options        []string   // what can be chosen now, one line each
}

type shipLine struct {
	Name         string
	Cost, Health int
	Charges      int
	Token        bool
	Text         string
	PhaseTimings string
}

// requestText renders the system and user prompts of a decision.
func (g *Game) requestText(st *State, seat string, phase engine.PowerPhase, builds []engine.BuildOption, charges []engine.ChargeOption) ([2]string, error) {
	b := st.Board
	d := promptData{Seat: seat, Opponent: b.Opponent(seat).ID, Turn: max(b.Turn, 1), MaxTurns: g.MaxTurns, Phase: string(phase),
		You: playerView(b, seat), Them: playerView(b, b.Opponent(seat).ID), Options: []string{}}
	for _, def := range g.cat.Definitions() {
		var pt []string
		for _, p := range def.Powers {
			pt = append(pt, string(p.Phase)+"/"+string(p.Timing))
		}
		d.Ships = append(d.Ships, shipLine{Name: def.ID, Cost: def.Cost, Health: def.Health, Charges: def.Charges, Token: def.Token, Text: def.Text, PhaseTimings: strings.Join(pt, ", ")})
	}
	for _, o := range builds {
		if o.Upgrade != "" {
			d.Options = append(d.Options, fmt.Sprintf("%s, upgrading your %s %s into it (costs %d lines; answer upgrade %q)", o.Def, o.Upgrade, b.Ship(o.Upgrade).Def, o.Cost, o.Upgrade))
			continue
		}
		d.Options = append(d.Options, fmt.Sprintf("%s (costs %d lines)", o.Def, o.Cost))
	}
	for _, o := range charges {
		targets := []string{}
		for _, t := range o.Targets {
			if sh := b.Ship(t); sh != nil {
				targets = append(targets, fmt.Sprintf("%s (%s, %d health)", t, sh.Def, sh.Health))
			} else {
				targets = append(targets, t)
			}
		}
		d.Options = append(d.Options, fmt.Sprintf("%s %s: %d damage, %d charges left; targets: %s", o.Ship, o.Def, o.Amount, o.Charges, strings.Join(targets, ", ")))
	}
	var out [2]string
	var err error
	pr := g.seat(seat).prompts
	if out[0], err = pr.Render(SystemPrompt, d); err != nil {
		return out, err
	}
	user := BuildPrompt
	if phase == engine.FirstStrike || phase == engine.SimultaneousDeclaration {
		user = ChargesPrompt
	}
	out[1], err = pr.Render(user, d)
	return out, err
}

// BuildRequest is the model call of seat's build in state st.
func (g *Game) BuildRequest(st *State, seat string, tick int, opts []engine.BuildOption) (llm.Request, error) {
	names, upgrades := []string{}, []string{}
	for _, o := range opts {
		names = append(names, o.Def)
		if o.Upgrade != "" {
			upgrades = append(upgrades, o.Upgrade)
		}
	}
	schema, err := BuildSchema(names, upgrades)
	if err != nil {
		return llm.Request{}, err
	}
	text, err := g.requestText(st, seat, engine.Drawing, opts, nil)
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{EntityKey: "duel:" + seat + ":build", Phase: PhaseBuild, Tick: tick, Params: g.seat(seat).Params,
		System: text[0], User: text[1], SchemaName: "DuelBuild", Schema: schema}, nil
}

// ChargesRequest is the model call of seat's declaration in phase.
func (g *Game) ChargesRequest(st *State, seat string, tick int, phase engine.PowerPhase, opts []engine.ChargeOption) (llm.Request, error) {
	schema, err := ChargesSchema(opts)
	if err != nil {
		return llm.Request{}, err
	}
	text, err := g.requestText(st, seat, phase, nil, opts)
	if err != nil {
		return llm.Request{}, err
	}
	return llm.Request{EntityKey: "duel:" + seat + ":charges", Phase: PhaseCharges, Tick: tick, Params: g.seat(seat).Params,
		System: text[0], User: text[1], SchemaName: "DuelCharges", Schema: schema}, nil
}

// ask makes one model call through the runner (recorded, with its events)
// and hands its answer to accept; when the call fails, or accept refuses
// the answer, the refusal is recorded and the seat's fallback is used.
func (se *seats) ask(ctx context.Context, seat, phase string, req llm.Request, accept func(raw []byte) error, fallback func()) error {
	if c := se.capture; c != nil {
		c.req, c.accept = req, accept
		return errCaptured
	}
	client := se.g.seat(seat).Client
	if se.t == nil || client == nil {
		return fmt.Errorf("seat %s is a model, and there is no model client", seat)
	}
	_, err := se.t.Phase(ctx, runner.Phase{Name: phase, Calls: 1, Strategy: "fallback_bot"},
		func(ctx context.Context) ([]runner.Call, error) {
			res := client.Complete(ctx, req)
			call := runner.Call{Result: &res}
			var why error
			switch {
			case res.Err == nil:
				why = accept(res.Output)
			case errors.Is(res.Err, llm.ErrSchema) && res.Raw != "":
				// Say what the rules say of the answer, when it reads as one.
				if why = accept([]byte(res.Raw)); why == nil {
					why = res.Err
				}
			default:
				why = res.Err
			}
			if why != nil {
				se.reject(seat, why.Error()+"; the bot's choice is used")
				call.Fallback = true
				fallback()
			}
			return []runner.Call{call}, nil
		})
	return err
}

func (se *seats) tick() int {
	if se.t == nil {
		return 0
	}
	return se.t.N
}

func (se *seats) modelBuild(ctx context.Context, b *engine.State, seat string, opts []engine.BuildOption) (engine.BuildChoice, error) {
	req, err := se.g.BuildRequest(&State{Board: b}, seat, se.tick(), opts)
	if err != nil {
		return engine.BuildChoice{}, err
	}
	var c engine.BuildChoice
	err = se.ask(ctx, seat, PhaseBuild, req,
		func(raw []byte) (err error) { c, err = se.g.ParseBuild(se.eng, b, seat, raw); return err },
		func() { c = se.g.botBuild(b, seat, opts) })
	return c, err
}

func (se *seats) modelCharges(ctx context.Context, b *engine.State, phase engine.PowerPhase, seat string, opts []engine.ChargeOption) ([]engine.Declaration, error) {
	req, err := se.g.ChargesRequest(&State{Board: b}, seat, se.tick(), phase, opts)
	if err != nil {
		return nil, err
	}
	var decls []engine.Declaration
	err = se.ask(ctx, seat, PhaseCharges, req,
		func(raw []byte) (err error) { decls, err = ParseCharges(se.eng, b, phase, seat, raw); return err },
		func() { decls = botCharges(b, opts) })
	return decls, err
}
