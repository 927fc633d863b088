package bench

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	_ "modernc.org/sqlite" // a read-only look at state.db's size after each tick

	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/session"
	"github.com/arbiter-sim/arbiter/store"
)

// standInKey is the API key sent to the stand-in server. Like a real key,
// it appears in no answer: the key "bench", which the model name and so
// every answer held, had every answer scrubbed of it, work a real run does
// not do.
const standInKey = "sk-bench-stand-in"

// measure opens the world as `arbiter run` would and runs its ticks,
// recording every figure into w; a failure is w.Error. The world timeout
// runs from the open to the last tick. When ctx ends (Ctrl-C, SIGTERM),
// what is in progress stops: the tick in flight is rolled back, the
// read-back is cut short, and w keeps what was measured before.
func (w *World) measure(ctx context.Context, o *Options, children []*Child, simDir string, ticks, concurrency int) {
	sizes := &dbWatch{path: session.StatePath(simDir)}
	defer sizes.close()
	tickCtx := ctx
	if o.WorldTimeout > 0 {
		var cancel context.CancelFunc
		tickCtx, cancel = context.WithTimeout(ctx, o.WorldTimeout)
		defer cancel()
	}
	set := w.settings(o, children, sizes, ticks, concurrency)
	o.progress("%s world: opening (load, lint, state.db)", w.Role)
	start := time.Now()
	sess, err := w.open(ctx, tickCtx, simDir, set)
	w.Open = time.Since(start)
	if ctx.Err() != nil {
		if sess != nil {
			sess.Close()
		}
		w.Error = "interrupted as the world was opened"
		return
	}
	if err != nil {
		w.Error = fmt.Sprintf("open: %v", err)
		return
	}
	o.progress("%s world: opened in %s (load, lint, state.db)", w.Role, w.Open.Round(time.Millisecond))
	rep, sp, runErr := w.run(tickCtx, ctx, o, sess, children, sizes, ticks)
	// Reading ticks back is timed on the main world, when it has ticks
	// before its last.
	if runErr == nil && ctx.Err() == nil && rep != nil && w.Role == "main" && len(rep.Ticks) > 1 {
		w.readBack(ctx, o, simDir, set, len(rep.Ticks))
	}
	switch {
	case runErr != nil && ctx.Err() != nil:
		w.Error = fmt.Sprintf("interrupted with the tick in flight rolled back: %v", runErr)
	case runErr != nil && errors.Is(tickCtx.Err(), context.DeadlineExceeded):
		w.Error = fmt.Sprintf("stopped by the world timeout (%s) with the tick in flight rolled back: %v", o.WorldTimeout, runErr)
	case runErr != nil:
		w.Error = fmt.Sprintf("run: %v", runErr)
	}
	w.sum(rep, runErr != nil, sp)
}

// open opens the world as `arbiter run` does. Reading a large world's
// files and building its first tick's requests does not watch ctx (minutes
// at 300,000 characters), so when ctx ends first open returns nil at once
// and leaves the open to finish on its own: the session it gives is
// closed, and w.opening closed after it.
func (w *World) open(ctx, tickCtx context.Context, simDir string, set session.Settings) (*session.Session, error) {
	type opened struct {
		sess *session.Session
		err  error
	}
	ch := make(chan opened, 1)
	go func() {
		s, err := session.Open(tickCtx, simDir, set, session.ReadWrite)
		ch <- opened{s, err}
	}()
	select {
	case r := <-ch:
		return r.sess, r.err
	case <-ctx.Done():
	}
	done := make(chan struct{})
	w.opening = done
	go func() {
		if r := <-ch; r.sess != nil {
			r.sess.Close()
		}
		close(done)
	}()
	return nil, ctx.Err()
}

// run runs the ticks of the open session sess under tickCtx, then measures
// what needs the committed ticks (their shared prompt prefix, unless ctx
// ended) and closes sess.
func (w *World) run(tickCtx, ctx context.Context, o *Options, sess *session.Session, children []*Child, sizes *dbWatch, ticks int) (*runner.Report, span, error) {
	before, err := serverStats(ctx, children)
	var prof *profiles
	if err == nil {
		prof, err = w.startProfiles(o)
	}
	if err != nil {
		sess.Close()
		return nil, span{}, err
	}
	rep, sp, runErr := w.runTicks(tickCtx, o, sess, ticks, prof)
	sizes.close()
	if rep != nil && len(rep.Ticks) > 0 && ctx.Err() == nil {
		start := time.Now()
		prefix, err := sess.PromptPrefixes(ctx, rep.Ticks[0].Tick)
		if err != nil {
			o.progress("%s world: shared prompt prefix not measured: %v", w.Role, err)
		} else {
			o.progress("%s world: shared prompt prefix of tick %d measured in %s", w.Role, rep.Ticks[0].Tick, time.Since(start).Round(time.Millisecond))
		}
		w.Prefix = prefix
	}
	if err := sess.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if after, err := serverStats(context.WithoutCancel(ctx), children); err == nil {
		w.Server = after.Sub(before)
	}
	if fi, err := os.Stat(sizes.path); err == nil {
		w.DBBytes = fi.Size()
	}
	return rep, sp, runErr
}

// settings are o.Session with the stand-in servers as the model client
// (one base URL, or each an endpoint with its share of the client
// concurrency) in place of any endpoint config.yaml names, live calls only
// (the stand-in has no Batch API), at the given client concurrency, and an
// OnTick that records state.db's size after each commit and kills the last
// server at o.KillEndpoint.
func (w *World) settings(o *Options, children []*Child, sizes *dbWatch, ticks, concurrency int) session.Settings {
	set := o.Session
	set.Batch, set.BatchPhases = false, nil
	set.LLM = func() (llm.Config, error) {
		c := o.Client
		c.BaseURL, c.APIKey, c.Concurrency = children[0].URL, standInKey, concurrency
		c.Endpoints, c.PhaseEndpoints = nil, nil
		if len(children) > 1 {
			c.BaseURL, c.APIKey = "", ""
			for i, child := range children {
				c.Endpoints = append(c.Endpoints, llm.Endpoint{Name: fmt.Sprintf("stand-in-%d", i+1), BaseURL: child.URL,
					APIKey: standInKey, Concurrency: share(concurrency, len(children), i)})
			}
		}
		return c, nil
	}
	set.Lockstep = w.Role == "main, lockstep"
	set.OnTick = func(t runner.TickReport) {
		if t.Tick == o.KillEndpoint && len(children) > 1 {
			last := children[len(children)-1]
			last.Kill()
			w.KilledAfter = t.Tick
			o.progress("%s world: stand-in endpoint %d of %d killed after tick %d", w.Role, len(children), len(children), t.Tick)
		}
		size := sizes.size()
		w.DBAfter = append(w.DBAfter, size)
		o.progress("%s world: tick %d/%d committed in %s (T* %s), commit %s, state.db %s", w.Role, t.Tick, ticks,
			t.Duration.Round(time.Millisecond), w.Ideal.Round(time.Millisecond), t.Commit.Round(time.Millisecond), megabytes(size))
	}
	return set
}

// serverStats sums what the stand-in servers counted; a killed server's
// count is the one it gave last.
func serverStats(ctx context.Context, children []*Child) (Stats, error) {
	var sum Stats
	for _, c := range children {
		s, err := c.Stats(ctx)
		if err != nil {
			return Stats{}, err
		}
		sum = sum.Add(s)
	}
	return sum, nil
}

// span is what the arbiter process spent over a world's ticks.
type span struct {
	cpu                   time.Duration // user + system time
	mallocs, allocedBytes uint64
}

// runTicks runs the ticks: the span over which engine CPU, allocations and
// peak RSS are measured, the main world's profiles taken, and a testing.B's
// timer runs.
func (w *World) runTicks(ctx context.Context, o *Options, sess *session.Session, ticks int, prof *profiles) (*runner.Report, span, error) {
	runtime.GC()
	if o.timer != nil {
		o.timer.StartTimer()
		defer o.timer.StopTimer()
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0, _, _ := usage()
	start := time.Now()
	rep, err := sess.Run(ctx, ticks)
	w.Wall = time.Since(start)
	cpu1, rss, _ := usage()
	runtime.ReadMemStats(&m1)
	if perr := prof.finish(o); perr != nil && err == nil {
		err = perr
	}
	w.PeakRSS = rss
	return rep, span{cpu: cpu1 - cpu0, mallocs: m1.Mallocs - m0.Mallocs, allocedBytes: m1.TotalAlloc - m0.TotalAlloc}, err
}

// sum folds the committed ticks of rep and the span of the run into w's
// figures: counts, T, commit, prompt tokens by tick, per-call CPU and
// allocations, state.db growth. failed says the run stopped on an error,
// so its wall time includes a tick rolled back.
func (w *World) sum(rep *runner.Report, failed bool, sp span) {
	if rep == nil {
		return
	}
	for _, t := range rep.Ticks {
		w.Ticks++
		w.Calls += t.Calls
		w.Failed += t.Failed
		w.Fallbacks += t.Fallbacks
		w.Commit += t.Commit
		w.CommitMax = max(w.CommitMax, t.Commit)
		w.TickMax = max(w.TickMax, t.Duration)
		w.Prompt = append(w.Prompt, float64(t.Usage.PromptTokens)/float64(max(1, t.Calls)))
	}
	if w.Ticks == 0 {
		return
	}
	w.CPU = sp.cpu
	w.Tick = w.Wall / time.Duration(w.Ticks)
	if failed {
		// T is then the mean of the committed ticks alone.
		var sum time.Duration
		for _, t := range rep.Ticks {
			sum += t.Duration
		}
		w.Tick = sum / time.Duration(w.Ticks)
	}
	w.Commit /= time.Duration(w.Ticks)
	if w.Ideal > 0 {
		w.Ratio = float64(w.Tick) / float64(w.Ideal)
	}
	if w.Calls > 0 {
		w.CPUPerCall = w.CPU / time.Duration(w.Calls)
		w.AllocsPerCall = float64(sp.mallocs) / float64(w.Calls)
		w.AllocBytesPerCall = float64(sp.allocedBytes) / float64(w.Calls)
	}
	if n := len(w.DBAfter); n >= 2 {
		w.DBGrowth = (w.DBAfter[n-1] - w.DBAfter[0]) / int64(n-1)
		if later := w.Calls - rep.Ticks[0].Calls; later > 0 {
			w.DBPerCall = float64(w.DBAfter[n-1]-w.DBAfter[0]) / float64(later)
		}
	} else if n == 1 {
		w.DBGrowth = w.DBAfter[0]
	}
}

// dbWatch reads state.db's size after each commit through a read-only
// connection of its own, opened at the first commit.
type dbWatch struct {
	path string
	db   *sql.DB
}

// size is state.db's size as of its last commit (WAL included): its page
// count times its page size, or 0 when it cannot be read.
func (d *dbWatch) size() int64 {
	if d.db == nil {
		db, err := sql.Open("sqlite", "file:"+d.path+"?mode=ro")
		if err != nil {
			return 0
		}
		d.db = db
	}
	var pages, size int64
	if d.db.QueryRow("PRAGMA page_count").Scan(&pages) != nil || d.db.QueryRow("PRAGMA page_size").Scan(&size) != nil {
		return 0
	}
	return pages * size
}

func (d *dbWatch) close() {
	if d.db != nil {
		d.db.Close()
		d.db = nil
	}
}

// readBack times reading every tick back as `export --tick N` does
// (timeExports). A read that fails is said in the progress and leaves the
// figures of the ticks as they are; one cut short by ctx is the world's
// Error, which the report prints.
func (w *World) readBack(ctx context.Context, o *Options, simDir string, set session.Settings, ticks int) {
	o.progress("%s world: reading its %d ticks back (export --tick N)", w.Role, ticks)
	err := w.timeExports(ctx, simDir, set, ticks)
	switch {
	case err != nil && ctx.Err() != nil:
		w.Error = "interrupted while its ticks were read back (export --tick N); the figures of the ticks are complete"
	case err != nil:
		o.progress("%s world: export not timed: %v", w.Role, err)
	default:
		o.progress("%s world: read back: a read-only session opened in %s, export --tick N at most %s (tick %d)", w.Role,
			w.ReadOpen.Round(time.Millisecond), w.ExportMax.Round(time.Millisecond), w.ExportTick)
	}
}

// timeExports times reading back the state of every tick of the world
// (store.State: a whole state and the deltas after it), then `export
// --tick N` of each as the command does it: a read-only session opened
// once (ReadOpen), then each tick's state with every memory written up to
// it. The longest of each is kept. It stops with ctx's error between two
// steps when ctx ends.
func (w *World) timeExports(ctx context.Context, simDir string, set session.Settings, ticks int) error {
	st, err := store.OpenReadOnly(ctx, session.StatePath(simDir))
	if err != nil {
		return err
	}
	for tick := 1; tick <= ticks; tick++ {
		start := time.Now()
		if _, err := st.State(ctx, tick); err != nil {
			st.Close()
			return fmt.Errorf("tick %d: %w", tick, err)
		}
		w.StateReadMax = max(w.StateReadMax, time.Since(start))
	}
	st.Close()
	if err := ctx.Err(); err != nil {
		return err
	}
	set.Inspect = true // as `arbiter export` opens it
	start := time.Now()
	sess, err := session.Open(ctx, simDir, set, session.ReadOnly)
	w.ReadOpen = time.Since(start)
	if err != nil {
		return err
	}
	defer sess.Close()
	for tick := 1; tick <= ticks; tick++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := time.Now()
		if _, err := sess.Export(ctx, tick, false); err != nil {
			return fmt.Errorf("tick %d: %w", tick, err)
		}
		if d := time.Since(start); d > w.ExportMax {
			w.ExportMax, w.ExportTick = d, tick
		}
	}
	return nil
}
