package phases

import (
	"bytes"
	"context"
	"hash/fnv"
	"path/filepath"
	"testing"
	"time"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
	"github.com/arbiter-sim/arbiter/llm"
	"github.com/arbiter-sim/arbiter/prompts"
	"github.com/arbiter-sim/arbiter/runner"
	"github.com/arbiter-sim/arbiter/store"
)

// sameAnswers is FromSchema with the strings it writes numbered after the
// prompt rather than the call's arrival: the same request gets the same
// answer, live or in a batch, in any order.
func sameAnswers(c *openaitest.Call) openaitest.Reply {
	h := fnv.New32a()
	h.Write([]byte(c.SystemMessage() + c.LastUserMessage()))
	cc := *c
	cc.N = int(h.Sum32() % 100000)
	return openaitest.FromSchema(nil)(&cc)
}

// batchRunner is a runner of the test world's narrative in batch mode
// against url, on st.
func batchRunner(t *testing.T, url string, st *store.Store) *runner.Runner {
	t.Helper()
	client, err := llm.New(llm.Config{BaseURL: url, APIKey: "test", MaxAttempts: 1, Concurrency: 4, Timeout: 5 * time.Second, BatchPoll: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := prompts.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n := &Narrative{Sim: testWorld(), Prompts: pr, Model: client, Batch: true,
		Intention: llm.Params{Model: "m", MaxTokens: 400}, Resolution: llm.Params{Model: "m", MaxTokens: 2048}}
	return &runner.Runner{Stepper: n, Store: st, Client: client}
}

// TestBatchRunResumes: a batch run stopped while its first job is in
// flight polls that job when run again, never submitting it twice, and
// ends in the state a live run with the same answers reaches; so does one
// stopped after the server created the job and before state.db stored its
// id, which finds the job by the tag it was created with.
func TestBatchRunResumes(t *testing.T) {
	const ticks = 2
	live := openaitest.New(t, sameAnswers)
	lr := narrativeRunner(t, live.URL, nil)
	if _, err := lr.Run(t.Context(), ticks); err != nil {
		t.Fatal(err)
	}
	want, err := lr.Store.State(t.Context(), ticks)
	if err != nil {
		t.Fatal(err)
	}
	for _, unstored := range []bool{false, true} {
		t.Run(map[bool]string{false: "stored", true: "unstored"}[unstored], func(t *testing.T) {
			batchRunResumes(t, want, ticks, unstored)
		})
	}
}

func batchRunResumes(t *testing.T, want []byte, ticks int, unstored bool) {
	srv := openaitest.New(t, sameAnswers)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })

	srv.HoldBatches(true)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := batchRunner(t, srv.URL, st).Run(ctx, ticks)
		done <- err
	}()
	var job store.BatchJob
	for deadline := time.Now().Add(10 * time.Second); ; {
		j, ok, err := st.BatchJob(t.Context(), PhaseIntention, 1)
		if err != nil {
			t.Fatal(err)
		}
		if ok && j.JobID != "" {
			job = j
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no batch job stored while the first is in flight")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel() // the run is stopped while it waits for the job
	<-done
	if srv.BatchesCreated() != 1 || srv.CallCount() != 0 {
		t.Fatalf("stopped run: %d jobs, %d calls answered", srv.BatchesCreated(), srv.CallCount())
	}
	if last, _ := st.LastTick(t.Context()); last != 0 {
		t.Fatalf("stopped run committed tick %d", last)
	}
	if unstored { // as state.db was before the job's id was stored: the intent alone
		if err := st.SaveBatchJob(t.Context(), store.BatchJob{Phase: PhaseIntention, Tick: 1, SubmittedAt: job.SubmittedAt}); err != nil {
			t.Fatal(err)
		}
	}

	srv.HoldBatches(false)
	r := batchRunner(t, srv.URL, st)
	var polls []runner.BatchProgress
	r.OnPhase = func(p runner.PhaseProgress) {
		if p.Batch != nil {
			polls = append(polls, *p.Batch)
		}
	}
	if _, err := r.Run(t.Context(), ticks); err != nil {
		t.Fatal(err)
	}
	if len(polls) != 2*ticks || polls[0].Job != job.JobID || polls[0].Status != "completed" || polls[0].Total != len(testWorld().Characters) ||
		polls[0].Completed != polls[0].Total {
		t.Errorf("progress of the jobs: %+v", polls)
	}
	if got := srv.BatchesCreated(); got != 2*ticks {
		t.Errorf("the server saw %d jobs, want %d: one per phase and tick, the one in flight polled again", got, 2*ticks)
	}
	for _, c := range srv.Calls() {
		if c.CustomID == "" {
			t.Errorf("call %d was made live", c.N)
		}
	}
	if _, ok, _ := st.BatchJob(t.Context(), PhaseIntention, 1); ok {
		t.Errorf("job %s still stored after its tick committed", job.JobID)
	}
	got, err := st.State(t.Context(), ticks)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("batch run's state:\n%s\nlive run's:\n%s", got, want)
	}
}

// TestBatchRunAfterFailedJob: a job that failed as a whole stops the run
// with its tick not committed and is forgotten, so the next run submits
// the phase anew instead of polling the failed job for ever.
func TestBatchRunAfterFailedJob(t *testing.T) {
	srv := openaitest.New(t, sameAnswers)
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv.FailBatches(true)
	if _, err := batchRunner(t, srv.URL, st).Run(t.Context(), 1); err == nil {
		t.Fatal("a run whose job failed ended without an error")
	}
	if _, ok, err := st.BatchJob(t.Context(), PhaseIntention, 1); ok || err != nil {
		t.Fatalf("the failed job is still stored (%v)", err)
	}
	srv.FailBatches(false)
	if _, err := batchRunner(t, srv.URL, st).Run(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	if last, _ := st.LastTick(t.Context()); last != 1 || srv.BatchesCreated() != 3 {
		t.Errorf("after the failed job: tick %d committed, %d jobs; want tick 1 and 3 jobs (the failed one, then one per phase)", last, srv.BatchesCreated())
	}
}
