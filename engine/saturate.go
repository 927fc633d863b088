package engine

import "math"

// Health, lines and damage grow from amounts a catalog writes (a
// simulation's ships.yaml) and settings a person writes, so the engine's
// arithmetic on them stops at the ends of int instead of wrapping: a health
// of MaxInt64 healed stays MaxInt64, it never turns negative.

// addSat is a + b, or the end of int it passes.
func addSat(a, b int) int {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt
	case b < 0 && s > a:
		return math.MinInt
	}
	return s
}

// subSat is a - b, or the end of int it passes.
func subSat(a, b int) int {
	if b == math.MinInt {
		return addSat(addSat(a, math.MaxInt), 1)
	}
	return addSat(a, -b)
}

// mulSat is a * b, or the end of int it passes.
func mulSat(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	p := a * b
	if p/b == a && !(a == -1 && b == math.MinInt) && !(b == -1 && a == math.MinInt) {
		return p
	}
	if (a > 0) == (b > 0) {
		return math.MaxInt
	}
	return math.MinInt
}
