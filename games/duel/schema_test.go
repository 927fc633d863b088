package duel

import (
	"strings"
	"testing"

	"github.com/arbiter-sim/arbiter/engine"
	"github.com/arbiter-sim/arbiter/schemas"
)

// TestSchemasStrict: the answer types and their per-request schemas pass
// strict mode, and a request's prompts render from the default templates.
func TestSchemasStrict(t *testing.T) {
	t.Parallel()
	for _, n := range Schemas() {
		if _, err := n.Pretty(); err != nil {
			t.Errorf("%s: %v", n.Name, err)
		}
	}
	b, err := BuildSchema([]string{"Orbital", "Guardian"}, []string{"p1-2"})
	if err != nil || len(schemas.CheckStrict(b)) > 0 {
		t.Errorf("build schema %s: %v", b, err)
	}
	opts := []engine.ChargeOption{{Ship: "p1-1", Def: "Guardian", Amount: 4, Charges: 2, Targets: []string{"opponent", "p2-2"}}}
	c, err := ChargesSchema(opts)
	if err != nil || len(schemas.CheckStrict(c)) > 0 || !strings.Contains(string(c), `"maxItems":1`) {
		t.Errorf("charges schema %s: %v", c, err)
	}
	_, eng, st := fuzzBoard(t)
	g := newGame(t, nil)
	req, err := g.ChargesRequest(st, P1, 2, engine.SimultaneousDeclaration, eng.ChargeOptions(st.Board, engine.SimultaneousDeclaration, P1))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p1-1 Guardian: 4 damage, 2 charges left; targets: opponent, p2-3 (Zenith, 6 health)"} {
		if !strings.Contains(req.User, want) {
			t.Errorf("user prompt lacks %q:\n%s", want, req.User)
		}
	}
	if !strings.Contains(req.System, "- Leviathan: cost 8, health 10.") || !strings.Contains(req.System, "Xenite: cost 1, health 2 (cannot be built)") {
		t.Errorf("system prompt lacks the catalog:\n%s", req.System)
	}
}
