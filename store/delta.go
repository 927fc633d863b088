package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/maphash"
)

// A delta is a state written as what changed since the state before: a
// series of operations, each a literal run of bytes or a copy of a run of
// the base's bytes, whose concatenation is the new state byte for byte
// (a kind's state reads back exactly as it wrote it). Each operation
// starts with an unsigned varint n<<1|copy; a literal is followed by its n
// bytes, a copy by the offset in the base of its n bytes.
//
// The runs are found on segments of the JSON: a segment ends after each
// ',', '{' or '[' outside a string, so a character's unchanged fields, or
// a whole unchanged character, are copies, and a changed field is a
// literal. Which copy a repeated segment points at changes only the
// delta's size, never what it reads back as.

// segments returns the end offset of each segment of b.
func segments(b []byte) []int32 {
	ends := make([]int32, 0, len(b)/24)
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == '{' || c == '['):
			ends = append(ends, int32(i+1))
		}
	}
	if len(ends) == 0 || int(ends[len(ends)-1]) != len(b) {
		ends = append(ends, int32(len(b)))
	}
	return ends
}

var deltaSeed = maphash.MakeSeed()

// makeDelta writes next as a delta over base.
func makeDelta(base, next []byte) []byte {
	baseEnds := segments(base)
	segStart := func(i int32) int32 {
		if i == 0 {
			return 0
		}
		return baseEnds[i-1]
	}
	// The base's segments of each hash, ascending: chains[h].first is the
	// first index + 1, then[i] the next after i + 1 (0: none). A map of
	// slices held a small allocation per segment, tens of megabytes of a
	// large world's commit.
	chains := make(map[uint64]chain, len(baseEnds))
	then := make([]int32, len(baseEnds))
	for i := int32(len(baseEnds)) - 1; i >= 0; i-- {
		h := maphash.Bytes(deltaSeed, base[segStart(i):baseEnds[i]])
		c := chains[h]
		then[i] = c.first
		c.first, c.at = i+1, i+1
		chains[h] = c
	}
	equal := func(i int32, seg []byte) bool { return bytes.Equal(base[segStart(i):baseEnds[i]], seg) }
	var d deltaWriter
	expect := int32(0) // the base segment after the last one copied
	start := int32(0)
	for _, end := range segments(next) {
		seg := next[start:end]
		start = end
		if int(expect) < len(baseEnds) && equal(expect, seg) {
			d.copy(int(segStart(expect)), len(seg))
			expect++
			continue
		}
		// The first equal segment at or after expect, else the first
		// equal one. A hash's segments before expect are passed for good
		// (at): expect moves on through the base as next is written, and
		// walking a segment that thousands of characters share from its
		// first again at each change made the delta quadratic in the
		// world's size. Should expect move back, a later copy is taken,
		// which changes only the delta's size.
		h := maphash.Bytes(deltaSeed, seg)
		c := chains[h]
		for c.at > 0 && c.at-1 < expect {
			c.at = then[c.at-1]
		}
		chains[h] = c
		found := int32(-1)
		for i := c.at - 1; i >= 0 && found < 0; i = then[i] - 1 {
			if equal(i, seg) {
				found = i
			}
		}
		for i := c.first - 1; i >= 0 && found < 0; i = then[i] - 1 {
			if equal(i, seg) {
				found = i
			}
		}
		if found < 0 {
			d.literal(seg)
			continue
		}
		d.copy(int(segStart(found)), len(seg))
		expect = found + 1
	}
	return d.finish()
}

// chain is where the base's segments of one hash are: the first's index
// + 1, and the index + 1 of the first that makeDelta has not passed.
type chain struct{ first, at int32 }

// deltaWriter merges adjacent copies and literals as it goes.
type deltaWriter struct {
	out          []byte
	lit          []byte
	copyOff, cpN int
}

func (d *deltaWriter) copy(off, n int) {
	if d.cpN > 0 && d.copyOff+d.cpN == off {
		d.cpN += n
		return
	}
	d.flush()
	d.copyOff, d.cpN = off, n
}

func (d *deltaWriter) literal(b []byte) {
	if d.cpN > 0 {
		d.flush()
	}
	d.lit = append(d.lit, b...)
}

func (d *deltaWriter) flush() {
	if len(d.lit) > 0 {
		d.out = binary.AppendUvarint(d.out, uint64(len(d.lit))<<1)
		d.out = append(d.out, d.lit...)
		d.lit = d.lit[:0]
	}
	if d.cpN > 0 {
		d.out = binary.AppendUvarint(d.out, uint64(d.cpN)<<1|1)
		d.out = binary.AppendUvarint(d.out, uint64(d.copyOff))
		d.cpN = 0
	}
}

func (d *deltaWriter) finish() []byte {
	d.flush()
	return d.out
}

var errDelta = errors.New("a state delta that does not fit its base")

// applyDelta reads a delta over base back into the state it was made from.
func applyDelta(base, delta []byte) ([]byte, error) {
	out := make([]byte, 0, len(base)+len(base)/8)
	for len(delta) > 0 {
		v, k := binary.Uvarint(delta)
		if k <= 0 {
			return nil, errDelta
		}
		delta = delta[k:]
		n := v >> 1
		if v&1 == 0 {
			if n > uint64(len(delta)) {
				return nil, errDelta
			}
			out, delta = append(out, delta[:n]...), delta[n:]
			continue
		}
		off, k := binary.Uvarint(delta)
		if k <= 0 || off > uint64(len(base)) || n > uint64(len(base))-off {
			return nil, errDelta
		}
		out, delta = append(out, base[off:off+n]...), delta[k:]
	}
	return out, nil
}
