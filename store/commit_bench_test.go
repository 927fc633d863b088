package store

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkCommit commits ticks of 1,000 calls, each with a prompt of its
// own and the instructions every call shares, over a state of 1,000
// characters of which a tenth change each tick: the store's share of a
// tick's CPU and allocations (b.N ticks; per-call figures are /1,000).
func BenchmarkCommit(b *testing.B) {
	s, err := Open(b.Context(), filepath.Join(b.TempDir(), FileName))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	system := strings.Repeat("The instructions every call shares. ", 40)
	b.ReportAllocs()
	for tick := 1; b.Loop(); tick++ {
		rec := &TickRecord{Tick: tick, Kind: "narrative"}
		var state strings.Builder
		state.WriteString(`{"tick":` + fmt.Sprint(tick) + `,"characters":{`)
		for i := range 1000 {
			mood := "calm"
			if i%10 == tick%10 {
				mood = fmt.Sprintf("moved at %d", tick)
			}
			fmt.Fprintf(&state, `"c%04d":{"location":"l%03d","internal_state":"%s","external_intent":"wait"},`, i, i%100, mood)
			prompt := fmt.Sprintf("Tick %d in place %d. You are c%04d. %s", tick, i%100, i, strings.Repeat("Around you: others wait. ", 30))
			answer := fmt.Sprintf(`{"intention":"c%04d waits at tick %d"}`, i, tick)
			rec.Calls = append(rec.Calls, CallRecord{Phase: "intention", EntityKey: fmt.Sprintf("intention:c%04d", i),
				Prepared: s.PrepareRequest([]Message{{Role: "system", Content: system}, {Role: "user", Content: prompt}}),
				Raw:      answer, Output: answer, Attempts: 1})
			rec.History = append(rec.History, HistoryRecord{EntityKey: fmt.Sprintf("intention:c%04d", i), User: prompt, Assistant: answer})
		}
		rec.State = []byte(strings.TrimSuffix(state.String(), ",") + "}}")
		if err := s.CommitTick(b.Context(), rec); err != nil {
			b.Fatal(err)
		}
	}
}
