package phases

import (
	"sync"
	"testing"
)

// A job the pool has run is no longer reachable from its queue: a round's
// jobs hold the round, and a round holds its tick's calls, prompts kept
// for the commit included, so a popped slot left in the heap's backing
// array kept finished ticks in memory.
func TestPoolForgetsJobsItRan(t *testing.T) {
	p := newPool(2)
	var wg sync.WaitGroup
	for tick := range 3 {
		for range 100 {
			wg.Add(1)
			p.submit(tick, wg.Done)
		}
	}
	wg.Wait()
	p.close()
	if len(p.jobs) != 0 {
		t.Fatalf("%d jobs still queued after close", len(p.jobs))
	}
	for i, j := range p.jobs[:cap(p.jobs)] {
		if j.run != nil {
			t.Fatalf("slot %d of the queue's array still holds a job that ran (tick %d)", i, j.tick)
		}
	}
}
