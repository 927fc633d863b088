package store

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDelta makes the delta of a state of n characters over the state
// before, in which every character's mood changed: its time per character
// should not grow with n (it did, as n², when a change sent the search
// of the next segment through every character sharing it).
func BenchmarkDelta(b *testing.B) {
	for _, n := range []int{10_000, 30_000, 100_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			base, next := deltaStates(n, 1), deltaStates(n, 2)
			b.SetBytes(int64(len(next)))
			var d []byte
			for b.Loop() {
				d = makeDelta(base, next)
			}
			b.ReportMetric(float64(len(d)), "delta-bytes")
		})
	}
}

// deltaStates is a state of n characters at tick, each with fields that
// most characters share and a mood of the tick.
func deltaStates(n, tick int) []byte {
	var s strings.Builder
	fmt.Fprintf(&s, `{"tick":%d,"characters":{`, tick)
	for i := range n {
		if i > 0 {
			s.WriteByte(',')
		}
		fmt.Fprintf(&s, `"c%06d":{"location":"l%05d","internal_state":"moved at %d by %d","external_intent":"wait","inventory":[],"alive":true}`, i, i%(n/10), tick, i)
	}
	s.WriteString("}}")
	return []byte(s.String())
}
