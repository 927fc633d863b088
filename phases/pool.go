package phases

import (
	"container/heap"
	"sync"
)

// pool runs the calls of the rounds under way on at most max workers,
// those of the earliest tick first: the tick the runner waits for is never
// queued behind work ahead of it. A worker is started when a job finds
// none idle, so the workers are bounded by the calls that exist, not by
// max (llm.concurrency can be far larger than a tick's calls).
type pool struct {
	max int // workers at most; set before start
	wg  sync.WaitGroup

	mu      sync.Mutex
	cond    *sync.Cond // of mu; set before start
	jobs    jobs       // guarded by mu
	seq     int        // guarded by mu
	closed  bool       // guarded by mu
	workers int        // started; guarded by mu
	idle    int        // waiting for a job; guarded by mu
}

type job struct {
	tick, seq int
	run       func()
}

// jobs is a heap of jobs by tick, then by the order they came in.
type jobs []job

func (h jobs) Len() int { return len(h) }
func (h jobs) Less(i, j int) bool {
	if h[i].tick != h[j].tick {
		return h[i].tick < h[j].tick
	}
	return h[i].seq < h[j].seq
}
func (h jobs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *jobs) Push(x any)   { *h = append(*h, x.(job)) }
func (h *jobs) Pop() any {
	old := *h
	j := old[len(old)-1]
	old[len(old)-1] = job{} // a job run keeps no round alive: its slot is reused only by a later push
	*h = old[:len(old)-1]
	return j
}

func newPool(workers int) *pool {
	p := &pool{max: max(1, workers)}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// submit queues run as work of tick, starting a worker when none is idle
// and fewer than max run; after close it is dropped.
func (p *pool) submit(tick int, run func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	p.seq++
	heap.Push(&p.jobs, job{tick: tick, seq: p.seq, run: run})
	if p.idle < len(p.jobs) && p.workers < p.max {
		p.workers++
		p.wg.Add(1)
		go p.work()
		return
	}
	p.cond.Signal()
}

func (p *pool) work() {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		for len(p.jobs) == 0 && !p.closed {
			p.idle++
			p.cond.Wait()
			p.idle--
		}
		if len(p.jobs) == 0 {
			p.mu.Unlock()
			return
		}
		j := heap.Pop(&p.jobs).(job)
		p.mu.Unlock()
		j.run()
	}
}

// close runs the jobs queued (those of dropped rounds return at once) and
// stops the workers.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
