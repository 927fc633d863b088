// Package stats holds the statistics arbiter reports comparisons with: the
// Wilson interval of a rate, and the exact sign test of paired outcomes.
package stats

import "math"

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the 95% Wilson score interval of k successes in n trials;
// [0, 1] when n is 0. It always holds k/n.
func Wilson(k, n int) (low, high float64) {
	if n <= 0 {
		return 0, 1
	}
	p, fn := float64(k)/float64(n), float64(n)
	d := 1 + z95*z95/fn
	c := (p + z95*z95/(2*fn)) / d
	h := z95 * math.Sqrt(p*(1-p)/fn+z95*z95/(4*fn*fn)) / d
	// Rounding may leave p a hair outside at 0 or 1 (14 of 14); it is in.
	return math.Max(0, math.Min(p, c-h)), math.Min(1, math.Max(p, c+h))
}

// SignTest is the two-sided exact sign test's p-value for wins against
// losses (ties left out): how likely a split at least this uneven is when
// either side is as likely to win. 1 when there are none.
func SignTest(wins, losses int) float64 {
	n := wins + losses
	if n <= 0 {
		return 1
	}
	k := min(wins, losses)
	// P(X <= k) for X ~ Binomial(n, 1/2), each term in logs for large n.
	tail := 0.0
	for i := 0; i <= k; i++ {
		tail += math.Exp(logChoose(n, i) - float64(n)*math.Ln2)
	}
	return math.Min(1, 2*tail)
}

func logChoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}
