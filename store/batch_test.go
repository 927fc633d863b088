package store

import (
	"reflect"
	"testing"
	"time"
)

func TestEndpointTotals(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t)
	r1, r2 := record(1), record(2)
	r1.Calls[0].Endpoint, r1.Calls[2].Endpoint = "gpu-a", "gpu-b"
	r2.Calls[0].Endpoint, r2.Calls[2].Endpoint = "gpu-a", "gpu-a"
	commit(t, s, r1, r2)
	sum, err := s.Summary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Usage{}
	for _, g := range sum.ByEndpoint {
		got[g.Key] = g.Usage
	}
	want := map[string]Usage{
		"gpu-a": {Calls: 3, Repairs: 1, PromptTokens: 500, CompletionTokens: 120, CachedTokens: 100, LatencyMS: 640},
		"gpu-b": {Calls: 1, Repairs: 1, PromptTokens: 300, CompletionTokens: 80, LatencyMS: 400},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("by endpoint\n got  %+v\n want %+v (the call no endpoint answered counts under none)", got, want)
	}
	var ep string
	if err := s.db.QueryRowContext(t.Context(), "SELECT endpoint FROM calls WHERE tick = 1 AND entity_key = 'resolution:hall'").Scan(&ep); err != nil || ep != "gpu-b" {
		t.Errorf("calls.endpoint = %q, %v", ep, err)
	}
}

func TestBatchJobKeptUntilItsTickCommits(t *testing.T) {
	t.Parallel()
	s, path := openTemp(t)
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	job := BatchJob{Phase: "intention", Tick: 1, JobID: "batch_abc", Endpoint: "openai", SubmittedAt: at}
	if err := s.SaveBatchJob(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveBatchJob(t.Context(), BatchJob{Phase: "resolution", Tick: 1, JobID: "batch_def", SubmittedAt: at}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s2, err := Open(t.Context(), path) // a resumed run
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, ok, err := s2.BatchJob(t.Context(), "intention", 1)
	if err != nil || !ok || !reflect.DeepEqual(got, job) {
		t.Fatalf("BatchJob = %+v, %v, %v; want %+v", got, ok, err, job)
	}
	if err := s2.DeleteBatchJob(t.Context(), "resolution", 1); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s2.BatchJob(t.Context(), "resolution", 1); ok {
		t.Error("deleted job still there")
	}
	if has, err := s2.HasBatchJobs(t.Context()); !has || err != nil {
		t.Errorf("HasBatchJobs = %v, %v with intention's job stored", has, err)
	}
	commit(t, s2, record(1))
	if _, ok, err := s2.BatchJob(t.Context(), "intention", 1); ok || err != nil {
		t.Errorf("job of a committed tick still there (%v)", err)
	}
	if has, err := s2.HasBatchJobs(t.Context()); has || err != nil {
		t.Errorf("HasBatchJobs = %v, %v after the commit", has, err)
	}
}
