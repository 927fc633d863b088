package conquest

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
)

// Rand is the game's random source: a PCG generator seeded from the game's
// seed, whose state travels with the game state, so a game replays exactly
// and a resumed game continues the same sequence.
type Rand struct {
	Seed uint64 `json:"seed"`
	pcg  *rand.PCG
}

func newRand(seed uint64) Rand {
	return Rand{Seed: seed, pcg: rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)}
}

// IntN returns a draw in [0, n).
func (r *Rand) IntN(n int) int {
	if r.pcg == nil {
		*r = newRand(r.Seed)
	}
	return rand.New(r.pcg).IntN(n)
}

// d6 rolls a six-sided die.
func (r *Rand) d6() int { return r.IntN(6) + 1 }

// exactDice is the most dice a party rolls one by one in a round of
// combat: realistic battles (a game of 10,000 turns makes tens of
// thousands of ships at most) play die by die, as they always have.
const exactDice = 10000

// hits is how many of n dice show need or more: rolled one by one up to
// exactDice dice, drawn at once above that from the normal approximation
// of the binomial (mean n*p, variance n*p*(1-p), rounded, within 0..n),
// which at such counts is within a fraction of a percent of it, so that a
// round of combat takes bounded time whatever the count.
func (r *Rand) hits(n, need int) int {
	if n <= exactDice {
		h := 0
		for range n {
			if r.d6() >= need {
				h++
			}
		}
		return h
	}
	p := float64(7-need) / 6
	mean := float64(n) * p
	h := math.Round(mean + math.Sqrt(mean*(1-p))*r.norm())
	switch {
	case h <= 0:
		return 0
	case h >= float64(n):
		return n
	}
	return int(h)
}

// norm returns a draw of the standard normal distribution.
func (r *Rand) norm() float64 {
	if r.pcg == nil {
		*r = newRand(r.Seed)
	}
	return rand.New(r.pcg).NormFloat64()
}

type randJSON struct {
	Seed  uint64 `json:"seed"`
	State []byte `json:"state"`
}

// MarshalJSON writes the seed and the generator's state.
func (r Rand) MarshalJSON() ([]byte, error) {
	out := randJSON{Seed: r.Seed}
	if r.pcg != nil {
		b, err := r.pcg.MarshalBinary()
		if err != nil {
			return nil, err
		}
		out.State = b
	}
	return json.Marshal(out)
}

// UnmarshalJSON restores the generator; without a state it starts from the
// seed.
func (r *Rand) UnmarshalJSON(b []byte) error {
	var in randJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*r = newRand(in.Seed)
	if len(in.State) > 0 {
		if err := r.pcg.UnmarshalBinary(in.State); err != nil {
			return fmt.Errorf("rand state: %w", err)
		}
	}
	return nil
}

// clone returns an independent copy at the same point of the sequence.
func (r Rand) clone() Rand {
	if r.pcg == nil {
		return r
	}
	c := *r.pcg
	return Rand{Seed: r.Seed, pcg: &c}
}
