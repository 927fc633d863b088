package conquest

import (
	"encoding/json"
	"fmt"
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
