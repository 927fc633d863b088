package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/arbiter-sim/arbiter/internal/openaitest"
)

// batchServer answers as its user message says: "ada" well, "bob" off
// the schema in a batch and well live, "cy" with a 500 in a batch and well
// live.
func batchServer(t *testing.T, opts ...openaitest.Option) *openaitest.Server {
	return openaitest.New(t, func(c *openaitest.Call) openaitest.Reply {
		user := c.LastUserMessage()
		switch {
		case c.CustomID != "" && user == "bob":
			return openaitest.JSON(map[string]any{"name": "Bob", "location": "moon"})
		case c.CustomID != "" && user == "cy":
			return openaitest.Status(500, "server_error", "", "boom")
		}
		name := user
		if strings.Contains(user, "schema") { // a repair: the message quotes the error
			name = "bob"
		}
		return openaitest.JSON(map[string]any{"name": name, "location": "garden"})
	}, opts...)
}

func batchRequests(users ...string) []Request {
	reqs := make([]Request, len(users))
	for i, u := range users {
		reqs[i] = testRequest(u)
		reqs[i].EntityKey = "intention:" + u
	}
	return reqs
}

func TestCompleteBatch(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	c, _ := newTestClient(t, srv.URL, nil)
	reqs := batchRequests("ada", "bob", "cy")
	noModel := testRequest("dee")
	noModel.EntityKey, noModel.Params.Model = "intention:dee", ""
	reqs = append(reqs, noModel)

	var stored, polled []string
	results, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{
		Submitted: func(_ context.Context, id, endpoint string) error {
			if srv.CallCount() != 0 || len(polled) != 0 {
				t.Errorf("job stored after %d calls and %d polls: it must be stored before the wait", srv.CallCount(), len(polled))
			}
			stored = append(stored, id, endpoint)
			return nil
		},
		Progress: func(st BatchStatus) { polled = append(polled, st.Status) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if srv.BatchesCreated() != 1 || len(stored) != 2 || stored[0] != "batch_1" || stored[1] == "" {
		t.Errorf("batches created %d, stored %q", srv.BatchesCreated(), stored)
	}
	if len(polled) == 0 || polled[len(polled)-1] != "completed" {
		t.Errorf("progress = %q", polled)
	}
	if len(results) != len(reqs) {
		t.Fatalf("%d results", len(results))
	}
	for i, u := range []string{"ada", "bob", "cy"} {
		r := results[i]
		if r.Err != nil || r.Request.EntityKey != "intention:"+u {
			t.Errorf("%s: %s, Err %v", u, r.Request.EntityKey, r.Err)
			continue
		}
		var got map[string]any
		if err := json.Unmarshal(r.Output, &got); err != nil || got["name"] != u {
			t.Errorf("%s: Output %s", u, r.Output)
		}
	}
	ada, bob, cy := results[0], results[1], results[2]
	if ada.Attempts != 1 || ada.BatchUsage.Total() == 0 || ada.BatchUsage != ada.Usage || len(ada.Recoveries) != 0 {
		t.Errorf("ada: attempts %d, usage %+v, batch usage %+v, recoveries %v", ada.Attempts, ada.Usage, ada.BatchUsage, ada.Recoveries)
	}
	// bob's batch answer was off the schema: repaired live.
	if bob.Repairs != 1 || bob.Attempts != 2 || bob.BatchUsage.Total() == 0 || bob.Usage == bob.BatchUsage ||
		len(bob.Recoveries) != 1 || bob.Recoveries[0].Strategy != StrategyRepair || !bob.Recoveries[0].Success {
		t.Errorf("bob: repairs %d, attempts %d, recoveries %+v", bob.Repairs, bob.Attempts, bob.Recoveries)
	}
	// cy's line failed: made live, the failure kept as a retry.
	if cy.Attempts != 2 || cy.BatchUsage != (Usage{}) || len(cy.Recoveries) != 1 ||
		cy.Recoveries[0].Strategy != StrategyRetry || cy.Recoveries[0].Err.Kind != KindServer || !cy.Recoveries[0].Success {
		t.Errorf("cy: attempts %d, batch usage %+v, recoveries %+v", cy.Attempts, cy.BatchUsage, cy.Recoveries)
	}
	if e := asError(t, results[3].Err); e.Kind != KindBadRequest {
		t.Errorf("dee: %v", e)
	}
	var batched, live int
	for _, call := range srv.Calls() {
		if call.CustomID != "" {
			batched++
		} else {
			live++
		}
	}
	if batched != 3 || live != 2 {
		t.Errorf("server saw %d batch lines and %d live calls, want 3 and 2 (bob's repair, cy's retry)", batched, live)
	}
	if c.Usage() != ada.Usage.Add(bob.Usage).Add(cy.Usage) {
		t.Errorf("client usage %+v is not the sum of the results'", c.Usage())
	}
}

// A run that stops while its job is in flight polls the same job when it
// resumes: the server sees one job.
func TestCompleteBatchResumes(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	c, _ := newTestClient(t, srv.URL, nil)
	reqs := batchRequests("ada", "bob")

	srv.HoldBatches(true)
	ctx, cancel := context.WithCancel(t.Context())
	var id, endpoint string
	_, err := c.CompleteBatch(ctx, "intention", reqs, BatchJob{
		Submitted: func(_ context.Context, i, e string) error { id, endpoint = i, e; return nil },
		Progress: func(st BatchStatus) {
			if st.Status != "in_progress" || st.Total != 2 {
				t.Errorf("in flight: %+v", st)
			}
			cancel() // the run is killed while it waits
		},
	})
	if e := asError(t, err); e.Kind != KindCanceled || id == "" {
		t.Fatalf("err %v, id %q", err, id)
	}

	srv.HoldBatches(false)
	results, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{ID: id, Endpoint: endpoint,
		Submitted: func(context.Context, string, string) error { t.Error("a resumed job was submitted again"); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if srv.BatchesCreated() != 1 {
		t.Errorf("the server saw %d jobs, want 1", srv.BatchesCreated())
	}
	for _, r := range results {
		if r.Err != nil {
			t.Errorf("%s: %v", r.Request.EntityKey, r.Err)
		}
	}

	// A job stored against an endpoint the phase no longer has is not
	// polled elsewhere.
	if _, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{ID: id, Endpoint: "gone"}); err == nil {
		t.Error("a job of an unknown endpoint was polled")
	}
}

func TestCompleteBatchExpiredAndFailed(t *testing.T) {
	t.Parallel()
	t.Run("expired part-way", func(t *testing.T) {
		t.Parallel()
		srv := batchServer(t)
		srv.ExpireBatchesAfter(1)
		c, _ := newTestClient(t, srv.URL, nil)
		results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada", "dee"), BatchJob{})
		if err != nil {
			t.Fatal(err)
		}
		dee := results[1]
		if results[0].Err != nil || results[0].BatchUsage.Total() == 0 || dee.Err != nil || dee.BatchUsage.Total() != 0 ||
			len(dee.Recoveries) != 1 || dee.Recoveries[0].Err.Kind != KindTimeout {
			t.Errorf("ada %v; dee %v, recoveries %+v", results[0].Err, dee.Err, dee.Recoveries)
		}
	})
	t.Run("duplicate entity key", func(t *testing.T) {
		t.Parallel()
		srv := batchServer(t)
		c, _ := newTestClient(t, srv.URL, nil)
		reqs := batchRequests("ada", "ada")
		if _, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{}); err == nil || srv.BatchesCreated() != 0 {
			t.Errorf("err %v, %d batches", err, srv.BatchesCreated())
		}
	})
	t.Run("store fails", func(t *testing.T) {
		t.Parallel()
		srv := batchServer(t)
		c, _ := newTestClient(t, srv.URL, nil)
		full := errors.New("disk full")
		_, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{
			Submitted: func(context.Context, string, string) error { return full }})
		if !errors.Is(err, full) || srv.CallCount() != 0 {
			t.Errorf("err %v, %d calls: a job not stored must not be waited for", err, srv.CallCount())
		}
	})
}

// TestReadBatchOutput: an output or error file is read a line at a time:
// the first line of each custom_id sent kept (a later one reported), a
// line that is no JSON object with a custom_id counted bad, a line over
// the bound that call's failure, the file cut at its bound, secrets
// scrubbed from what is kept.
func TestReadBatchOutput(t *testing.T) {
	t.Parallel()
	sent := map[string]int{"intention:ada": 0, "intention:bob": 1, "intention:cy": 2, "intention:dee": 3}
	data := `{"id":"r1","custom_id":"intention:ada","response":{"status_code":200,"body":{"choices":[],"key":"sk-secret-1"}},"error":null}

not json
{"custom_id":""}
{"custom_id":"intention:bob","response":null,"error":{"code":"batch_expired","message":"late"}}
{"custom_id":"intention:zed","response":{"status_code":200,"body":{}}}
{"custom_id":"intention:cy","response":{"status_code":500,"body":{"error":{"message":"boom"}}}}
{"custom_id":"intention:ada","response":{"status_code":200,"body":{"second":true}}}
{"id":"r9","custom_id":"intention:dee","response":{"status_code":200,"body":{"pad":"` + strings.Repeat("x", 300) + `"}}}
`
	secrets := secretsOf([]string{"sk-secret-1"})
	f, err := readBatchOutput(strings.NewReader(data), 200, int64(len(data)), sent, secrets)
	if err != nil || f.bad != 2 || len(f.lines) != 4 || f.cut || !slices.Equal(f.again, []string{"intention:ada"}) {
		t.Fatalf("%d lines, %d bad, again %q, cut %v, %v", len(f.lines), f.bad, f.again, f.cut, err)
	}
	if l := f.lines[0]; l.CustomID != "intention:ada" || l.Response.StatusCode != 200 || string(l.Response.Body) != `{"choices":[],"key":"[redacted]"}` {
		t.Errorf("line 1 = %+v (%s)", l, l.Response.Body)
	}
	if l := f.lines[1]; l.Error == nil || l.Error.Code != "batch_expired" || l.Response != nil {
		t.Errorf("line 2 = %+v", l)
	}
	if l := f.lines[2]; l.Response.StatusCode != 500 {
		t.Errorf("line 3 = %+v", l)
	}
	if l := f.lines[3]; l.CustomID != "intention:dee" || l.unread == nil || l.unread.Kind != KindOversized || l.Response != nil {
		t.Errorf("the line over 200 bytes = %+v", l)
	}

	// Cut at its bound, the file keeps the lines read whole before it.
	f, err = readBatchOutput(strings.NewReader(data), 1000, 150, sent, Secrets{})
	if err != nil || !f.cut || len(f.lines) != 1 || f.lines[0].CustomID != "intention:ada" {
		t.Errorf("cut at 150 bytes: %+v, %v; want ada's line and cut", f, err)
	}
	// A last line without its newline is read.
	if f, err := readBatchOutput(strings.NewReader(`{"custom_id":"intention:bob"}`), 100, 100, sent, Secrets{}); err != nil || len(f.lines) != 1 || f.cut {
		t.Errorf("a last line without newline: %+v, %v", f, err)
	}
	broken := errors.New("connection reset")
	if _, err := readBatchOutput(io.MultiReader(strings.NewReader("{\n"), iotest.ErrReader(broken)), 100, 100, sent, Secrets{}); !errors.Is(err, broken) {
		t.Errorf("a read that fails: %v, want its error", err)
	}
}

func FuzzReadBatchOutput(f *testing.F) {
	f.Add([]byte(`{"custom_id":"a","response":{"status_code":200,"body":{}}}`+"\n"), 64, 1000)
	f.Add([]byte(`{"custom_id":"b","error":{"code":"x","message":"y"}}`+"\n\n{"), 16, 1000)
	f.Add([]byte(`{"custom_id":"a"}`+"\n"+`{"custom_id":"a","response":null}`+"\n"), 1000, 30)
	f.Add([]byte("\n\r\n[1,2]\nnull\n"), 3, 3)
	sent := map[string]int{"a": 0, "b": 1, "c": 2}
	f.Fuzz(func(t *testing.T, data []byte, perLine, total int) {
		perLine, total = max(perLine%4096, 1), max(total%8192, 0)
		got, err := readBatchOutput(bytes.NewReader(data), int64(perLine), int64(total), sent, Secrets{})
		if err != nil {
			t.Fatal(err)
		}
		if n := len(got.lines) + got.bad + len(got.again); n > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d lines kept, bad or again from %d lines of input", n, bytes.Count(data, []byte("\n"))+1)
		}
		if got.cut != (len(data) > total) {
			t.Fatalf("cut %v with %d bytes and a bound of %d", got.cut, len(data), total)
		}
		seen := map[string]bool{}
		for _, l := range got.lines {
			if _, ok := sent[l.CustomID]; !ok || seen[l.CustomID] {
				t.Fatalf("custom_id %q kept: not sent, or kept twice", l.CustomID)
			}
			seen[l.CustomID] = true
			if l.Response != nil && l.Response.Body != nil && !json.Valid(l.Response.Body) {
				t.Fatalf("body %q is not JSON", l.Response.Body)
			}
		}
		if got.cut || perLine < len(data) {
			return
		}
		// Whole and short enough: what a plain decode of each line keeps.
		var want []string
		for raw := range bytes.Lines(data) {
			var l batchOutputLine
			if json.Unmarshal(bytes.TrimSpace(raw), &l) == nil && !slices.Contains(want, l.CustomID) {
				if _, ok := sent[l.CustomID]; ok {
					want = append(want, l.CustomID)
				}
			}
		}
		var kept []string
		for _, l := range got.lines {
			kept = append(kept, l.CustomID)
		}
		if !slices.Equal(kept, want) {
			t.Fatalf("kept %q, a plain decode keeps %q", kept, want)
		}
	})
}

// TestCompleteBatchAdoptsLostJob: a job created by a run stopped before it
// stored the id (Submitted failed here) is found by its tag and adopted,
// never submitted again, and its answers read; a first submission lists
// nothing, and a tag no job has is submitted, tagged.
func TestCompleteBatchAdoptsLostJob(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	c, _ := newTestClient(t, srv.URL, nil)
	reqs := batchRequests("ada")
	killed := errors.New("killed before the id was stored")
	_, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{Tag: "intention/1/42",
		Submitted: func(context.Context, string, string) error { return killed }})
	if !errors.Is(err, killed) || srv.BatchesCreated() != 1 || srv.BatchLists() != 0 {
		t.Fatalf("first run: %v, %d batches, %d lists; want the job created, nothing listed", err, srv.BatchesCreated(), srv.BatchLists())
	}
	var stored string
	record := func(_ context.Context, id, _ string) error { stored = id; return nil }
	results, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{Tag: "intention/1/42", Find: true, Submitted: record})
	if err != nil || srv.BatchesCreated() != 1 || stored != "batch_1" || srv.BatchLists() == 0 {
		t.Fatalf("resumed: %v, %d batches, stored %q; want batch_1 adopted", err, srv.BatchesCreated(), stored)
	}
	if r := results[0]; r.Err != nil || r.BatchUsage.Total() == 0 || srv.CallCount() != 1 {
		t.Errorf("adopted job's answer: Err %v, batch usage %+v, %d calls; want its one line answered by the job", r.Err, r.BatchUsage, srv.CallCount())
	}
	if _, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{Tag: "intention/2/43", Find: true, Submitted: record}); err != nil ||
		srv.BatchesCreated() != 2 || stored != "batch_2" {
		t.Errorf("a tag no job has: %v, %d batches, stored %q; want batch_2 submitted", err, srv.BatchesCreated(), stored)
	}
	if _, err := c.CompleteBatch(t.Context(), "intention", reqs, BatchJob{Tag: "intention/2/43", Find: true, Submitted: record}); err != nil ||
		srv.BatchesCreated() != 2 || stored != "batch_2" {
		t.Errorf("batch_2's tag again: %v, %d batches, stored %q; want batch_2 adopted", err, srv.BatchesCreated(), stored)
	}
}

// TestSubmitBatchLostCreate: a create whose answer was lost (the server
// made the job, the client saw a 500) is not made again: the retry finds
// the job by its tag.
func TestSubmitBatchLostCreate(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	srv.LoseBatchCreates(1)
	c, _ := newTestClient(t, srv.URL, nil)
	var stored string
	results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{Tag: "intention/1/7",
		Submitted: func(_ context.Context, id, _ string) error { stored = id; return nil }})
	if err != nil || srv.BatchesCreated() != 1 || stored != "batch_1" || results[0].Err != nil {
		t.Fatalf("%v, %d batches, stored %q, %v; want the one job made by the lost create", err, srv.BatchesCreated(), stored, results[0].Err)
	}
}

// TestCompleteBatchWithoutList: a server that cannot list its batches
// (404) gets a job submitted, with a warning, rather than a run that
// cannot go on.
func TestCompleteBatchWithoutList(t *testing.T) {
	t.Parallel()
	srv := batchServer(t, openaitest.WithoutBatchList())
	c, _ := newTestClient(t, srv.URL, nil)
	results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{Tag: "intention/1/9", Find: true})
	if err != nil || srv.BatchesCreated() != 1 || srv.BatchLists() != 1 || results[0].Err != nil {
		t.Fatalf("%v, %d batches, %d lists, %v; want one list refused and one job", err, srv.BatchesCreated(), srv.BatchLists(), results[0].Err)
	}
}

// TestCompleteBatchFindsJobOnAnyEndpoint: the job a stopped run created
// is looked for on every endpoint of the phase, and polled where it is.
func TestCompleteBatchFindsJobOnAnyEndpoint(t *testing.T) {
	t.Parallel()
	a, b := batchServer(t), batchServer(t)
	cb, _ := newTestClient(t, b.URL, nil)
	killed := errors.New("killed")
	if _, err := cb.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{Tag: "intention/1/5",
		Submitted: func(context.Context, string, string) error { return killed }}); !errors.Is(err, killed) || b.BatchesCreated() != 1 {
		t.Fatalf("the stopped run: %v, %d jobs on b", err, b.BatchesCreated())
	}
	c := endpointsClient(t, nil, Endpoint{Name: "a", BaseURL: a.URL}, Endpoint{Name: "b", BaseURL: b.URL})
	var stored []string
	results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{Tag: "intention/1/5", Find: true,
		Submitted: func(_ context.Context, id, endpoint string) error { stored = append(stored, id, endpoint); return nil }})
	if err != nil || a.BatchesCreated() != 0 || b.BatchesCreated() != 1 || len(stored) != 2 || stored[0] != "batch_1" || stored[1] != "b" || a.BatchLists() != 1 {
		t.Fatalf("%v; jobs a %d, b %d, stored %q, a listed %d times; want b's batch_1 adopted after a was looked at", err, a.BatchesCreated(), b.BatchesCreated(), stored, a.BatchLists())
	}
	if results[0].Err != nil || results[0].Endpoint != "b" || b.CallCount() != 1 {
		t.Errorf("answer: %v from %q, %d calls on b", results[0].Err, results[0].Endpoint, b.CallCount())
	}
}

// TestCompleteBatchFailedJobForgotten: a job that failed as a whole is an
// error naming it, and Forget is told, so that the caller stops polling it.
func TestCompleteBatchFailedJobForgotten(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	srv.FailBatches(true)
	c, _ := newTestClient(t, srv.URL, nil)
	forgot := 0
	_, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{
		Forget: func(context.Context) error { forgot++; return nil }})
	if err == nil || !strings.Contains(err.Error(), "batch job batch_1 failed; invalid_request: the batch was refused as a whole") || forgot != 1 {
		t.Fatalf("failed job: %v, forgotten %d times; want the error and one Forget", err, forgot)
	}
	if srv.CallCount() != 0 {
		t.Errorf("%d calls made after the job failed; want the error alone", srv.CallCount())
	}
	broken := errors.New("state.db is gone")
	_, err = c.CompleteBatch(t.Context(), "intention", batchRequests("ada"), BatchJob{ID: "batch_1",
		Forget: func(context.Context) error { return broken }})
	if !errors.Is(err, broken) || !strings.Contains(err.Error(), "batch_1 failed") {
		t.Errorf("a Forget that fails: %v; want both errors", err)
	}
}

// TestBatchOutputLineOverLimit: a line of the job's output over its bound
// is that call's failure, made live, not the job's: the other lines are
// read and used; and an output file over its bound is read up to it, the
// calls it answers past that made live, the tick not failed.
func TestBatchOutputLineOverLimit(t *testing.T) {
	t.Parallel()
	// pad makes the line of custom_id id size bytes longer after its
	// custom_id; last moves it to the end of the file.
	pad := func(id string, size int, last bool) func([]byte) []byte {
		return func(out []byte) []byte {
			var kept, padded []byte
			named := []byte(`"custom_id":"` + id + `",`)
			for line := range bytes.Lines(out) {
				if bytes.Contains(line, named) {
					padded = bytes.Replace(line, named, append(named, `"pad":"`+strings.Repeat("x", size)+`",`...), 1)
					line = padded
					if last {
						continue
					}
				}
				kept = append(kept, line...)
			}
			if last {
				kept = append(kept, padded...)
			}
			return kept
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]byte) []byte
		why  string
	}{
		{"line over its bound", pad("intention:ada", 300<<10, false), "line runs over"},
		{"file over its bound", pad("intention:ada", 1<<20, true), "output file runs over"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := batchServer(t)
			srv.EditBatchOutput(tc.edit)
			c, _ := newTestClient(t, srv.URL, nil)
			results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada", "dee"), BatchJob{})
			if err != nil {
				t.Fatalf("the job failed as a whole: %v", err)
			}
			ada, dee := results[0], results[1]
			if ada.Err != nil || ada.BatchUsage.Total() != 0 || len(ada.Recoveries) != 1 || ada.Recoveries[0].Strategy != StrategyRetry ||
				ada.Recoveries[0].Err.Kind != KindOversized || !strings.Contains(ada.Recoveries[0].Err.Message, tc.why) {
				t.Errorf("ada: %v, batch usage %+v, recoveries %+v; want made live after its line %q", ada.Err, ada.BatchUsage, ada.Recoveries, tc.why)
			}
			if dee.Err != nil || dee.BatchUsage.Total() == 0 || len(dee.Recoveries) != 0 {
				t.Errorf("dee: %v, batch usage %+v, recoveries %+v; want its job answer used", dee.Err, dee.BatchUsage, dee.Recoveries)
			}
		})
	}
}

// TestBatchOutputDuplicateCustomID: an output that answers a call twice
// has the first answer used, and the repeat reported once.
func TestBatchOutputDuplicateCustomID(t *testing.T) {
	t.Parallel()
	srv := batchServer(t)
	srv.EditBatchOutput(func(out []byte) []byte {
		first, _, _ := bytes.Cut(out, []byte("\n"))
		again := bytes.ReplaceAll(first, []byte("garden"), []byte("cellar"))
		return slices.Concat(out, again, []byte("\n"), again, []byte("\n"))
	})
	var logs bytes.Buffer
	c, _ := newTestClient(t, srv.URL, func(cfg *Config) { cfg.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	results, err := c.CompleteBatch(t.Context(), "intention", batchRequests("ada", "dee"), BatchJob{})
	if err != nil {
		t.Fatal(err)
	}
	var ada map[string]any
	if err := json.Unmarshal(results[0].Output, &ada); err != nil || ada["location"] != "garden" || len(results[0].Recoveries) != 0 {
		t.Errorf("ada: %s (%v), recoveries %+v; want the first answer, from the garden", results[0].Output, err, results[0].Recoveries)
	}
	if n := strings.Count(logs.String(), "more than once"); n != 1 || !strings.Contains(logs.String(), "intention:ada") {
		t.Errorf("the repeated answer was reported %d times, want once naming intention:ada:\n%s", n, logs.String())
	}
}
