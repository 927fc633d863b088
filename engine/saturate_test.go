package engine

import (
	"math"
	"math/big"
	"strings"
	"testing"
)

// clamped is the exact result x as an int, or the end of int it passes.
func clamped(x *big.Int) int {
	switch {
	case x.Cmp(big.NewInt(math.MaxInt)) > 0:
		return math.MaxInt
	case x.Cmp(big.NewInt(math.MinInt)) < 0:
		return math.MinInt
	}
	return int(x.Int64())
}

// FuzzOverflowArithmetic: the engine's sums, differences and products of
// health, lines and damage equal the exact result, or stop at the end of
// int it passes; none wraps.
func FuzzOverflowArithmetic(f *testing.F) {
	for _, v := range [][2]int{{math.MaxInt, 1}, {math.MinInt, -1}, {math.MaxInt, math.MaxInt}, {math.MinInt, math.MinInt},
		{math.MinInt, 0}, {-1, math.MinInt}, {math.MaxInt, -1}, {30, 9223372036854775807}, {3, 2}} {
		f.Add(v[0], v[1])
	}
	f.Fuzz(func(t *testing.T, a, b int) {
		x, y := big.NewInt(int64(a)), big.NewInt(int64(b))
		if got, want := addSat(a, b), clamped(new(big.Int).Add(x, y)); got != want {
			t.Errorf("addSat(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := subSat(a, b), clamped(new(big.Int).Sub(x, y)); got != want {
			t.Errorf("subSat(%d, %d) = %d, want %d", a, b, got, want)
		}
		if got, want := mulSat(a, b), clamped(new(big.Int).Mul(x, y)); got != want {
			t.Errorf("mulSat(%d, %d) = %d, want %d", a, b, got, want)
		}
	})
}

// TestOverflowHealthAndLines: a player at MaxInt64 health healed, at
// MaxInt64 lines gaining more, or hit twice by MaxInt64 damage, stays within
// 0..max health and never wraps (health MaxInt64 healed once came out as
// -9223372036854775806).
func TestOverflowHealthAndLines(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.s = NewState(math.MaxInt, "p1", "p2")
	p1, p2 := r.s.Players[0], r.s.Players[1]
	p1.Lines = math.MaxInt - 1
	r.e.applyTogether(r.s, []Effect{
		{Owner: "p1", Type: Heal, Amount: MaxAmount}, {Owner: "p1", Type: Heal, Amount: math.MaxInt},
		{Owner: "p1", Type: GainLines, Amount: math.MaxInt},
		{Owner: "p1", Type: DealDamage, Amount: math.MaxInt}, {Owner: "p1", Type: DealDamage, Amount: math.MaxInt},
	})
	if p1.Health != math.MaxInt || p1.Lines != math.MaxInt {
		t.Errorf("p1 after healing and lines at the top: health %d, lines %d; want MaxInt64 both", p1.Health, p1.Lines)
	}
	if p2.Health != 0 {
		t.Errorf("p2 hit twice by MaxInt64: health %d, want 0", p2.Health)
	}
	p2.Health = math.MaxInt
	r.e.applyOne(r.s, Effect{Owner: "p1", Type: Heal, Amount: math.MaxInt})
	r.e.applyOne(r.s, Effect{Owner: "p1", Type: GainLines, Amount: math.MaxInt})
	r.e.applyOne(r.s, Effect{Owner: "p1", Type: DealDamage, Amount: math.MaxInt})
	r.e.applyOne(r.s, Effect{Owner: "p1", Type: DealDamage, Amount: math.MaxInt})
	if p1.Health != math.MaxInt || p1.Lines != math.MaxInt || p2.Health != 0 {
		t.Errorf("one at a time: p1 health %d, lines %d, p2 health %d; want MaxInt64, MaxInt64, 0", p1.Health, p1.Lines, p2.Health)
	}
}

// TestOverflowCatalogAmounts: a catalog's amounts are bounded, so that a
// power's work (the ships a BUILD_SHIP makes one by one) and what it adds
// to a count are too; the bounds themselves are allowed.
func TestOverflowCatalogAmounts(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		def  Definition
		want string // "" when the catalog is fine
	}{
		{"damage at the bound", ship("Gun", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(MaxAmount)}), ""},
		{"damage past it", ship("Gun", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: DealDamage, BaseAmount: amt(math.MaxInt)}), "DEAL_DAMAGE amount 9223372036854775807: at most 1000000 either way"},
		{"builds at the bound", ship("Gun", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: BuildShip, BaseAmount: amt(MaxBuilt), Logic: Logic{Ship: "Gun"}}), ""},
		{"builds past it", ship("Gun", 1, 3, Power{Phase: Event, Timing: UponDestruction, Effect: BuildShip, BaseAmount: amt(MaxBuilt + 1), Logic: Logic{Ship: "Gun"}}), "BUILD_SHIP makes at most 100 ships, not 101"},
		{"a branch past it", ship("Gun", 1, 3, Power{Phase: Automatic, Timing: Continuous, Effect: Conditional, Logic: Logic{Condition: &Condition{When: DiceAtLeast, Value: 4,
			Then: Outcome{Effect: Heal, Amount: -math.MaxInt}, Else: Outcome{Effect: GainLines, Amount: 1}}}}), "HEAL amount -9223372036854775807"},
	} {
		_, err := NewCatalog([]Definition{tt.def}, nil)
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: NewCatalog = %v, want %q", tt.name, err, tt.want)
		}
	}
}
