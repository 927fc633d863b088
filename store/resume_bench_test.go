package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkResumeReads is what resume reads of a run of 500 characters
// after 10 and after 100 ticks: each character's latest 10 memories and
// each entity's last 3 exchanges. Both should take about as long whatever
// the number of ticks stored.
//
//	go test -run '^$' -bench ResumeReads ./store
func BenchmarkResumeReads(b *testing.B) {
	const characters = 500
	ids := make([]string, characters)
	for i := range ids {
		ids[i] = fmt.Sprintf("c%04d", i)
	}
	for _, ticks := range []int{10, 100} {
		b.Run(fmt.Sprintf("ticks=%d", ticks), func(b *testing.B) {
			s, err := Open(context.Background(), filepath.Join(b.TempDir(), "state.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			for tick := 1; tick <= ticks; tick++ {
				rec := &TickRecord{Tick: tick, Kind: "narrative", State: []byte("{}")}
				for _, id := range ids {
					rec.Memories = append(rec.Memories, MemoryRecord{CharacterID: id, Entry: fmt.Sprintf("%s remembers tick %d", id, tick)})
					rec.Calls = append(rec.Calls, CallRecord{Phase: "intention", EntityKey: "intention:" + id, Request: "[]"})
					rec.History = append(rec.History, HistoryRecord{EntityKey: "intention:" + id, User: "u", Assistant: "a"})
				}
				if err := s.CommitTick(context.Background(), rec); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			for b.Loop() {
				mems, err := s.LatestMemories(context.Background(), ticks, 10, ids)
				if err != nil || len(mems) != characters*min(10, ticks) {
					b.Fatalf("%d memories, %v", len(mems), err)
				}
				hist, err := s.History(context.Background(), 3, ticks)
				if err != nil || len(hist) != characters {
					b.Fatalf("history of %d entities, %v", len(hist), err)
				}
			}
		})
	}
}
