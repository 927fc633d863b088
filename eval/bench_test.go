package eval_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/bench"
	"github.com/arbiter-sim/arbiter/eval"
	_ "github.com/arbiter-sim/arbiter/phases" // the narrative kind
	"github.com/arbiter-sim/arbiter/session"
)

// BenchmarkEval: an eval of 1,000 cases (500 characters' intentions, 500
// locations' resolutions of a committed tick) by 2 variants, 2,000 calls
// against the stand-in server, beside a tick of the same world run in the
// same process (L=50 ms, C=64, as `arbiter bench`): both as T/T*, the wall time over the ideal time of their
// calls at the server's concurrency and latency. Then the same eval again,
// every answer from eval.db: its CPU seconds.
func BenchmarkEval(b *testing.B) {
	const chars, locs, conc, latency = 500, 500, 64, 50 * time.Millisecond
	dir := filepath.Join(b.TempDir(), "world")
	if err := bench.Generate(context.Background(), dir, bench.Shape{Characters: chars, Locations: locs}, 1); err != nil {
		b.Fatal(err)
	}
	srv, err := bench.NewServer(bench.ServerConfig{Latency: latency, Tail: bench.TailFixed, Concurrency: conc, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	set := session.Settings{Depth: 3, Model: "stand-in",
		LLM: func() (session.ClientConfig, error) {
			c := session.DefaultClientConfig()
			c.BaseURL, c.Concurrency = ts.URL+"/v1", conc
			return c, nil
		}}
	ctx := context.Background()
	ideal := func(calls int) time.Duration { return time.Duration((calls+conc-1)/conc) * latency }
	runT := runTick(b, ctx, dir, set)
	b.Logf("run: tick of %d calls, T/T* %.3f", chars+locs, runT.Seconds()/bench.Ideal(bench.Shape{Characters: chars, Locations: locs}, conc, latency).Seconds())
	for b.Loop() {
		r, cases, done := evalRunner(b, ctx, dir, set)
		start := time.Now()
		if _, err := r.Run(ctx, cases); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(time.Since(start).Seconds()/ideal(2*len(cases)).Seconds(), "eval-T/T*")
		b.Logf("eval: %d calls in %s, server stats %+v", 2*len(cases), time.Since(start), srv.Stats())
		cpu := cpuTime()
		res, err := r.Run(ctx, cases)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric((cpuTime() - cpu).Seconds(), "cached-rerun-CPU-s")
		if len(res.Answers) != 2*len(cases) || len(cases) != chars+locs {
			b.Fatalf("%d answers of %d cases", len(res.Answers), len(cases))
		}
		done()
	}
}

func runTick(b *testing.B, ctx context.Context, dir string, set session.Settings) time.Duration {
	s, err := session.Open(ctx, dir, set, session.ReadWrite)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	if _, err := s.Run(ctx, 1); err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// evalRunner is an eval of every call of tick 1 by the baseline and a
// variant at another temperature, with a fresh eval.db.
func evalRunner(b *testing.B, ctx context.Context, dir string, set session.Settings) (*eval.Runner, []eval.Case, func()) {
	t := float32(0.5)
	suite := &eval.Suite{Repeat: 1, MinPassRate: 1, Variants: []eval.Variant{{Name: "warm", Temperature: &t}}, Cases: eval.CaseSpec{From: 1, To: 1}}
	base, err := session.Open(ctx, dir, set, session.ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	warmSet := set
	warmSet.Override.Temperature = &t
	warm, err := session.Open(ctx, dir, warmSet, session.ReadOnly)
	if err != nil {
		b.Fatal(err)
	}
	client, err := base.TryClient(nil)
	if err != nil {
		b.Fatal(err)
	}
	cases, err := eval.Cases(ctx, base, suite.Cases)
	if err != nil {
		b.Fatal(err)
	}
	db, err := eval.OpenDB(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	r := &eval.Runner{Suite: suite, DB: db, Arms: []eval.Arm{{Name: eval.Baseline, Session: base, Client: client}, {Name: "warm", Session: warm, Client: client}}}
	return r, cases, func() { db.Close(); base.Close(); warm.Close() }
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
