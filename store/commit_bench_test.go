package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCommit commits ticks of n calls, one per character, each with a
// prompt of its own and the instructions every call shares, over a state
// of n characters of which a tenth change each tick: the store's share of a
// tick's CPU and allocations (b.N ticks; per-call figures are /n). Its
// time per call should not grow with n. written-B/call is what the last
// tick wrote to the WAL (pages of 16 KiB), per call: run with -benchtime
// 2x and 16x to see how it grows with the ticks stored before it.
func BenchmarkCommit(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 30_000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkCommit(b, n) })
	}
}

func benchmarkCommit(b *testing.B, n int) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	var frames int
	system := strings.Repeat("The instructions every call shares. ", 40)
	b.ReportAllocs()
	for tick := 1; b.Loop(); tick++ {
		rec := &TickRecord{Tick: tick, Kind: "narrative"}
		var state strings.Builder
		state.WriteString(`{"tick":` + fmt.Sprint(tick) + `,"characters":{`)
		for i := range n {
			mood := "calm"
			if i%10 == tick%10 {
				mood = fmt.Sprintf("moved at %d", tick)
			}
			fmt.Fprintf(&state, `"c%06d":{"location":"l%05d","internal_state":"%s","external_intent":"wait"},`, i, i%(n/10), mood)
			prompt := fmt.Sprintf("Tick %d in place %d. You are c%06d. %s", tick, i%(n/10), i, strings.Repeat("Around you: others wait. ", 30))
			answer := fmt.Sprintf(`{"intention":"c%06d waits at tick %d"}`, i, tick)
			rec.Calls = append(rec.Calls, CallRecord{Phase: "intention", EntityKey: fmt.Sprintf("intention:c%06d", i),
				Prepared: s.PrepareRequest([]Message{{Role: "system", Content: system}, {Role: "user", Content: prompt}}),
				Raw:      answer, Output: answer, Attempts: 1})
			rec.History = append(rec.History, HistoryRecord{EntityKey: fmt.Sprintf("intention:c%06d", i), User: prompt, Assistant: answer})
		}
		rec.State = []byte(strings.TrimSuffix(state.String(), ",") + "}}")
		if err := s.CommitTick(b.Context(), rec); err != nil {
			b.Fatal(err)
		}
		// The checkpoint after the commit copied every frame: the WAL
		// holds this commit's alone, which a passive checkpoint counts.
		var busy, done int
		if err := s.db.QueryRowContext(b.Context(), "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &done); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(frames)*16384/float64(n), "written-B/call")
}
