package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"sync"
	"time"
)

// startCPUProfile starts a CPU profile written to path and returns what
// stops it and closes the file; an empty path profiles nothing.
func startCPUProfile(path string) (stop func() error, err error) {
	if path == "" {
		return func() error { return nil }, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("bench: cpu profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("bench: cpu profile %s: %w", path, err)
	}
	return func() error {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			return fmt.Errorf("bench: cpu profile %s: %w", path, err)
		}
		return nil
	}, nil
}

// heapWatch keeps the heap profile of the moment the live heap was largest:
// what peak RSS is made of. It looks at the live heap (as of the last
// collection) every interval and takes a profile at each new maximum.
type heapWatch struct {
	cancel context.CancelFunc
	done   sync.WaitGroup
	peak   uint64
	prof   bytes.Buffer
	err    error
}

// watchHeap starts watching; "" watches nothing.
func watchHeap(path string, interval time.Duration) *heapWatch {
	w := &heapWatch{}
	if path == "" {
		return w
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	w.done.Add(1)
	go func() {
		defer w.done.Done()
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > w.peak {
				w.peak = live
				w.prof.Reset()
				w.err = pprof.Lookup("heap").WriteTo(&w.prof, 0)
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return w
}

// write stops watching and writes the profile of the peak to path.
func (w *heapWatch) write(path string) error {
	if w.cancel == nil {
		return nil
	}
	w.cancel()
	w.done.Wait()
	if w.err != nil {
		return fmt.Errorf("bench: heap profile: %w", w.err)
	}
	if err := os.WriteFile(path, w.prof.Bytes(), 0o644); err != nil {
		return fmt.Errorf("bench: heap profile: %w", err)
	}
	return nil
}

// profiles are the main world's CPU and heap profiles while they are taken.
type profiles struct {
	stopCPU func() error
	heap    *heapWatch
}

// startProfiles starts the profiles asked for (--cpuprofile, --memprofile)
// when w is the main world; of other worlds it takes none.
func (w *World) startProfiles(o *Options) (*profiles, error) {
	p := &profiles{stopCPU: func() error { return nil }, heap: watchHeap("", 0)}
	if w.Role != "main" {
		return p, nil
	}
	var err error
	if p.stopCPU, err = startCPUProfile(o.CPUProfile); err != nil {
		return nil, err
	}
	p.heap = watchHeap(o.HeapProfile, 50*time.Millisecond)
	return p, nil
}

// finish stops the CPU profile and writes the heap profile's peak.
func (p *profiles) finish(o *Options) error {
	err := p.stopCPU()
	if herr := p.heap.write(o.HeapProfile); err == nil {
		err = herr
	}
	return err
}
