package stats

import (
	"math"
	"testing"
)

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n      int
		low, high float64
	}{
		{7, 10, 0.3968, 0.8922},
		{50, 100, 0.4038, 0.5962},
		{10, 10, 0.7225, 1},
		{0, 10, 0, 0.2775},
		{1, 1, 0.2065, 1},
		{31, 40, 0.6250, 0.8768},
		{0, 0, 0, 1},
	} {
		low, high := Wilson(c.k, c.n)
		if math.Abs(low-c.low) > 1e-4 || math.Abs(high-c.high) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f], want [%.4f, %.4f]", c.k, c.n, low, high, c.low, c.high)
		}
	}
	for n := 1; n <= 300; n++ {
		for k := 0; k <= n; k++ {
			low, high := Wilson(k, n)
			if p := float64(k) / float64(n); low > p || high < p || low < 0 || high > 1 {
				t.Fatalf("Wilson(%d, %d) = [%v, %v] does not hold %v", k, n, low, high, p)
			}
		}
	}
}

func TestSignTest(t *testing.T) {
	for _, c := range []struct {
		wins, losses int
		p            float64
	}{
		{0, 0, 1},
		{5, 5, 1},
		{9, 1, 0.021484375},
		{31, 9, 0.00067955},
		{10, 0, 0.001953},
		{9, 0, 0.003906},
		{600, 400, 2.72846e-10},
	} {
		if p := SignTest(c.wins, c.losses); math.Abs(p-c.p)/c.p > 1e-4 {
			t.Errorf("SignTest(%d, %d) = %g, want %g", c.wins, c.losses, p, c.p)
		}
	}
}
